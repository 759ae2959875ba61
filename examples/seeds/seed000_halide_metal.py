"""Seed 000 ("Halide on Metal, first try") in our terms: brighter, its GPU tiles, and a skinny matmul.

The seed writes ``brighter[x, y] = input[x, y] * 3``, schedules it with
Halide's ``gpu_tile(x, y, xo, yo, xi, yi, 8, 8)``, prints the loop nest, runs it
on Metal, then calls a 4096x4096 by 4096x2 matmul on numpy arrays. Here:

- the same tiles in two primitives per axis (``split`` then ``bind``) and one
  ``reorder``; ``sch.show(loops_only=True)`` prints the nest as compactly as
  Halide's ``print_loop_nest``;
- the kernel built for Metal (the host simulator here; a real GPU on a Mac),
  for CUDA where a GPU and CuPy are present, and for C, each checked against
  numpy; the Metal source is printed, as the seed's debug output shows it;
- the skinny matmul on numpy arrays: C (timed) and the Metal simulator.

The seed also compiles the kernel to a file and calls it from C++; that needs
``Module.export`` (the user-experience issue), which this example does not use
yet. Halide's ``brighter[x, y]`` has x innermost; in C order that is
``brighter[y, x]``. Run ``python examples/seeds/seed000_halide_metal.py``
(``--size``/``--matmul`` shrink it; the test suite runs it small).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import tir  # noqa: E402
from codegen import build  # noqa: E402
from codegen.errors import RuntimeUnavailableError  # noqa: E402
from schedule import Schedule  # noqa: E402
from tir import T  # noqa: E402
from tuner import workloads  # noqa: E402


def brighter_program(size: int) -> tir.PrimFunc:
    @T.prim_func
    def brighter(input: T.Buffer((size, size), "float32"), brighter: T.Buffer((size, size), "float32")):
        for y, x in T.grid(size, size):
            with T.block("brighter"):
                vy, vx = T.axis.remap("SS", [y, x])
                brighter[vy, vx] = input[vy, vx] * T.float32(3)

    return brighter


def gpu_tile(func: tir.PrimFunc, tile: int = 8) -> Schedule:
    """Halide's ``gpu_tile(x, y, xo, yo, xi, yi, tile, tile)``: split and bind each axis."""
    sch = Schedule(func)
    y, x = sch.get_loops(sch.get_block("brighter"))
    yo, yi = sch.split(y, [None, tile])
    xo, xi = sch.split(x, [None, tile])
    sch.reorder(yo, xo, yi, xi)
    sch.bind(yo, "blockIdx.y")
    sch.bind(xo, "blockIdx.x")
    sch.bind(yi, "threadIdx.y")
    sch.bind(xi, "threadIdx.x")
    return sch


def skinny_matmul(M: int, K: int, N: int, target: str) -> Schedule:
    """``output[m, n] = sum_k lhs[m, k] * rhs[k, n]``; on a GPU one thread per row of the output."""
    sch = Schedule(workloads.matmul(M, N, K))
    i, j, k = sch.get_loops(sch.get_block("C"))
    if target == "c":
        sch.reorder(i, k, j)
        return sch
    io, ii = sch.split(i, [None, 64])
    sch.bind(io, "blockIdx.x")
    sch.bind(ii, "threadIdx.x")
    return sch


def run_everywhere(sch: Schedule, arrays: list[np.ndarray], expected: np.ndarray, rtol: float) -> list[str]:
    """Build for the Metal simulator, CUDA (where it runs) and C; check each against ``expected``."""
    ran = []
    for target, device in (("metal", "sim"), ("cuda", None), ("c", None)):
        rt = build(sch.mod, target, device=device) if device else build(sch.mod, target)
        arrays[-1][...] = np.nan
        try:
            rt["main"](*arrays)
        except RuntimeUnavailableError:
            continue
        np.testing.assert_allclose(arrays[-1], expected, rtol=rtol)
        ran.append(f"{target} ({rt.device_name})")
    return ran


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="brighter's width and height")
    parser.add_argument("--matmul", default="4096,4096,2", help="M,K,N of the skinny matmul")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)

    sch = gpu_tile(brighter_program(args.size))
    sch.show(loops_only=True)
    image = rng.uniform(0, 1, (args.size, args.size)).astype("float32")
    out = np.empty_like(image)
    ran = run_everywhere(sch, [image, out], image * 3, rtol=0)
    print(f"brighter {args.size}x{args.size}: equals input * 3 on {', '.join(ran)}")
    print(build(sch.mod, "metal", device="sim").get_source())

    M, K, N = (int(s) for s in args.matmul.split(","))
    lhs = rng.uniform(0, 1, (M, K)).astype("float32")
    rhs = rng.uniform(0, 1, (K, N)).astype("float32")
    expected = (lhs.astype(np.float64) @ rhs.astype(np.float64)).astype("float32")
    ran = run_everywhere(
        skinny_matmul(M, K, N, "gpu"), [lhs, rhs, np.empty((M, N), "float32")], expected, 1e-4
    )
    rt = build(skinny_matmul(M, K, N, "c").mod, "c")
    result = rt.benchmark("main", lhs, rhs, np.empty((M, N), "float32"))
    print(f"matmul {M}x{K} by {K}x{N} on numpy arrays: matches numpy on {', '.join(ran)}")
    start = time.perf_counter()
    lhs @ rhs
    numpy_ms = (time.perf_counter() - start) * 1e3
    print(
        f"C: {result.seconds * 1e3:.2f} ms, {result.gflops:.1f} GFLOPS (numpy's lhs @ rhs: {numpy_ms:.2f} ms)"
    )


if __name__ == "__main__":
    main()
