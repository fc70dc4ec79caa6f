# A GPU render host: the CPU image plus the GL/EGL/Vulkan loaders. The NVIDIA container toolkit mounts
# the driver's user-space libraries (libEGL_nvidia, the Vulkan ICD) at run time; RENDER_GPU=1 starts
# Chromium with its GPU flags (ANGLE on Vulkan) instead of SwiftShader.
# Pinned: the Bun the lockfile and the tests ran with (bump it with bun-types in package.json).
FROM oven/bun:1.4.5-debian AS deps
WORKDIR /app
COPY package.json bun.lock ./
COPY apps/api/package.json apps/api/
COPY apps/metrics/package.json apps/metrics/
COPY apps/render-daemon/package.json apps/render-daemon/
COPY libs ./libs
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4.5-debian
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium libnss3-tools fonts-noto-core fonts-noto-color-emoji fonts-noto-cjk fonts-liberation2 ca-certificates tini \
      libglvnd0 libgl1 libegl1 libgles2 libvulkan1 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/share/glvnd/egl_vendor.d /etc/vulkan/icd.d \
 && printf '{"file_format_version":"1.0.0","ICD":{"library_path":"libEGL_nvidia.so.0"}}\n' > /usr/share/glvnd/egl_vendor.d/10_nvidia.json \
 && printf '{"file_format_version":"1.0.0","ICD":{"library_path":"libGLX_nvidia.so.0","api_version":"1.3"}}\n' > /etc/vulkan/icd.d/nvidia_icd.json
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/app/.data CHROMIUM_PATH=/usr/bin/chromium RENDER_GPU=1 RENDER_CONCURRENCY=4 RENDER_METRICS_PORT=9464 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=graphics,utility,compute
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# DATA_DIR must be writable by the runtime user: without SMTP_URL newsletters are .eml files in
# DATA_DIR/outbox/, and the generated secret and local objects live there in a lone container.
RUN mkdir -p /app/.data && chown bun:bun /app/.data
VOLUME /app/.data
USER bun
EXPOSE 9464
# Ready only with a browser, a live queue connection, the database and storage (GET /readyz beside
# /metrics on RENDER_METRICS_PORT); /healthz is the liveness probe orchestrators use.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s CMD bun -e "fetch('http://127.0.0.1:9464/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bun", "run", "apps/render-daemon"]
