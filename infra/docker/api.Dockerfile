# The API. No Chromium here: POST …/screenshot only queues, and login links from this image are
# interactive only if a browser is installed (see README). The metrics app has its own image
# (metrics.Dockerfile), the render daemons theirs.
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
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/app/.data API_METRICS_PORT=9465
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# DATA_DIR (/app/.data, owned by the runtime user) is where the server records its public base for
# `bun run admin` in this container, and where newsletter mail goes as .eml files without SMTP_URL.
RUN mkdir -p /app/.data && chown bun:bun /app/.data
VOLUME /app/.data
USER bun
EXPOSE 3000 9465
# Healthy = ready (GET /readyz: database, queue and storage usable); the daemons wait for it, since the
# API migrates the database. Orchestrators that separate the two use /healthz for liveness.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s CMD bun -e "fetch('http://127.0.0.1:3000/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["bun", "run", "apps/api"]
