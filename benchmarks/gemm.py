"""GFLOPS of the seed notebook's matmul schedules against the anchors, measured in one run.

    python benchmarks/gemm.py --target c                      # CPU: against numpy
    python benchmarks/gemm.py --target cuda --sizes 1024,4096 # H200: against cuBLAS and Triton fp32

Versions: naive (one thread per output, 16x16 threads), local blocking
(``blocking(sch, 8, 8, 8, 8, 4)``) and shared-memory blocking
(``blocking_with_shared(sch, 8, 8, 8, 8, 8)``), the notebook's own calls. Every
kernel's first result is checked against float64 numpy before it is timed. The
last lines are the ratios that matter: ours over numpy (CPU) or over cuBLAS and
Triton with TF32 off (GPU), median of repeated runs after warm-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codegen import build  # noqa: E402
from schedule import Schedule  # noqa: E402
from tests.codegen.seed_kernels import matmul_local, matmul_shared  # noqa: E402
from tuner import workloads  # noqa: E402


def naive(n: int):
    sch = Schedule(workloads.matmul(n, n, n))
    block = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
    return sch.mod


VERSIONS = {"naive": naive, "local blocking": matmul_local, "shared-memory blocking": matmul_shared}


def median_seconds(fn, repeat: int = 7, min_seconds: float = 0.05) -> float:
    fn()
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    number = max(1, int(min_seconds / max(once, 1e-7)))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return float(np.median(times))


def check(result: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> None:
    expected = a.astype(np.float64) @ b.astype(np.float64)
    error = np.abs(result - expected).max() / np.abs(expected).max()
    if error > 1e-4:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def gpu_anchors(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Seconds per matmul: cuBLAS through torch (TF32 off) and Triton fp32, timed with CUDA events."""
    import torch

    from benchmarks.triton_matmul import triton_matmul

    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    results = {}
    for name, fn in (("cuBLAS", lambda: torch.matmul(ta, tb)), ("Triton", lambda: triton_matmul(ta, tb))):
        check(fn().cpu().numpy(), a, b, name)
        results[name] = cuda_event_seconds(fn)
    return results


def cuda_event_seconds(fn, repeat: int = 20) -> float:
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(10):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / 10)
    return float(np.median(times))


def run(target: str, n: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    rows = []
    for name, make in VERSIONS.items():
        module = build(make(n), target)
        c = np.zeros((n, n), dtype=np.float32)
        module["main"](a, b, c)
        check(c, a, b, name)
        seconds = module.benchmark("main", a, b, c, repeat=7).seconds
        rows.append((name, seconds))
        print(
            f"  {n}^3 {name:<24} {seconds * 1e3:9.3f} ms {2 * n**3 / seconds / 1e9:10.1f} GFLOPS", flush=True
        )
        device = module.device_name
    if target == "c":
        anchors = {"numpy": median_seconds(lambda: a @ b)}
    else:
        anchors = gpu_anchors(a, b)
    for name, seconds in anchors.items():
        print(
            f"  {n}^3 {name:<24} {seconds * 1e3:9.3f} ms {2 * n**3 / seconds / 1e9:10.1f} GFLOPS", flush=True
        )
    print(f"  device: {device}")
    return rows, anchors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="c", help="c or cuda (Metal needs a Mac: build(mod, 'metal'))")
    parser.add_argument(
        "--sizes", default=None, help="comma-separated n for n^3 (default: c 1024, cuda 1024,4096)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1024" if args.target == "c" else "1024,4096")).split(",")]
    summary = []
    for n in sizes:
        rows, anchors = run(args.target, n)
        summary.append((n, rows, anchors))
    print_ratios(summary)


def print_ratios(
    summary: list[tuple[int, list[tuple[str, float]], dict[str, float]]], width: int = 24
) -> None:
    """The closing table: for each size and kernel, anchor seconds over ours (higher is better)."""
    print("\nratios (ours / anchor, higher is better):")
    for n, rows, anchors in summary:
        for name, seconds in rows:
            ratios = ", ".join(
                f"{seconds_a / seconds:.2f}x {anchor}" for anchor, seconds_a in anchors.items()
            )
            print(f"  {n}^3 {name:<{width}} {ratios}")


if __name__ == "__main__":
    main()
