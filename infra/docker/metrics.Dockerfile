# The metrics app: the social performance collector (an hourly BullMQ job scheduler with REDIS_URL).
# Its health endpoints listen on METRICS_HEALTH_PORT (9466): GET /healthz (liveness) and GET /readyz
# (database, and Redis when the schedule runs on it).
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
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/app/.data METRICS_HEALTH_PORT=9466
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# DATA_DIR must be writable by the runtime user: without SMTP_URL newsletters are .eml files in
# DATA_DIR/outbox/, and the generated secret and local objects live there in a lone container.
RUN mkdir -p /app/.data && chown bun:bun /app/.data
VOLUME /app/.data
USER bun
EXPOSE 9466
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s CMD bun -e "fetch('http://127.0.0.1:9466/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini forwards SIGTERM: the collector finishes its pass and closes its connections.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bun", "run", "apps/metrics"]
