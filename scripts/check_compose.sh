#!/usr/bin/env bash
# Validates infra/compose.yaml with Docker Compose itself (`docker compose config`), with and without the
# monitoring profile. Exits 0 when valid, 1 when not, and 77 (skip) with the reason on stderr when no
# Docker Compose is installed. Needs no Docker daemon.
set -uo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
else
  echo "skip: no Docker Compose here (neither 'docker compose' nor 'docker-compose'); infra/compose.yaml not validated" >&2
  exit 77
fi

# The variables the file requires; placeholders are enough to validate.
export SECRET_KEY="${SECRET_KEY:-compose-check-secret-0123456789}"
status=0
for profile in "" monitoring; do
  args=(-f infra/compose.yaml)
  [ -n "$profile" ] && args+=(--profile "$profile")
  if out=$("${compose[@]}" "${args[@]}" config 2>&1 >/dev/null); then
    echo "ok: infra/compose.yaml${profile:+ (profile $profile)} is valid (${compose[*]} config)"
  else
    echo "invalid: infra/compose.yaml${profile:+ (profile $profile)}:" >&2
    echo "$out" >&2
    status=1
  fi
done
exit "$status"
