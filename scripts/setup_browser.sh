#!/usr/bin/env bash
# The real-browser test's system packages: Debian's chromium and chromedriver (same version, from
# the distribution; selenium itself is pinned in requirements.txt). Installs them with apt-get when
# missing (as root, or through sudo); does nothing when both are present.
# Usage: scripts/setup_browser.sh        (make browser-test runs it)
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "[setup-browser] missing ${need[*]} and no apt-get: install Chromium and a matching chromedriver," \
         "put both on PATH as 'chromium' and 'chromedriver'" >&2
    exit 1
  fi
  SUDO=()
  [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  echo "[setup-browser] apt-get install ${need[*]}"
  t0=$(date +%s)
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null || {
    "${SUDO[@]}" apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
  }
  echo "[setup-browser] installed in $(( $(date +%s) - t0 )) s"
fi
echo "[setup-browser] $(chromium --version 2>/dev/null | head -1); $(chromedriver --version | head -1)"
