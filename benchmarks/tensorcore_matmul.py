"""float16 and bfloat16 matmuls on tensor cores: our schedules against cuBLAS (torch.matmul) and Triton.

    python benchmarks/tensorcore_matmul.py                      # GPU machine: 1024^3 and 4096^3
    python benchmarks/tensorcore_matmul.py --sizes 2048 --configs "4,4,2/2,2;mma:4,8,2/2,2/2" --trials 0

For each dtype (``--dtypes``), C (float32) = A @ B with A, B of that dtype and
products accumulated in float32, for every tile configuration in ``--configs``
(tuner/space/tensor_core.py's ``tensorized_matmul``): fragments of C per warp along M,
N and per k step, then warps per thread block along M, N, then optionally pipeline
stages, each optionally prefixed by its unit (``wmma:`` WMMA 16x16x16, ``mma:``
mma.sync m16n8k16 with ldmatrix; no prefix: both). A configuration without stages
fetches 2-element vectors into unpadded shared tiles; one with stages is the
CUTLASS-style staging: 16-byte fetches (8 halfs a thread, cp.async) in a software
pipeline of that many stages over the k steps, shared rows padded for conflict-free
ldmatrix; a fourth field picks how warps load fragments (``step``, ``k``, ``k-double``:
tensorize_matmul's ``fragment_loads``). With ``--trials N`` (default 64; 0 skips it)
the workload that ``tir tune matmul --dtype D`` tunes is tuned too (float16: a float16
C, WMMA candidates; bfloat16: a float32 C, mma.sync candidates), and its best is
compared the same way.
Every kernel's result is checked against float64 numpy before it is timed.
cuBLAS gets the same operands through ``torch.matmul`` (its C in the input dtype);
Triton's kernel is benchmarks/triton_matmul.py's with a float32 C.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import cuda_event_seconds  # noqa: E402
from codegen import build  # noqa: E402
from tests.codegen.tensor_core_schedules import mixed_matmul  # noqa: E402
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits  # noqa: E402
from tuner import tune, workloads  # noqa: E402
from tuner.space.tensor_core import tensorized_matmul  # noqa: E402

SHORT = {"float16": "fp16", "bfloat16": "bf16"}
UNITS = {"wmma": ("cuda", "WMMA"), "mma": ("cuda-mma", "mma.sync")}
# Configurations [UNIT:]FRAGS_M,FRAGS_N,FRAGS_K/WARPS_M,WARPS_N[/STAGES[/FRAGMENT_LOADS]]: the pipelined
# ones tile blocks of 128x128, 256x128 and 128x256 (64x64 a warp; over 48 KB of shared memory from 3
# stages on: dynamic shared memory), k steps of 32 or 64, fragments loaded per step or per k fragment,
# double-buffered or not (tensorize_matmul's fragment_loads), and 64x128, 64x64 blocks (1024^3:
# enough blocks).
PIPELINED_CONFIGS = (
    "mma:4,8,2/2,2/3;mma:4,8,2/2,2/3/k-double;mma:4,8,4/2,2/3/k;mma:4,8,4/2,2/3/k-double;"
    "mma:4,8,2/2,2/4/k-double;mma:4,8,2/4,2/3;mma:4,8,2/2,4/3/k-double;mma:2,8,2/2,2/3;mma:2,8,2/2,2/3/k-double;wmma:4,4,2/2,2/3;"
    "wmma:4,4,2/2,2/3/k-double;wmma:4,4,4/2,2/3/k-double;wmma:2,4,2/2,2/3;wmma:2,4,2/2,2/3/k-double;"
    "wmma:2,2,2/2,2/4"
)
CONFIGS = "2,2,1/1,1;2,2,2/2,2;2,4,2/4,2;4,4,2/2,2;4,2,2/2,4;" + PIPELINED_CONFIGS


def operands(n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Random A and B as the runtime takes them (bfloat16 as uint16 bit patterns)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)) - 0.5, rng.random((n, n)) - 0.5
    if dtype == "bfloat16":
        return to_bfloat16_bits(a), to_bfloat16_bits(b)
    return a.astype(dtype), b.astype(dtype)


def values(x: np.ndarray, dtype: str) -> np.ndarray:
    return from_bfloat16_bits(x).astype(np.float64) if dtype == "bfloat16" else x.astype(np.float64)


def check(result: np.ndarray, expected: np.ndarray, what: str) -> None:
    error = np.abs(values(result, str(result.dtype)) - expected).max() / np.abs(expected).max()
    if error > 5e-3:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def workload(n: int, dtype: str):
    """C (float32) = A @ B (dtype) with float32 products."""
    return mixed_matmul(n, n, n) if dtype == "float16" else workloads.matmul(n, n, n, "bfloat16")


def anchors(a: np.ndarray, b: np.ndarray, dtype: str, expected: np.ndarray) -> dict[str, float]:
    import torch

    from benchmarks.triton_matmul import triton_matmul

    torch_dtype = getattr(torch, dtype)
    ta = torch.from_numpy(values(a, dtype)).to(torch_dtype).cuda()
    tb = torch.from_numpy(values(b, dtype)).to(torch_dtype).cuda()
    results = {}
    for name, fn in (
        (f"cuBLAS {SHORT[dtype]}", lambda: torch.matmul(ta, tb)),
        (f"Triton {SHORT[dtype]}", lambda: triton_matmul(ta, tb)),
    ):
        check(fn().float().cpu().numpy(), expected, name)
        results[name] = cuda_event_seconds(fn)
    return results


def tuned_seconds(n: int, dtype: str, trials: int) -> float:
    """Seconds of the best of ``trials`` tuned candidates of ``tir tune matmul --dtype dtype``'s workload,
    checked against numpy's product (as the CLI does: without a reference, tune() would run the
    unscheduled program on the CPU for one, which takes minutes at 4096^3)."""
    db = str(Path(tempfile.mkdtemp()) / "tensorcore.db")
    shape = f"{n},{n},{n}"
    reference = workloads.reference_for("matmul", shape, dtype)
    result = tune(
        workloads.matmul(n, n, n, dtype), "cuda", trials=trials, db=db, progress=False, reference=reference
    )
    if not result.best_gflops:
        raise SystemExit(f"tuned {dtype} {shape}: no candidate of {trials} measured correctly ({result})")
    return 2 * n**3 / (result.best_gflops * 1e9)


def _time_schedule(n: int, dtype: str, config, unit: str, label: str, operands, expected) -> tuple:
    """(name, seconds, device) of the hand schedule ``config`` = (frags, warps, stages or None,
    fragment loads) on
    ``unit``, checked against ``expected`` before it is timed."""
    (frags, warps, stages, loads), (a, b) = config, operands
    staged = {"vector": 8, "stages": stages, "pad": True, "fragment_loads": loads}
    pipelined = staged if stages else {"vector": 2}
    sch = tensorized_matmul(workload(n, dtype), "cuda", frags=frags, warps=warps, unit=unit, **pipelined)
    module = build(sch.mod, "cuda")
    c = np.zeros((n, n), np.float32)
    module["main"](a, b, c)
    name = f"{label} {frags} x {warps}" + (f", {stages} stages" if stages else "")
    name += f", fragments per {loads}" if loads != "step" else ""
    check(c, expected, name)
    return name, module.benchmark("main", a, b, c, repeat=7).seconds, module.device_name


def run(n: int, dtype: str, configs: list, trials: int) -> None:
    a, b = operands(n, dtype)
    expected = values(a, dtype) @ values(b, dtype)
    timed = [
        _time_schedule(n, dtype, (frags, warps, stages, loads), *UNITS[unit], (a, b), expected)
        for units, frags, warps, stages, loads in configs
        for unit in units
    ]
    rows, device = [(name, seconds) for name, seconds, _ in timed], timed[-1][2] if timed else None
    if trials:
        rows.append((f"tuned, {trials} trials", tuned_seconds(n, dtype, trials)))
    rows += list(anchors(a, b, dtype, expected).items())
    cublas = dict(rows)[f"cuBLAS {SHORT[dtype]}"]
    for name, seconds in rows:
        tflops = 2 * n**3 / seconds / 1e12
        label = f"{SHORT[dtype]} {n}^3 {name}"
        print(f"  {label:<40} {seconds * 1e3:8.3f} ms {tflops:7.1f} TFLOPS {cublas / seconds:.2f}x cuBLAS")
    print(f"  device: {device}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1024,4096", help="comma-separated n for n^3")
    parser.add_argument("--dtypes", default="float16,bfloat16", help="comma-separated input dtypes")
    parser.add_argument(
        "--configs", default=CONFIGS, help="[UNIT:]FRAGS_M,N,K/WARPS_M,N[/STAGES[/LOADS]];..."
    )
    parser.add_argument("--trials", type=int, default=64, help="tuning trials per workload (0: none)")
    args = parser.parse_args()
    configs = []
    for config in args.configs.split(";"):
        unit, _, config = config.rpartition(":")
        frags, warps, *staging = config.split("/")
        sizes = [tuple(int(x) for x in part.split(",")) for part in (frags, warps)]
        stages = int(staging[0]) if staging else None
        loads = staging[1] if len(staging) > 1 else "step"
        configs.append(([unit] if unit else list(UNITS), *sizes, stages, loads))
    for dtype, n in itertools.product(args.dtypes.split(","), (int(s) for s in args.sizes.split(","))):
        run(n, dtype, configs, args.trials)


if __name__ == "__main__":
    main()
