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

- the kernel compiled to files, as the seed's ``compile_to_file``: ``Module.export``
  writes the Metal source, its launch dimensions and argument order (JSON) and a
  Swift dispatch snippet, and for C a shared library and a header; a small C++
  program then calls the library and checks its output (when ``c++`` is here).

Halide's ``brighter[x, y]`` has x innermost; in C order that is
``brighter[y, x]``. Run ``python examples/seeds/seed000_halide_metal.py``
(``--size``/``--matmul`` shrink it; the test suite runs it small).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
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


CPP_CALLER = """// Calls brighter from the exported library, as the seed's C++ host program does.
#include <cstdio>
#include <vector>
#include "brighter.h"

int main() {
    const int size = SIZE;
    std::vector<float> input(size * size), output(size * size);
    for (int i = 0; i < size * size; ++i) input[i] = 0.25f * (i % 7);
    tir_main(input.data(), output.data());
    for (int i = 0; i < size * size; ++i)
        if (output[i] != input[i] * 3.0f) { std::printf("wrong at %d\\n", i); return 1; }
    std::printf("C++ caller: brighter from libbrighter.so equals input * 3\\n");
    return 0;
}
"""


def export_and_call(sch: Schedule, size: int, folder: Path) -> None:
    """Export brighter for Metal and C, then compile and run a C++ caller of the C library."""
    files = build(sch.mod, "metal", device="sim").export(folder, "brighter")
    files += build(sch.mod, "c").export(folder, "brighter")
    print("exported:", ", ".join(sorted(f.name for f in files)))
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        print("no C++ compiler here: the C++ caller was not built")
        return
    (folder / "call_brighter.cpp").write_text(CPP_CALLER.replace("SIZE", str(size)))
    program = folder / "call_brighter"
    link = [f"-L{folder}", "-lbrighter", f"-Wl,-rpath,{folder}"]
    source = f"{program}.cpp"
    subprocess.run([compiler, "-O2", f"-I{folder}", source, "-o", str(program), *link], check=True)
    print(subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout.strip())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16, help="brighter's width and height")
    parser.add_argument("--matmul", default="4096,4096,2", help="M,K,N of the skinny matmul")
    parser.add_argument("--export", help="folder for the exported kernels (default: a temporary folder)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)

    sch = gpu_tile(brighter_program(args.size))
    sch.show(loops_only=True)
    image = rng.uniform(0, 1, (args.size, args.size)).astype("float32")
    out = np.empty_like(image)
    ran = run_everywhere(sch, [image, out], image * 3, rtol=0)
    print(f"brighter {args.size}x{args.size}: equals input * 3 on {', '.join(ran)}")
    print(build(sch.mod, "metal", device="sim").get_source())
    if args.export:
        export_and_call(sch, args.size, Path(args.export))
    else:
        with tempfile.TemporaryDirectory() as folder:
            export_and_call(sch, args.size, Path(folder))

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
