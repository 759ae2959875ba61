"""What checked builds cost: run time of a C kernel with and without ``check_bounds=True``.

    python benchmarks/check_bounds_cost.py

Two C kernels, each built twice (plain and checked), checked against numpy, then
timed with ``Module.benchmark`` on one OpenMP thread so the shared machine's
other load matters less:

- ``gather``: an embedding lookup, ``out[i, j] = table[ids[i], j] * scale[j]``
  (4096 x 512). The index ``ids[i]`` is data: the prover cannot decide it, so the
  checked build checks every load of ``table``. The worst case for checks.
- ``matmul``: the seed notebook's local-blocking matmul (512^3): every access is
  proved in bounds, so the checked build has no checks (the same source) and
  costs nothing: its ratio shows the noise of the measurement.

Each build is timed in 5 alternating rounds; the table has the fastest median.

Also prints how long the bounds prover itself takes on the seed's shared-memory
matmul (``verify_access_bounds``, which every build runs) next to the whole
``generate_source`` for CUDA.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from codegen import build  # noqa: E402
from codegen.build import generate_source  # noqa: E402
from tests.codegen.seed_kernels import SEED_KERNELS, random_arguments  # noqa: E402
from tir import T  # noqa: E402
from tir.analysis.access_bounds import verify_access_bounds  # noqa: E402

ROWS, WIDTH, VOCAB = 4096, 512, 8192


@T.prim_func
def gather(
    table: T.Buffer((VOCAB, WIDTH), "float32"),
    ids: T.Buffer((ROWS,), "int32"),
    scale: T.Buffer((WIDTH,), "float32"),
    out: T.Buffer((ROWS, WIDTH), "float32"),
):
    for i, j in T.grid(ROWS, WIDTH):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = table[ids[vi], vj] * scale[vj]


def gather_arguments() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    table = rng.uniform(-1, 1, (VOCAB, WIDTH)).astype("float32")
    ids = rng.integers(0, VOCAB, ROWS).astype("int32")
    scale = rng.uniform(0.5, 1.5, WIDTH).astype("float32")
    return [table, ids, scale, np.zeros((ROWS, WIDTH), "float32")]


def ready(mod, arrays: list[np.ndarray], expected: np.ndarray, checked: bool):
    """The built module and its function, checked against ``expected`` once."""
    module = build(mod, "c", check_bounds=checked)
    function = next(iter(module.functions.values()))
    module[function.name](*arrays)
    np.testing.assert_allclose(arrays[-1], expected, rtol=1e-4, atol=1e-4)
    return module, function


def compare(mod, arrays: list[np.ndarray], expected: np.ndarray, rounds: int = 5) -> tuple[float, float, int]:
    """Fastest median (of 7 repeats) over ``rounds`` alternating rounds, plain and checked, and the sites."""
    builds = [ready(mod, arrays, expected, checked) for checked in (False, True)]
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for slot, (module, function) in enumerate(builds):
            best[slot] = min(best[slot], module.benchmark(function.name, *arrays, repeat=7).seconds)
    return best[0], best[1], len(builds[1][1].checks)


def main() -> None:
    print("| kernel | check sites | plain ms | checked ms | checked / plain |")
    print("|---|---|---|---|---|")
    arrays = gather_arguments()
    expected = arrays[0][arrays[1]] * arrays[2]
    matmul = SEED_KERNELS["matmul_local"](512)
    matmul_arrays = random_arguments(matmul)
    matmul_expected = matmul_arrays[0].astype("float64") @ matmul_arrays[1].astype("float64")
    for name, mod, args, want in (
        ("gather 4096x512", gather, arrays, expected),
        ("matmul_local 512^3", matmul, matmul_arrays, matmul_expected),
    ):
        plain, checked, sites = compare(mod, args, want)
        print(f"| {name} | {sites} | {plain * 1e3:.3f} | {checked * 1e3:.3f} | {checked / plain:.2f}x |")
    shared = SEED_KERNELS["matmul_shared"](1024)["main"]
    prover = statistics.median(_seconds(lambda: verify_access_bounds(shared)) for _ in range(10))
    whole = statistics.median(_seconds(lambda: generate_source(shared, "cuda")) for _ in range(5))
    print(
        f"\nbounds prover on the seed shared-memory matmul: {prover * 1e3:.1f} ms "
        f"of {whole * 1e3:.1f} ms for generate_source(..., 'cuda')"
    )


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
