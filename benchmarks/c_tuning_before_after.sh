#!/usr/bin/env bash
# 64 trials of matmul 512^3 on the C target, a revision before a change against this checkout, with
# the same command alternated seed by seed (issue 13's C target; docs/BENCHMARKS.md, "C, third round").
#
#     bash benchmarks/c_tuning_before_after.sh d374a70          # from the repository root
#     run(command="bash benchmarks/c_tuning_before_after.sh d374a70", carry=[".raycarry"])   # device
#
# Each run gets an empty compiler cache (TIR_CACHE_DIR) and database, so nothing is reused between
# runs. Prints each run's last lines: the best GFLOPS found and the wall time split (cost model loop,
# waiting for builds and measurements, building summed over the workers). On the device machine,
# whose Python lacks lark and xgboost, .raycarry/site.tar.xz (benchmarks/make_raycarry.sh) supplies
# them. SEEDS (default "0 1 2 3") and PY (default python3) can be set.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${1:?usage: c_tuning_before_after.sh BEFORE_REVISION}
PY=${PY:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -f .raycarry/site.tar.xz ] && ! "$PY" -c "import lark, xgboost" 2>/dev/null; then
    mkdir -p "$WORK/site" && tar -xJf .raycarry/site.tar.xz -C "$WORK/site"
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
fi
mkdir -p "$WORK/before" && git archive "$BEFORE" | tar -x -C "$WORK/before"
AFTER=$PWD
nproc
for seed in ${SEEDS-0 1 2 3}; do
    for side in before after; do
        tree=$AFTER
        [ "$side" = before ] && tree=$WORK/before
        echo "== $side ($([ "$side" = before ] && echo "$BEFORE" || git rev-parse --short HEAD)), seed $seed"
        (cd "$tree" && TIR_CACHE_DIR="$WORK/cache-$side-$seed" "$PY" -m tuner.cli tune matmul \
            --shape 512,512,512 --trials 64 --seed "$seed" --db "$WORK/$side-$seed.db" 2>&1 | tail -4)
    done
done
