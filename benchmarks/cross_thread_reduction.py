"""Softmax, layer norm and row sums with cross-thread reductions against PyTorch, in one run.

    python benchmarks/cross_thread_reduction.py                       # H200: against torch (CUDA events)
    python benchmarks/cross_thread_reduction.py --target c --rows 256  # CPU smoke run: against numpy

Each row is one thread block (blockIdx.x); its reduction is split over 128 to
1024 threads (``sch.bind(k_1, "threadIdx.x")``), so the row max and sum of
softmax, layer norm's two row sums and the row sum are warp-shuffle all-reduces combined through shared
memory (tir/transform/lower_thread_allreduce.py). This is the hand schedule the
tuner's cross-thread rule will sample; the tuned numbers in docs/BENCHMARKS.md
(softmax 0.11x, reduction_sum 0.27x PyTorch) reduce each row on one thread.
``softmax_shared_row`` is softmax reading its row from global memory once, as
float4s, into shared memory that its three passes read.
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
from tests.codegen.cross_thread_schedules import (  # noqa: E402
    cross_thread_layer_norm,
    cross_thread_row_sum,
    cross_thread_softmax,
    softmax_row_in_shared,
)
from tuner import workloads  # noqa: E402


def softmax_schedule(rows: int, cols: int, threads: int):
    return cross_thread_softmax(threads, rows, cols).mod


def softmax_shared_row_schedule(rows: int, cols: int, threads: int):
    return softmax_row_in_shared(threads, rows, cols).mod


def layer_norm_schedule(rows: int, cols: int, threads: int):
    return cross_thread_layer_norm(threads, rows, cols).mod


def row_sum_schedule(rows: int, cols: int, threads: int):
    return cross_thread_row_sum(threads, rows, cols).mod


def _softmax64(a: np.ndarray) -> np.ndarray:
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _softmax32(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _layer_norm_torch(x, gamma, beta):
    import torch

    return torch.nn.functional.layer_norm(x, (x.shape[1],), gamma, beta, eps=1e-5)


# name: (schedule, inputs from the matrix, float64 reference, torch call, numpy call, output array)
WORKLOADS = {
    "softmax": (
        softmax_schedule,
        lambda a: [a],
        _softmax64,
        lambda a: a.softmax(1),
        _softmax32,
        np.zeros_like,
    ),
    "softmax_shared_row": (
        softmax_shared_row_schedule,
        lambda a: [a],
        _softmax64,
        lambda a: a.softmax(1),
        _softmax32,
        np.zeros_like,
    ),
    "reduction_sum": (
        row_sum_schedule,
        lambda a: [a],
        lambda a: a.astype(np.float64).sum(1),
        lambda a: a.sum(1),
        lambda a: a.sum(1),
        lambda a: np.zeros(a.shape[0], np.float32),
    ),
    "layer_norm": (
        layer_norm_schedule,
        lambda a: [a, *np.random.default_rng(1).standard_normal((2, a.shape[1]), dtype=np.float32)],
        lambda *xs: workloads.WORKLOADS["layer_norm"].reference(*(x.astype(np.float64) for x in xs))[0],
        _layer_norm_torch,
        lambda *xs: workloads.WORKLOADS["layer_norm"].reference(*xs)[0],
        np.zeros_like,
    ),
}


def check(result: np.ndarray, expected: np.ndarray, what: str) -> None:
    error = np.abs(result - expected).max() / max(np.abs(expected).max(), 1e-30)
    if error > 1e-4:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def anchor_seconds(target: str, name: str, inputs: list[np.ndarray]) -> tuple[str, float]:
    _, _, reference, torch_call, numpy_call, _ = WORKLOADS[name]
    if target == "c":
        return "numpy", median_seconds(lambda: numpy_call(*inputs))
    import torch

    tensors = [torch.from_numpy(x).cuda() for x in inputs]
    check(torch_call(*tensors).cpu().numpy(), reference(*inputs), f"torch {name}")
    return "torch", cuda_event_seconds(lambda: torch_call(*tensors))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="cuda", help="cuda (default) or c")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024, help="the tuner's default shape is 1024 x 1024")
    parser.add_argument("--threads", default="128,256,512,1024")
    parser.add_argument("--only", default="", help="the workloads whose name contains this text")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.rows, args.cols), dtype=np.float32)
    summary = []
    for name, (schedule, make_inputs, reference, _, _, output) in WORKLOADS.items():
        if args.only not in name:
            continue
        inputs = make_inputs(a)
        anchor, anchor_s = anchor_seconds(args.target, name, inputs)
        print(f"  {name:<14} {anchor:<22} {anchor_s * 1e6:9.1f} us", flush=True)
        for threads in (int(t) for t in args.threads.split(",")):
            module = build(schedule(args.rows, args.cols, threads), args.target)
            arrays = [*inputs, output(a)]
            module["main"](*arrays)
            check(arrays[-1], reference(*inputs), f"{name} with {threads} threads")
            seconds = module.benchmark("main", *arrays, repeat=7).seconds
            print(f"  {name:<14} ours, {threads:>4} threads/row  {seconds * 1e6:9.1f} us", flush=True)
            summary.append((name, threads, seconds, anchor, anchor_s))
        print(f"  device: {module.device_name}")
    print("\nratios (anchor time / ours, higher is better):")
    for name, threads, seconds, anchor, anchor_s in summary:
        print(f"  {name:<14} {threads:>4} threads/row  {anchor_s / seconds:.2f}x {anchor}")


if __name__ == "__main__":
    main()
