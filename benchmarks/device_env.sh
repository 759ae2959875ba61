# Sourced by the device scripts (benchmarks/*_gpu.sh): installs the wheels in .whl/ (lark, xgboost;
# the device machine has no network) into /tmp/site, and defines `step NAME SECONDS COMMAND...`,
# which runs COMMAND with a time limit, keeps its whole output in $OUT/NAME.txt (the folder the
# device tool brings back) and prints its last $TAIL lines (25).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp}
step() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
  echo "== $name (rc $?)"
  tail -n "${TAIL:-25}" "$OUT/$name.txt"
}
