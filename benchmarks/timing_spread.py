"""How well the repeats of a small parallel C kernel agree, with and without bound OpenMP threads.

    python benchmarks/timing_spread.py                # 64^3 matmul, parallel rows, 5 benchmarks each
    python benchmarks/timing_spread.py --size 128 --runs 10

Each setting runs in a fresh interpreter (OpenMP reads its environment once):
``pinned`` is the C runtime's default (``OMP_PROC_BIND=true``), ``unpinned``
sets ``OMP_PROC_BIND=false``. Each process checks the kernel against numpy,
then calls ``Module.benchmark`` ``--runs`` times and prints every median and
the spread of its repeats ((max - min) / median). On an idle machine the
pinned spreads should stay under 10%; on a shared one nothing is promised.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"pinned": {}, "unpinned": {"OMP_PROC_BIND": "false"}}


def measure(size: int, runs: int) -> list[tuple[float, float]]:
    """(median seconds, spread) of ``runs`` benchmarks of a row-parallel size^3 matmul."""
    import numpy as np

    from codegen import build
    from schedule import Schedule
    from tuner import workloads

    sch = Schedule(workloads.make("matmul", f"{size},{size},{size}"))
    rows, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(rows)
    module = build(sch.mod, "c")
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    c = np.zeros((size, size), np.float32)
    module["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    results = [module.benchmark("main", a, b, c) for _ in range(runs)]
    return [(r.seconds, r.timing.spread) for r in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="matmul size (default 64)")
    parser.add_argument("--runs", type=int, default=5, help="benchmarks per setting (default 5)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.size, args.runs)))
        return
    print(f"{os.cpu_count()} cores; {args.size}^3 matmul, rows in parallel; {args.runs} benchmarks")
    for name, env in SETTINGS.items():
        command = [sys.executable, __file__, "--child", "--size", str(args.size), "--runs", str(args.runs)]
        paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        child_env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(paths)}
        done = subprocess.run(command, env=child_env, capture_output=True, text=True, check=True)
        results = json.loads(done.stdout.strip().splitlines()[-1])
        medians = ", ".join(f"{seconds * 1e3:.3g}" for seconds, _ in results)
        spreads = ", ".join(f"{spread:.0%}" for _, spread in results)
        print(f"{name:9s} medians (ms): {medians}; spreads: {spreads}")


if __name__ == "__main__":
    main()
