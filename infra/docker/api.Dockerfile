# The API. No Chromium here: POST …/screenshot only queues, and login links from this image are
# interactive only if a browser is installed (see README). The metrics app has its own image
# (metrics.Dockerfile), the render daemons theirs.
FROM oven/bun:1-debian AS deps
WORKDIR /app
COPY package.json bun.lock ./
COPY apps/api/package.json apps/api/
COPY apps/metrics/package.json apps/metrics/
COPY apps/render-daemon/package.json apps/render-daemon/
COPY libs ./libs
RUN bun install --frozen-lockfile --production

FROM oven/bun:1-debian
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# DATA_DIR (./.data) is where the server records its public base for `bun run admin` in this container.
RUN mkdir -p /app/.data && chown bun:bun /app/.data
USER bun
EXPOSE 3000
# Healthy = ready (GET /readyz: database, queue and storage usable); the daemons wait for it, since the
# API migrates the database. Orchestrators that separate the two use /healthz for liveness.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s CMD bun -e "fetch('http://127.0.0.1:3000/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["bun", "run", "apps/api"]
