"""Three workloads in one multi-task run against three single runs with the same total trials.

    python benchmarks/multi_task.py --trials 48 --batch 8

The multi-task run (``tune_tasks``, tuner/tasks.py) spends ``--trials`` where
the gradient-based scheduler expects the largest gain; the single runs give each
workload a third. Both start from empty databases in a temporary folder and
search on the C target. The table shows, per workload, its weight, the trials
each spent and the best latency each found; the last line the weighted sum of
best latencies (the model's time, which the scheduler minimises).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tuner import tune, workloads  # noqa: E402
from tuner.tasks import TaskSpec, tune_tasks  # noqa: E402

WORKLOADS = [("matmul", "128,128,128", 2.0), ("softmax", "256,256", 1.0), ("reduction_sum", "256,512", 1.0)]


def specs() -> list[TaskSpec]:
    return [
        TaskSpec(
            f"{name}[{shape}]", workloads.make(name, shape), workloads.reference_for(name, shape), weight
        )
        for name, shape, weight in WORKLOADS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=48)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="multi-task-"))
    tasks = specs()
    together = tune_tasks(
        tasks, "c", args.trials, folder / "multi.db", seed=args.seed, batch_size=args.batch, progress=False
    )
    alone = [
        tune(
            spec.mod,
            "c",
            args.trials // len(tasks),
            folder / "single.db",
            seed=args.seed + number,
            batch_size=args.batch,
            workload_name=spec.name,
            reference=spec.reference,
            progress=False,
        )
        for number, spec in enumerate(tasks)
    ]
    print(f"{args.trials} trials in all on {together[0].device}")
    print(
        f"{'workload':<24} {'weight':>6} {'multi trials':>12} {'multi best us':>13} "
        f"{'single trials':>13} {'single best us':>14}"
    )
    weighted = [0.0, 0.0]
    for spec, many, one in zip(tasks, together, alone):
        best_many, best_one = many.best_seconds or float("inf"), one.best_seconds or float("inf")
        weighted[0] += spec.weight * best_many
        weighted[1] += spec.weight * best_one
        print(
            f"{spec.name:<24} {spec.weight:>6g} {many.trials:>12} {best_many * 1e6:>13.1f} "
            f"{one.trials:>13} {best_one * 1e6:>14.1f}"
        )
    print(
        f"weighted sum of best latencies: multi-task {weighted[0] * 1e6:.1f} us, "
        f"single runs {weighted[1] * 1e6:.1f} us"
    )


if __name__ == "__main__":
    main()
