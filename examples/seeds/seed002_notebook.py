"""Seed 002, the MLC notebook "GPU hardware acceleration", as one script: vector add, window sum, GEMM.

The notebook's schedule functions (``blocking``, ``blocking_with_shared`` and
their cooperative fetch) run with only their imports changed; they live,
verbatim, in tests/schedule/seed_notebook.py, and its vector add and window sum
schedules in tests/codegen/seed_kernels.py, which the test suite checks
structure by structure and source by source. Each cell here schedules, prints, builds, runs on numpy
arrays and checks the result: on C (timed), in the Metal host simulator
(numbers only) and on CUDA where a GPU and CuPy are present (timed). The last
cell is the notebook's MetaSchedule run, as our ``tune`` with a few trials.

    python examples/seeds/seed002_notebook.py            # the notebook's 1024 sizes
    python examples/seeds/seed002_notebook.py --n 64 --trials 4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import tir  # noqa: E402
from codegen import build  # noqa: E402
from codegen.errors import RuntimeUnavailableError  # noqa: E402
from schedule import Schedule  # noqa: E402
from tests.codegen import seed_kernels  # noqa: E402
from tests.schedule.seed_notebook import blocking, blocking_with_shared  # noqa: E402
from tuner import apply_best, tune, workloads  # noqa: E402

TARGETS = (("c", None), ("metal", "sim"), ("cuda", None))


def run(
    title: str, mod: tir.IRModule, arrays: list[np.ndarray], expected: np.ndarray, show_source: str = ""
) -> None:
    """Build ``mod`` for every target that runs here, check it, and time where the target can."""
    for target, device in TARGETS:
        rt = build(mod, target, device=device) if device else build(mod, target)
        if target == show_source:
            print(rt.get_source())
        arrays[-1][...] = np.nan
        try:
            rt["main"](*arrays)
        except RuntimeUnavailableError:
            print(f"{title} [{target}]: cannot run here")
            continue
        np.testing.assert_allclose(arrays[-1], expected, rtol=1e-4, atol=1e-5)
        if device == "sim":
            print(f"{title} [{target} simulator]: matches numpy")
            continue
        result = rt.benchmark("main", *arrays)
        print(f"{title} [{target}]: matches numpy, {result.gflops:.2f} GFLOPS")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=1024, help="vector length and matmul size (a multiple of 64)"
    )
    parser.add_argument("--trials", type=int, default=16, help="tuning trials for the last cell (0: skip)")
    args = parser.parse_args(argv)
    n, rng = args.n, np.random.default_rng(0)

    # 6.1.3.1 thread blocks (split, bind) and 6.1.3.3 the window sum's shared-memory cache
    vector_add = seed_kernels.vector_add(n)
    vector_add.show()
    a, b = rng.uniform(size=n).astype("float32"), rng.uniform(size=n).astype("float32")
    run("vector add", vector_add, [a, b, np.empty(n, "float32")], a + b)
    a = rng.uniform(size=n + 2).astype("float32")
    expected = a[:-2] + a[1:-1] + a[2:]
    run("window sum", seed_kernels.window_sum(n), [a, np.empty(n, "float32")], expected, show_source="metal")

    # 6.2 GEMM: local blocking, then shared-memory blocking with cooperative fetching
    a, b = rng.uniform(size=(n, n)).astype("float32"), rng.uniform(size=(n, n)).astype("float32")
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype("float32")
    gemm = workloads.matmul(n, n, n)
    sch = blocking(Schedule(gemm), 8, 8, 8, 8, 4)
    run("GEMM-Blocking (local)", sch.mod, [a, b, np.empty((n, n), "float32")], expected)
    sch = blocking_with_shared(Schedule(gemm), 8, 8, 8, 8, 8)
    run("GEMM-Blocking (shared)", sch.mod, [a, b, np.empty((n, n), "float32")], expected)

    # 6.3 the notebook's MetaSchedule cell: tune, then build the best schedule
    if args.trials:
        db = Path(tempfile.mkdtemp(prefix="seed002-")) / "tuning.db"
        result = tune(gemm, "c", trials=args.trials, db=db, progress=False)
        print(f"tuned {result.trials} trials on C: best {result.best_gflops:.1f} GFLOPS")
        best = apply_best(gemm, "c", db)
        run("GEMM-tuned", best.mod, [a, b, np.empty((n, n), "float32")], expected)


if __name__ == "__main__":
    main()
