#!/usr/bin/env bash
# The real-browser test's system packages: Debian's chromium and chromedriver (same version, from
# the distribution; selenium itself is pinned in requirements.txt). Installs them with apt-get when
# missing (as root, or through sudo); does nothing when both are present.
# Usage: scripts/setup_browser.sh             (make browser-test: a browser it cannot install is an error)
#        scripts/setup_browser.sh --optional  (make test: where it cannot install them — no apt-get, not
#            root and no password-less sudo, apt-get failing — it says so and exits 0, and the browser
#            test skips; with INFERQA_REQUIRE_BROWSER=1, as .ci/run sets it, that is an error again)
set -euo pipefail
optional=0
case "${1:-}" in
  "") ;;
  --optional) optional=1 ;;
  *) echo "usage: $0 [--optional]" >&2; exit 2 ;;
esac
[ "${INFERQA_REQUIRE_BROWSER:-}" != 1 ] || optional=0

# $1: why the browser cannot be installed here
give_up() {
  if [ "$optional" -eq 1 ]; then
    echo "[setup-browser] $1; going on without a browser: the browser test (tests/test_browser_lab.py) skips" >&2
    exit 0
  fi
  echo "[setup-browser] $1" >&2
  exit 1
}

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 ||
    give_up "missing ${need[*]} and no apt-get: install Chromium and a matching chromedriver, put both on PATH as 'chromium' and 'chromedriver'"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || give_up "missing ${need[*]}, not root and no sudo: install them as root (apt-get install ${need[*]})"
    if [ "$optional" -eq 1 ]; then  # never wait for a password inside make test
      sudo -n true 2>/dev/null || give_up "missing ${need[*]} and sudo needs a password (make browser-test asks for it)"
      SUDO=(sudo -n)
    else
      SUDO=(sudo)
    fi
  fi
  apt_install() {
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
  }
  echo "[setup-browser] apt-get install ${need[*]}"
  t0=$(date +%s)
  apt_install || { "${SUDO[@]}" apt-get update -q >/dev/null && apt_install; } ||
    give_up "apt-get install ${need[*]} failed"
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 ||
    give_up "apt-get installed ${need[*]}, but 'chromium' and 'chromedriver' are still not both on PATH"
  echo "[setup-browser] installed in $(( $(date +%s) - t0 )) s"
fi
echo "[setup-browser] $(chromium --version 2>/dev/null | head -1); $(chromedriver --version | head -1)"
