"""Softmax and row sums with cross-thread reductions against PyTorch, measured in one run.

    python benchmarks/cross_thread_reduction.py                       # H200: against torch (CUDA events)
    python benchmarks/cross_thread_reduction.py --target c --rows 256  # CPU smoke run: against numpy

Each row is one thread block (blockIdx.x); its reduction is split over 128 to
1024 threads (``sch.bind(k_1, "threadIdx.x")``), so the row max and sum of
softmax and the row sum are warp-shuffle all-reduces combined through shared
memory (tir/transform/lower_thread_allreduce.py). This is the hand schedule the
tuner's cross-thread rule will sample; the tuned numbers in docs/BENCHMARKS.md
(softmax 0.11x, reduction_sum 0.27x PyTorch) reduce each row on one thread.
Every kernel's result is checked against float64 numpy before it is timed. The
last lines are ours / anchor (higher is better).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import cuda_event_seconds, median_seconds  # noqa: E402
from codegen import build  # noqa: E402
from tests.codegen.cross_thread_schedules import cross_thread_row_sum, cross_thread_softmax  # noqa: E402


def softmax_schedule(rows: int, cols: int, threads: int):
    return cross_thread_softmax(threads, rows, cols).mod


def row_sum_schedule(rows: int, cols: int, threads: int):
    return cross_thread_row_sum(threads, rows, cols).mod


def _softmax64(a: np.ndarray) -> np.ndarray:
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


WORKLOADS = {
    "softmax": (softmax_schedule, _softmax64, lambda t: lambda: t.softmax(1), lambda a: [np.zeros_like(a)]),
    "reduction_sum": (
        row_sum_schedule,
        lambda a: a.astype(np.float64).sum(1),
        lambda t: lambda: t.sum(1),
        lambda a: [np.zeros(a.shape[0], np.float32)],
    ),
}


def check(result: np.ndarray, expected: np.ndarray, what: str) -> None:
    error = np.abs(result - expected).max() / max(np.abs(expected).max(), 1e-30)
    if error > 1e-4:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def anchor_seconds(target: str, name: str, a: np.ndarray) -> tuple[str, float]:
    reference, torch_call = WORKLOADS[name][1], WORKLOADS[name][2]
    if target == "c":
        numpy_call = {"softmax": lambda: _softmax32(a), "reduction_sum": lambda: a.sum(1)}[name]
        return "numpy", median_seconds(numpy_call)
    import torch

    tensor = torch.from_numpy(a).cuda()
    fn = torch_call(tensor)
    check(fn().cpu().numpy(), reference(a), f"torch {name}")
    return "torch", cuda_event_seconds(fn)


def _softmax32(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="cuda", help="cuda (default) or c")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024, help="the tuner's default shape is 1024 x 1024")
    parser.add_argument("--threads", default="128,256,512,1024")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.rows, args.cols), dtype=np.float32)
    summary = []
    for name, (schedule, reference, _, outputs) in WORKLOADS.items():
        anchor, anchor_s = anchor_seconds(args.target, name, a)
        print(f"  {name:<14} {anchor:<22} {anchor_s * 1e6:9.1f} us", flush=True)
        for threads in (int(t) for t in args.threads.split(",")):
            module = build(schedule(args.rows, args.cols, threads), args.target)
            arrays = [a, *outputs(a)]
            module["main"](*arrays)
            check(arrays[-1], reference(a), f"{name} with {threads} threads")
            seconds = module.benchmark("main", *arrays, repeat=7).seconds
            print(f"  {name:<14} ours, {threads:>4} threads/row  {seconds * 1e6:9.1f} us", flush=True)
            summary.append((name, threads, seconds, anchor, anchor_s))
        print(f"  device: {module.device_name}")
    print("\nratios (anchor time / ours, higher is better):")
    for name, threads, seconds, anchor, anchor_s in summary:
        print(f"  {name:<14} {threads:>4} threads/row  {anchor_s / seconds:.2f}x {anchor}")


if __name__ == "__main__":
    main()
