"""Seed 003 on one core: Halide's conv_layer schedule and the tuner's best against this CPU's fp32 peak.

    python benchmarks/seed003_conv_layer.py                    # seed sizes, 32 tuning trials
    python benchmarks/seed003_conv_layer.py --trials 0         # Halide's schedule only

Everything runs on one core (``OMP_NUM_THREADS=1``, set before anything loads
OpenMP, and inherited by the tuner's workers). In the same run it measures the
core's fp32 peak with a small C microbenchmark (16 independent accumulators of
``vector_size(64)`` multiply-adds, which gcc -O3 -march=native turns into
AVX-512 ``vfmadd``s, 2 FLOPs each), then times Halide's schedule
(``examples/seeds/seed003_conv_layer.py``; on 64-byte aligned arrays, on
numpy's own, which start 16 bytes past a cache line, with the filter prefetched
by ``pragma_prefetch``, with the filter packed in the tile's order, with both,
and without the channel unroll) and the best schedule a short tuning run finds
for the same program. Each kernel's result is checked against numpy
before it is timed. FLOPs are the IR's count (1.18e10 at the seed's sizes; the
seed counts 5.9e9, a multiply-add as one). Numbers on a shared machine are
noisy, so both the peak and the kernels are timed in this process's CPU time
(``time.process_time``; one thread), which leaves out the time slices the
operating system gives other processes, and measured back to back, round after
round: a kernel's share of peak is the median over rounds of its GFLOPS over
the peak measured just before it. Another process on the same physical core
(SMT) still slows both. A third reference, the tile ceiling, runs the inner
loop of Halide's schedule (a 5x4 tile of 16-lane accumulators: per input
channel 4 filter vectors, 5 broadcasts, 20 multiply-adds) on data that stays in
L1, as often as the kernel runs it: what this instruction mix reaches on this
core when no load ever waits; then again with its filter vectors streamed
contiguously from a 256 KB slice (L2), which is the most the packed filter
can give.
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import ctypes  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tir  # noqa: E402
from codegen import build  # noqa: E402
from codegen.c.compiler import compile_library, find_compiler  # noqa: E402
from codegen.target import Target  # noqa: E402
from examples.seeds.seed003_conv_layer import SEED_SIZES, check, halide_schedule, random_inputs  # noqa: E402
from tuner import apply_best, tune, workloads  # noqa: E402

# Iterations of the input channel loop (2 channels each) that Halide's filter prefetch runs ahead:
# 1, 2 and 4 measured alike on a Zen 4 core.
PREFETCH_DISTANCE = 2
ACCUMULATORS = 16
FMA_SOURCE = f"""
typedef float float16v __attribute__((vector_size(64)));
double tir_fma_peak(long iterations) {{
  float16v acc[{ACCUMULATORS}];
  float16v scale = {{0}}, step = {{0}};
  for (int j = 0; j < {ACCUMULATORS}; ++j) acc[j] = (float16v){{0}} + (float)j;
  scale += 0.999f;
  step += 0.001f;
  for (long i = 0; i < iterations; ++i) {{
#pragma GCC unroll {ACCUMULATORS}
    for (int j = 0; j < {ACCUMULATORS}; ++j) acc[j] = acc[j] * scale + step;
  }}
  double total = 0;
  for (int j = 0; j < {ACCUMULATORS}; ++j)
    for (int l = 0; l < 16; ++l) total += acc[j][l];
  return total;
}}
"""
TILE_FLOPS = 9 * 128 * 20 * 16 * 2  # per tile: 9 * 128 input channels, 20 vector multiply-adds each
TILE_SOURCE = """
#define TILE_STEPS (9 * 128)
typedef float float16v __attribute__((vector_size(64)));
static float16v tile_filter[TILE_STEPS][4];
static float tile_input[5 * 128 + 16];
double tir_tile_ceiling(long tiles, int filter_steps) {
  double total = 0;
  for (long t = 0; t < tiles; ++t) {
    float16v acc[20];
    for (int a = 0; a < 20; ++a) acc[a] = (float16v){0} + (float)a;
    for (int step = 0; step < TILE_STEPS; ++step) {
      const float16v* f = tile_filter[step & (filter_steps - 1)];
      const float* x = tile_input + (step & 15);
#pragma GCC unroll 5
      for (int j = 0; j < 5; ++j) {
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) acc[j * 4 + k] += f[k] * x[j * 128];
      }
    }
    for (int a = 0; a < 20; ++a) total += acc[a][a % 16];
  }
  return total;
}
"""


def fma_peak_gflops(iterations: int = 20_000_000) -> float:
    """One core's fp32 GFLOPS on independent AVX-512 multiply-adds (one call, timed in CPU time)."""
    library = ctypes.CDLL(str(compile_library(FMA_SOURCE, find_compiler(Target.parse("c")))))
    library.tir_fma_peak.restype = ctypes.c_double
    library.tir_fma_peak.argtypes = [ctypes.c_long]
    library.tir_fma_peak(iterations // 10)
    return iterations * ACCUMULATORS * 16 * 2 / cpu_seconds(library.tir_fma_peak, iterations) / 1e9


def tile_ceiling_gflops(flops: int, filter_steps: int = 8) -> float:
    """GFLOPS of Halide's 5x4 inner tile for about ``flops`` FLOPs, its filter vectors read from
    ``filter_steps`` consecutive 256-byte rows (8: 2 KB, L1-resident; 1024: a 256 KB slice streamed
    contiguously from L2, as from the packed filter)."""
    library = ctypes.CDLL(str(compile_library(TILE_SOURCE, find_compiler(Target.parse("c")))))
    library.tir_tile_ceiling.restype = ctypes.c_double
    library.tir_tile_ceiling.argtypes = [ctypes.c_long, ctypes.c_int]
    tiles = max(1, flops // TILE_FLOPS)
    return tiles * TILE_FLOPS / cpu_seconds(library.tir_tile_ceiling, tiles, filter_steps) / 1e9


def cpu_seconds(function, *arguments) -> float:
    """CPU seconds of this process for one call: time slices given to other processes do not count."""
    start = time.process_time()
    function(*arguments)
    return time.process_time() - start


def measure(kernel, arrays: list, flops: int, rounds: int) -> list[tuple[float, float]]:
    """(peak GFLOPS, kernel GFLOPS) for each of ``rounds`` rounds, measured back to back in CPU time."""
    kernel(*arrays)
    return [(fma_peak_gflops(), flops / cpu_seconds(kernel, *arrays) / 1e9) for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,80,100,128,128", help="N,H,W,CI,CO")
    parser.add_argument("--trials", type=int, default=32, help="tuning trials (0: Halide's schedule only)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating peak/kernel measurements")
    parser.add_argument("--db", default=None, help="tuning records (default: a temporary file)")
    parser.add_argument("--sources", default=None, help="a folder to write each version's C source to")
    args = parser.parse_args()
    sizes = dict(zip(SEED_SIZES, (int(s) for s in args.sizes.split(","))))
    mod = workloads.conv_layer(**sizes)
    aligned, unaligned = random_inputs(mod), random_inputs(mod, alignment=0)
    print(f"conv_layer {args.sizes}: {tir.flop_count(mod):.4g} FLOPs (IR count), one core")

    versions = [
        ("Halide's schedule", halide_schedule(mod).mod, aligned),
        ("  same, numpy's arrays", halide_schedule(mod).mod, unaligned),
        ("  + filter prefetch", halide_schedule(mod, prefetch=PREFETCH_DISTANCE).mod, aligned),
        ("  + packed filter", halide_schedule(mod, pack_filter=True).mod, aligned),
        ("  + both", halide_schedule(mod, pack_filter=True, prefetch=PREFETCH_DISTANCE).mod, aligned),
        ("  channels not unrolled", halide_schedule(mod, channel_unroll=1).mod, aligned),
        ("    + packed filter", halide_schedule(mod, pack_filter=True, channel_unroll=1).mod, aligned),
    ]
    if args.trials:
        db = args.db or str(Path(tempfile.mkdtemp(prefix="seed003-")) / "tuning.db")
        start = time.perf_counter()
        result = tune(mod, "c", trials=args.trials, db=db, workload_name="conv_layer", progress=False)
        print(f"tuned {result.trials} trials ({result.errors} errors) in {time.perf_counter() - start:.0f} s")
        versions.append((f"tuner's best of {args.trials}", apply_best(mod, "c", db).mod, aligned))

    rows = []
    for number, (name, scheduled, arrays) in enumerate(versions):
        rt = build(scheduled, "c")
        if args.sources:
            Path(args.sources).mkdir(parents=True, exist_ok=True)
            (Path(args.sources) / f"version{number}.c").write_text(f"// {name.strip()}\n{rt.source}")
        rt["main"](*arrays)
        check(mod, arrays, sizes)
        arrays[-1][...] = float("nan")
        rows.append((name, measure(rt["main"], arrays, tir.flop_count(mod), args.rounds)))
    for name, steps in (("tile ceiling (L1 data)", 8), ("  filter from L2 (256 KB)", 1024)):
        pairs = [
            (fma_peak_gflops(), tile_ceiling_gflops(tir.flop_count(mod), steps)) for _ in range(args.rounds)
        ]
        rows.append((name, pairs))
    peaks = [peak for _, pairs in rows for peak, _ in pairs]
    print(f"fp32 peak of one core (FMA microbenchmark): median {statistics.median(peaks):.1f} GFLOPS")
    print(f"  (min {min(peaks):.1f}, max {max(peaks):.1f} over {len(peaks)} rounds) on {rt.device_name}")
    print(
        "  each kernel's share of peak is the median over rounds of kernel / the peak measured just before it"
    )
    print("  best: the kernel's fastest round against the highest peak of the run (for a machine whose")
    print("  clock moves between rounds)")
    for name, pairs in rows:
        gflops = statistics.median(g for _, g in pairs)
        share = statistics.median(g / peak for peak, g in pairs)
        best = max(g for _, g in pairs) / max(peaks)
        seconds = tir.flop_count(mod) / gflops / 1e9
        print(
            f"{name:28s} {seconds * 1e3:7.1f} ms {gflops:7.1f} GFLOPS {100 * share:5.1f}% of peak"
            f" (best {100 * best:5.1f}%)"
        )


if __name__ == "__main__":
    main()
