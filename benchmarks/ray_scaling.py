"""Candidates measured per minute on the C target through Ray, with 1, 2, 4, 8 workers on one node.

    python benchmarks/ray_scaling.py --workers 1,2,4,8 --size 128 --per-worker 24

For each worker count W it starts a Ray instance on this machine with W CPUs and
W units of the resource "c" (so W build tasks and W measuring actors run at
once), measures ``per-worker * W`` distinct random candidates of an n^3 matmul
through ``RayRunner`` in batches of ``4 * W``, each candidate built from an empty
compile cache (a fresh TIR_CACHE_DIR per W), and prints candidates per minute
and the speed-up over W=1 (target: 6.4x at 8, parallel efficiency 0.8). The
candidates are sampled before the clock starts: the number is the runner's
throughput (building, checking, timing, and Ray's overhead), not the search's.
Every candidate's result is checked by the measurement itself against numpy.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codegen.target import Target  # noqa: E402
from tuner import workloads  # noqa: E402
from tuner.measure import Candidate  # noqa: E402
from tuner.measure.ray_runner import RayRunner  # noqa: E402
from tuner.space import SpaceError, SpaceGenerator  # noqa: E402


def candidates(n: int, count: int, seed: int) -> list[Candidate]:
    """``count`` distinct random schedules of the n^3 matmul."""
    mod = workloads.make("matmul", f"{n},{n},{n}")
    space, rng, found = SpaceGenerator(Target.parse("c")), random.Random(seed), {}
    while len(found) < count:
        try:
            sch = space.sample(mod, rng.randrange(1 << 31))
        except SpaceError:
            continue
        found.setdefault(str(sch.trace.as_json()), Candidate(sch.trace.as_json(), sch.mod))
    return list(found.values())


def throughput(workers: int, pool: list[Candidate], n: int) -> tuple[float, int]:
    """Candidates per minute with ``workers`` Ray workers, and how many measured ok."""
    os.environ["TIR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"ray{workers}-")  # Ray's workers inherit it
    mod_shape = f"{n},{n},{n}"
    mod = workloads.make("matmul", mod_shape)
    with RayRunner(actors=workers, cpus=workers) as runner:
        session = runner.session(mod, "c", reference=workloads.reference_for("matmul", mod_shape))
        session.measure(pool[:workers])  # warm-up: workers started, modules imported (not counted)
        batch, ok = 4 * workers, 0
        started = time.perf_counter()
        for first in range(workers, len(pool), batch):
            ok += sum(r.status == "ok" for r in session.measure(pool[first : first + batch]))
        seconds = time.perf_counter() - started
        session.close()
    return (len(pool) - workers) / seconds * 60, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--per-worker", type=int, default=24, help="candidates measured per worker")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(f"{os.cpu_count()} cores; matmul {args.size}^3 on C; {args.per_worker} candidates per worker")
    header = f"{'workers':>8} {'candidates':>10} {'ok':>5} {'per minute':>11} {'speed-up':>9}"
    print(f"{header} {'efficiency':>10}")
    base = None
    for workers in counts:
        pool = candidates(args.size, (args.per_worker + 1) * workers, seed=workers)
        rate, ok = throughput(workers, pool, args.size)
        base = base or rate / workers
        speedup = rate / base
        line = f"{workers:>8} {len(pool) - workers:>10} {ok:>5} {rate:>11.1f} {speedup:>8.2f}x"
        print(f"{line} {speedup / workers:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
