"""float16 matmul on tensor cores: our WMMA and mma.sync schedules against cuBLAS (torch.matmul) and Triton.

    python benchmarks/tensorcore_matmul.py                     # GPU machine: 1024^3 and 4096^3
    python benchmarks/tensorcore_matmul.py --sizes 2048 --configs "4,4,2/2,2"

C (float32) = A @ B with A, B float16, products accumulated in float32, for every
tile configuration in ``--configs`` (tests/codegen/tensor_core_schedules.py). Every kernel's
result is checked against float64 numpy before it is timed. Each config is the
fragments of C per warp (M, N) and per k step, then the warps per thread block
(M, N); each runs with WMMA 16x16x16 and with mma.sync m16n8k16 (ldmatrix); the
shared-memory fetches load half2 vectors. torch.matmul gets
float16 operands and gives float16 (cuBLAS accumulates in float32); Triton's
kernel is benchmarks/triton_matmul.py's with float16 operands and a float32 C.
With ``--trials N`` (default 64; 0 skips it) the float16 matmul with a float16 C
(``tir tune matmul --dtype float16``'s workload) is also tuned, whose space holds
WMMA candidates (tuner/space/tensor_core.py), and its best is compared the same way.
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
from tests.codegen.tensor_core_schedules import mixed_matmul, tensorized_matmul  # noqa: E402


def check(result: np.ndarray, a: np.ndarray, b: np.ndarray, what: str) -> None:
    expected = a.astype(np.float64) @ b.astype(np.float64)
    error = np.abs(result.astype(np.float64) - expected).max() / np.abs(expected).max()
    if error > 2e-3:
        raise SystemExit(f"{what}: wrong result (max relative error {error:.2e})")


def anchors(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    import torch

    from benchmarks.triton_matmul import triton_matmul

    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    results = {}
    for name, fn in (
        ("cuBLAS fp16", lambda: torch.matmul(ta, tb)),
        ("Triton fp16", lambda: triton_matmul(ta, tb)),
    ):
        check(fn().float().cpu().numpy(), a, b, name)
        results[name] = cuda_event_seconds(fn)
    return results


def tuned_seconds(n: int, trials: int) -> float:
    """Seconds of the best of ``trials`` tuned candidates of the float16 matmul (float16 C)."""
    from tuner import tune, workloads

    result = tune(
        workloads.matmul(n, n, n, "float16"),
        "cuda",
        trials=trials,
        db=str(Path(tempfile.mkdtemp()) / "tensorcore.db"),
        progress=False,
    )
    return 2 * n**3 / (result.best_gflops * 1e9)


def run(n: int, configs: list[tuple[tuple[int, int, int], tuple[int, int]]], trials: int) -> None:
    rng = np.random.default_rng(0)
    a = (rng.random((n, n)) - 0.5).astype(np.float16)
    b = (rng.random((n, n)) - 0.5).astype(np.float16)
    rows = []
    for (frags, warps), (unit, label) in itertools.product(
        configs, (("cuda", "WMMA"), ("cuda-mma", "mma.sync"))
    ):
        sch = tensorized_matmul(mixed_matmul(n, n, n), "cuda", frags=frags, warps=warps, vector=2, unit=unit)
        module = build(sch.mod, "cuda")
        c = np.zeros((n, n), np.float32)
        module["main"](a, b, c)
        name = f"{label} {frags} x {warps}"
        check(c, a, b, name)
        rows.append((name, module.benchmark("main", a, b, c, repeat=7).seconds))
        device = module.device_name
    if trials:
        rows.append((f"tuned fp16, {trials} trials", tuned_seconds(n, trials)))
    rows += list(anchors(a, b).items())
    best_cublas = dict(rows)["cuBLAS fp16"]
    for name, seconds in rows:
        tflops = 2 * n**3 / seconds / 1e12
        ratio = best_cublas / seconds
        print(f"  {n}^3 {name:<26} {seconds * 1e3:9.3f} ms {tflops:8.1f} TFLOPS {ratio:6.2f}x cuBLAS")
    print(f"  device: {device}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1024,4096", help="comma-separated n for n^3")
    parser.add_argument(
        "--frags",
        default="2,2,1;4,4,2;4,2,2;2,4,4",
        help="semicolon-separated M,N,K fragment counts per block",
    )
    args = parser.parse_args()
    configs = [tuple(int(x) for x in c.split(",")) for c in args.frags.split(";")]
    for n in (int(s) for s in args.sizes.split(",")):
        run(n, configs, args.trials)


if __name__ == "__main__":
    main()
