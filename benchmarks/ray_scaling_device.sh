#!/usr/bin/env bash
# On the device machine (16 cores, no network): unpack .raycarry/site.tar.xz (made by
# benchmarks/make_raycarry.sh) and measure candidates per minute through Ray with 1, 2, 4, 8
# workers on the C target (docs/BENCHMARKS.md). Through the device tool, from the repository root:
#   run(command="bash benchmarks/ray_scaling_device.sh", carry=[".raycarry"])
set -euo pipefail
cd "$(dirname "$0")/.."
SITE=$(mktemp -d)
tar -xJf .raycarry/site.tar.xz -C "$SITE"
export PYTHONPATH="$SITE:$PWD"
export RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
python3 -c "import ray, lark, xgboost; print('ray', ray.__version__)"
python3 benchmarks/ray_scaling.py --workers "${WORKERS:-1,2,4,8}" --size "${SIZE:-128}" \
    --per-worker "${PER_WORKER:-24}" | tee "${OUT:-/tmp}/ray_scaling.txt"
