"""fp32 matmul hand schedules (software pipelines, register fragments) against cuBLAS and Triton.

    python benchmarks/pipeline_matmul.py                    # on the GPU machine: 1024^3 and 4096^3
    python benchmarks/pipeline_matmul.py --sizes 2048 --only frag

The hand schedule of tests/codegen/pipeline_schedules.py (block tile of rows x cols
outputs, one register tile of reg x reg (or reg x reg_cols) per thread, A and B tiles
of depth k copied to shared memory with cp.async, a local accumulator tile) in the
variants of SCHEDULES: the first session's tilings without and with pipelines; the
``fragments`` variants (per-k float4 register fragments read from shared tiles with
A transposed and a thread's rows spread in float4 groups, float4 C stores) at
several tilings and depths, once without the spread (A only transposed); and
"frag B": a fragment of B only (spread), A copied and read as without fragments.
A variant the GPU cannot hold (shared memory, registers)
prints why and is skipped. Every kernel's first result is checked against float64
numpy before it is timed (the runtime's benchmark: CUDA events, median of repeats);
the anchors are torch.matmul with TF32 off (cuBLAS) and Triton fp32
(``input_precision="ieee"``), timed with CUDA events in the same process. The last
lines are the ratios.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import check, gpu_anchors, print_ratios  # noqa: E402
from codegen import BuildError, build  # noqa: E402
from tests.codegen.pipeline_schedules import pipelined_matmul  # noqa: E402

# Fragments of B only: A copied with 16-byte cp.async and read row-major (nvcc's float4 along k).
FRAGMENTS_OF_B = dict(fragments=True, transpose_a=False)
# name: pipelined_matmul's keyword arguments (rows x cols x depth, reg per thread, stages)
SCHEDULES = {
    "64x64x16 r4, no pipeline": dict(rows=64, cols=64, depth=16, reg=4, stages=1),
    "64x64x16 r4, 2 stages": dict(rows=64, cols=64, depth=16, reg=4, stages=2),
    "128x128x8 r8, 3 stages": dict(rows=128, cols=128, depth=8, reg=8, stages=3),
    "64x64x16 r4, 3 stages, frag": dict(rows=64, cols=64, depth=16, reg=4, stages=3, fragments=True),
    "64x64x8 r8, 3 stages, frag": dict(rows=64, cols=64, depth=8, reg=8, stages=3, fragments=True),
    "64x64x8 r8, 4 stages, frag": dict(rows=64, cols=64, depth=8, reg=8, stages=4, fragments=True),
    "64x64x16 r8, 2 stages, frag": dict(rows=64, cols=64, depth=16, reg=8, stages=2, fragments=True),
    "64x64x16 r8, 3 stages, frag": dict(rows=64, cols=64, depth=16, reg=8, stages=3, fragments=True),
    "64x64x32 r8, 2 stages, frag": dict(rows=64, cols=64, depth=32, reg=8, stages=2, fragments=True),
    "128x64x8 r8, 3 stages, frag": dict(rows=128, cols=64, depth=8, reg=8, stages=3, fragments=True),
    "128x64x16 r8, 3 stages, frag": dict(rows=128, cols=64, depth=16, reg=8, stages=3, fragments=True),
    "128x128x8 r8, 2 stages, frag": dict(rows=128, cols=128, depth=8, reg=8, stages=2, fragments=True),
    "128x128x8 r8, 3 stages, frag": dict(rows=128, cols=128, depth=8, reg=8, stages=3, fragments=True),
    "128x128x8 r8, 3 stages, frag, no spread": dict(
        rows=128, cols=128, depth=8, reg=8, stages=3, fragments=True, spread=False
    ),
    "128x128x16 r8, 2 stages, frag": dict(rows=128, cols=128, depth=16, reg=8, stages=2, fragments=True),
    "64x64x16 r4, 2 stages, frag B": dict(rows=64, cols=64, depth=16, reg=4, stages=2, **FRAGMENTS_OF_B),
    "64x64x8 r8, 3 stages, frag B": dict(rows=64, cols=64, depth=8, reg=8, stages=3, **FRAGMENTS_OF_B),
    "64x64x16 r8, 3 stages, frag B": dict(rows=64, cols=64, depth=16, reg=8, stages=3, **FRAGMENTS_OF_B),
    "128x128x8 r8, 3 stages, frag B": dict(rows=128, cols=128, depth=8, reg=8, stages=3, **FRAGMENTS_OF_B),
}
WIDTH = max(map(len, SCHEDULES))


def run(n: int, names: list[str]) -> tuple[list[tuple[str, float]], dict[str, float]]:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    rows = []
    for name in names:
        options = SCHEDULES[name]
        if n % options["rows"] or n % options["cols"]:
            continue
        try:
            module = build(pipelined_matmul(n, **options), "cuda")
            c = np.zeros((n, n), dtype=np.float32)
            module["main"](a, b, c)
        except BuildError as error:
            print(f"  {n}^3 {name:<{WIDTH}} skipped: {str(error).splitlines()[0]}", flush=True)
            continue
        check(c, a, b, name)
        seconds = module.benchmark("main", a, b, c, repeat=7).seconds
        rows.append((name, seconds))
        _print_row(n, name, seconds)
    anchors = gpu_anchors(a, b)
    for name, seconds in anchors.items():
        _print_row(n, name, seconds)
    print(f"  device: {module.device_name}")
    return rows, anchors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1024,4096", help="comma-separated n for n^3")
    parser.add_argument("--only", default="", help="run the schedules whose name contains this text")
    args = parser.parse_args()
    names = [name for name in SCHEDULES if args.only in name]
    summary = [(n, *run(n, names)) for n in (int(s) for s in args.sizes.split(","))]
    print_ratios(summary, width=WIDTH)


def _print_row(n: int, name: str, seconds: float) -> None:
    print(
        f"  {n}^3 {name:<{WIDTH}} {seconds * 1e3:9.3f} ms {2 * n**3 / seconds / 1e12:7.2f} TFLOPS", flush=True
    )


if __name__ == "__main__":
    main()
