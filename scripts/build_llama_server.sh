#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (CPU only, Release) from the llama.cpp tree vendored in the
# llama-cpp-python source distribution pinned in requirements.txt, for benchmarks/server_throughput.py.
#
#   scripts/build_llama_server.sh            # or: make llama-server
#   nice -n 19 scripts/build_llama_server.sh # while something else needs the CPU
#
# Output: build/llama-server/bin/llama-server (build/ is ignored by git). Idempotent: does nothing
# when that binary exists and runs; delete build/llama-server/ to rebuild. Needs network access to
# PyPI (the sdist) and, only if cmake or a C++ compiler is missing, Debian (apt-get).
# Not part of `make test` or CI: the compile takes tens of minutes on 2 cores.
# Environment: JOBS (parallel compile jobs, default: number of cores), PYTHON (default .venv/bin/python
# if present, else python3), LLAMA_SERVER_DIR (default build/llama-server).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${LLAMA_SERVER_DIR:-$ROOT/build/llama-server}
BIN=$OUT/bin/llama-server
JOBS=${JOBS:-$(nproc)}
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python3; fi
fi
t0=$(date +%s)

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "[llama-server] $BIN exists ($("$BIN" --version 2>&1 | grep -m1 -i version || true)); nothing to do"
  exit 0
fi

# the llama-cpp-python version pinned in requirements.txt (e.g. llama_cpp_python[server]==0.3.36)
VERSION=$(sed -n -E 's/^llama[-_]cpp[-_]python(\[[^]]*\])?==([^[:space:]#]+).*/\2/p' "$ROOT/requirements.txt" | head -1)
if [ -z "$VERSION" ]; then
  echo "[llama-server] no pinned llama-cpp-python==<version> in requirements.txt" >&2
  exit 1
fi

# build tools: from Debian when missing
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
{ command -v c++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1; } || missing+=(build-essential)
if [ ${#missing[@]} -gt 0 ]; then
  echo "[llama-server] installing ${missing[*]} with apt-get"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q cmake build-essential
fi

# the sdist and its vendored llama.cpp tree
SRC=$OUT/src
SDIST_DIR=$SRC/llama_cpp_python-$VERSION
LLAMA_CPP=$SDIST_DIR/vendor/llama.cpp
find_sdist() {
  for f in "$SRC/llama_cpp_python-$VERSION.tar.gz" "$SRC/llama-cpp-python-$VERSION.tar.gz"; do
    if [ -f "$f" ]; then echo "$f"; return 0; fi
  done
  return 0
}
if [ ! -f "$LLAMA_CPP/CMakeLists.txt" ]; then
  mkdir -p "$SRC"
  TARBALL=$(find_sdist)
  if [ -z "$TARBALL" ]; then
    echo "[llama-server] downloading the llama-cpp-python $VERSION source distribution"
    # --no-binary for this package only: ":all:" would also compile its build backend's whole
    # dependency chain from source just to read the sdist's metadata
    "$PYTHON" -m pip download --disable-pip-version-check -q --no-binary llama-cpp-python --no-deps \
      --dest "$SRC" "llama-cpp-python==$VERSION"
    TARBALL=$(find_sdist)
  fi
  if [ -z "$TARBALL" ]; then
    echo "[llama-server] pip download left no llama-cpp-python $VERSION .tar.gz in $SRC" >&2
    exit 1
  fi
  echo "[llama-server] unpacking $TARBALL"
  tar -xzf "$TARBALL" -C "$SRC"
  # the archive's top folder may be spelt with dashes
  [ -d "$SDIST_DIR" ] || mv "$SRC/llama-cpp-python-$VERSION" "$SDIST_DIR"
  if [ ! -f "$LLAMA_CPP/CMakeLists.txt" ]; then
    echo "[llama-server] $TARBALL has no vendor/llama.cpp/CMakeLists.txt" >&2
    exit 1
  fi
fi
echo "[llama-server] llama.cpp tree: $LLAMA_CPP"

# configure and build only the llama-server target (static libraries, CPU only, Release, -march=native).
# LLAMA_CURL=OFF: no libcurl (newer llama.cpp trees no longer use it and ignore the option, with a warning);
# HTTPS support uses OpenSSL when cmake finds it (not needed on 127.0.0.1).
BUILD=$OUT/cmake
cmake -S "$LLAMA_CPP" -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_CURL=OFF \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
echo "[llama-server] compiling with $JOBS jobs"
cmake --build "$BUILD" --config Release --target llama-server -j "$JOBS"

built=$(find "$BUILD" -type f -name llama-server -perm -u+x -print -quit)
if [ -z "$built" ]; then
  echo "[llama-server] the build produced no llama-server binary under $BUILD" >&2
  exit 1
fi
mkdir -p "$OUT/bin"
cp "$built" "$BIN"
"$BIN" --version 2>&1 | head -3 || true
echo "[llama-server] built $BIN in $(( $(date +%s) - t0 )) s"
