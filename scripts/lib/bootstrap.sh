# Sourced by scripts/start and scripts/test: installs what a fresh machine lacks (Bun, dependencies, Chromium,
# emoji and CJK fonts).
# shellcheck shell=bash

log() { printf '\033[36m[setup]\033[0m %s\n' "$*" >&2; }

ensure_bun() {
  if command -v bun >/dev/null 2>&1; then return; fi
  local global_bin
  global_bin="$(npm prefix -g 2>/dev/null)/bin"
  export PATH="$global_bin:$PWD/.tools/node_modules/.bin:$PATH"
  if command -v bun >/dev/null 2>&1; then return; fi
  log "installing Bun through npm"
  if ! npm install -g bun@1 >&2; then
    log "global npm install refused; installing Bun into .tools/"
    npm install --prefix "$PWD/.tools" bun@1 >&2
  fi
  hash -r
  command -v bun >/dev/null 2>&1 || { echo "could not install Bun through npm" >&2; exit 1; }
  log "using $(command -v bun) ($(bun --version))"
}

ensure_deps() {
  if [ ! -d node_modules ] || [ bun.lock -nt node_modules/.bun-installed ]; then
    log "installing dependencies (bun install --frozen-lockfile)"
    bun install --frozen-lockfile >&2
    touch node_modules/.bun-installed
  fi
}

# Chromium for screenshots and browser tests: Debian's package, installed through apt where we are root;
# with certutil (libnss3-tools), which gives the browsers the extra CAs of NODE_EXTRA_CA_CERTS.
ensure_chromium() {
  if ! command -v certutil >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing certutil (libnss3-tools) through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnss3-tools || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnss3-tools)) >/dev/null 2>&1 \
      || log "apt could not install libnss3-tools; browsers will not trust NODE_EXTRA_CA_CERTS"
  fi
  if [ -n "${CHROMIUM_PATH:-}" ] || command -v chromium >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; then
    ensure_headless_shell
    return
  fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing Chromium and its headless shell through apt"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-headless-shell) \
      >/dev/null 2>&1 || log "apt could not install chromium; screenshots will answer 501 NOT_CONFIGURED"
  else
    log "no Chromium and not root: screenshots will answer 501 NOT_CONFIGURED"
  fi
}

# Debian's headless shell beside its Chromium: the render daemon films with it, a third less CPU per
# page (decision 1214); without it films use Chromium itself.
ensure_headless_shell() {
  [ -x /usr/lib/chromium/chromium-headless-shell ] && return
  dpkg -s chromium >/dev/null 2>&1 || return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing chromium-headless-shell through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell)) >/dev/null 2>&1 \
      || log "apt could not install chromium-headless-shell; films use Chromium itself"
  fi
}

# Fonts a filmed page may need beyond DejaVu/Liberation: colour emoji and Chinese/Japanese/Korean (Noto),
# through apt where we are root; without them such text is drawn as empty boxes and the film warns.
ensure_fonts() {
  if fc-list 2>/dev/null | grep -q "Noto Color Emoji" && fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then return; fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing emoji and CJK fonts through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji fonts-noto-cjk || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-color-emoji fonts-noto-cjk)) >/dev/null 2>&1 \
      || log "apt could not install fonts-noto-color-emoji/fonts-noto-cjk; such text will be filmed as boxes"
  else
    log "no emoji/CJK fonts and not root: such text will be filmed as boxes (the film warns)"
  fi
}

# FFmpeg (with ffprobe) for device clips: Debian's package, through apt where we are root (as Chromium).
# FFMPEG_PATH names another binary; without one, clip requests answer 501 NOT_CONFIGURED.
ensure_ffmpeg() {
  if [ -n "${FFMPEG_PATH:-}" ] || command -v ffmpeg >/dev/null 2>&1; then return; fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing FFmpeg through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg)) >/dev/null 2>&1 \
      || log "apt could not install ffmpeg; device clips will answer 501 NOT_CONFIGURED"
  else
    log "no FFmpeg and not root: device clips will answer 501 NOT_CONFIGURED"
  fi
}

# PgBouncer for the tests that run the API, webhooks and newsletters through a transaction-mode pooler
# (CONTRACT "Many render hosts on one database"): Debian's package, through apt where we are root. Each
# test starts a PgBouncer of its own on a free loopback port; without one those tests are skipped.
ensure_pgbouncer() {
  if [ -n "${PGBOUNCER_PATH:-}" ] || command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then return; fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing PgBouncer through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer)) >/dev/null 2>&1 \
      || log "apt could not install pgbouncer; the tests through a connection pooler are skipped"
  else
    log "no PgBouncer and not root: the tests through a connection pooler are skipped"
  fi
}

# promtool (Debian's `prometheus` package) for the test that lints the API's and the render daemon's
# GET /metrics with `promtool check metrics` (decision 1523): through apt where we are root; without it
# that test is skipped, saying why.
ensure_promtool() {
  if command -v promtool >/dev/null 2>&1; then return; fi
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    log "installing promtool (prometheus) through apt"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus || (apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus)) >/dev/null 2>&1 \
      || log "apt could not install prometheus; the promtool check of /metrics is skipped"
  else
    log "no promtool and not root: the promtool check of /metrics is skipped"
  fi
}
