#!/usr/bin/env bash
# The GPU smoke check in one go (bench/gpu_smoke.py: tiny training runs, the networks, the solvers and a Go
# match on cuda against the cpu, and a speed line; about 5 minutes on one CUDA GPU).
#
#   bash bench/gpu_smoke.sh [--wheels DIR] [gpu_smoke.py flags, e.g. --out docs/gpu_smoke.txt]
#
# Uses the python3 on PATH, which must already have torch with CUDA. --wheels DIR installs the project's
# other requirements from the wheel files in DIR (no index, nothing downloaded); without it they must be
# installed already. On a machine without a GPU it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--wheels" ]; then
  if [ -z "${2:-}" ] || [ ! -d "$2" ]; then
    echo "gpu_smoke.sh: --wheels needs a folder of wheel files" >&2
    exit 2
  fi
  grep -v '^torch' requirements.txt > "${TMPDIR:-/tmp}/gpu_smoke_requirements.txt"
  python3 -m pip install -q --no-index --find-links "$2" -r "${TMPDIR:-/tmp}/gpu_smoke_requirements.txt"
  shift 2
fi
exec python3 bench/gpu_smoke.py "$@"
