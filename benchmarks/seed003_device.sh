#!/usr/bin/env bash
# Seed 003 (issue 17) on one core of the GPU machine's host CPU (16-core Intel Xeon, AVX-512), < 8 minutes:
#   bash benchmarks/seed003_device.sh
# Runs benchmarks/seed003_conv_layer.py (the FMA peak; Halide's schedule on 64-byte aligned arrays and on
# numpy's, with the filter prefetched, packed, both, without the channel unroll (Halide's own output, the
# seed says) with and without the packed filter; the tuner's best of 64 trials; the tile
# ceiling on L1 data and with its filter streamed from L2; every kernel checked against numpy first),
# then reads gcc's assembly of each version's hottest loop (the basic block with the most FMAs): FMAs,
# loads, broadcasts, stack accesses, register moves, prefetches, instructions.
# Installs nothing from the network: lark and xgboost come as wheels in .whl/. Output lands in $OUT.
set -u
source "$(dirname "$0")/device_env.sh"
{ lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3|Flags" | cut -c1-200; gcc --version | head -1; uptime; } \
  | tee "$OUT/machine.txt"
TAIL=20 step seed003 460 python3 benchmarks/seed003_conv_layer.py --trials 64 --rounds 7 --sources "$OUT/sources"
echo "== hottest loop of each version (gcc -O3 -march=native -ffp-contract=fast -fira-region=one -S)"
for source in "$OUT"/sources/*.c; do  # the assembly stays in /tmp: the device tool brings back few files
  assembly="/tmp/$(basename "${source%.c}").s"
  gcc -O3 -march=native -std=c11 -fPIC -ffp-contract=fast -fira-region=one -S -o "$assembly" "$source"
  python3 benchmarks/hot_loop_asm.py "$assembly" "$(head -1 "$source")"
done
