"""fp32 matmul with and without a software pipeline (cp.async on CUDA sm_80+), against cuBLAS and Triton.

    python benchmarks/pipeline_matmul.py                    # on the GPU machine: 1024^3 and 4096^3
    python benchmarks/pipeline_matmul.py --sizes 2048 --tiles 128

The hand schedule of tests/codegen/pipeline_schedules.py (block tile of rows x cols
outputs, one register tile of reg x reg per thread, A and B tiles of depth k copied
to shared memory with float4 fetches, a local accumulator tile) at 1, 2, 3 and 4
pipeline stages with asynchronous copies, and 3 stages with synchronous copies, for
two tilings: 64x64x16 with 4x4 per thread and 128x128x8 with 8x8 per thread. Every
kernel's first result is checked against float64 numpy before it is timed (the
runtime's benchmark: CUDA events, median of repeats); the anchors are
torch.matmul with TF32 off (cuBLAS) and Triton fp32 (``input_precision="ieee"``),
timed with CUDA events in the same process. The last lines are the ratios.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import check, gpu_anchors, print_ratios  # noqa: E402
from codegen import build  # noqa: E402
from tests.codegen.pipeline_schedules import pipelined_matmul  # noqa: E402

# name: (rows, cols, depth, reg)
TILINGS = {"64": (64, 64, 16, 4), "128": (128, 128, 8, 8)}
# name: (stages, async copies)
PIPELINES = {
    "no pipeline": (1, False),
    "2 stages, cp.async": (2, True),
    "3 stages, cp.async": (3, True),
    "4 stages, cp.async": (4, True),
    "3 stages, sync copies": (3, False),
}


def run(n: int, tilings: list[str]) -> tuple[list[tuple[str, float]], dict[str, float]]:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    rows = []
    for tiling in tilings:
        tile_rows, tile_cols, depth, reg = TILINGS[tiling]
        for pipeline, (stages, asynchronous) in PIPELINES.items():
            name = f"{tile_rows}x{tile_cols}x{depth} {pipeline}"
            mod = pipelined_matmul(n, stages, asynchronous, 4, tile_rows, tile_cols, depth, reg)
            module = build(mod, "cuda")
            c = np.zeros((n, n), dtype=np.float32)
            module["main"](a, b, c)
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
    parser.add_argument("--tiles", default="64,128", help=f"comma-separated tilings of {sorted(TILINGS)}")
    args = parser.parse_args()
    tilings = args.tiles.split(",")
    summary = [(n, *run(n, tilings)) for n in (int(s) for s in args.sizes.split(","))]
    print_ratios(summary, width=36)


def _print_row(n: int, name: str, seconds: float) -> None:
    print(f"  {n}^3 {name:<36} {seconds * 1e3:9.3f} ms {2 * n**3 / seconds / 1e12:7.2f} TFLOPS", flush=True)


if __name__ == "__main__":
    main()
