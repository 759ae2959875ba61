"""Tuned fp32 matmul against the anchors, and guided search against random search, in one run.

    python benchmarks/tune_matmul.py --target c --sizes 512,1024 --trials 64
    python benchmarks/tune_matmul.py --target cuda --sizes 1024,4096 --trials 64,63
    python benchmarks/tune_matmul.py --target c --sizes 512 --trials 32 --compare-random --seeds 0,1,2

Each size is tuned from an empty database (in a temporary folder unless --db is
given); the best record is then rebuilt with apply_best, checked against float64
numpy and timed again next to the anchors (numpy on the CPU; cuBLAS and Triton
fp32 on the GPU). --compare-random tunes each seed twice with the same budget,
guided by the cost model and by random sampling of the same space, and prints
the best GFLOPS of both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gemm import check, gpu_anchors, median_seconds  # noqa: E402
from codegen import build  # noqa: E402
from tuner import apply_best, tune, workloads  # noqa: E402


def tune_size(n: int, target: str, trials: int, db: Path, seed: int, guided: bool = True):
    workload = workloads.get_workload("matmul")
    sizes = workload.sizes(f"{n},{n},{n}")
    mod = workloads.make("matmul", f"{n},{n},{n}")
    result = tune(
        mod,
        target,
        trials,
        db,
        seed=seed,
        reference=lambda arrays: workload.reference(*arrays, **sizes),
        progress=False,
        guided=guided,
    )
    return mod, result


def measure_best(mod, target: str, db: Path, n: int) -> tuple[float, str, dict[str, float]]:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    module = build(apply_best(mod, target, db).mod, target)
    module["main"](a, b, c)
    check(c, a, b, "tuned kernel")
    seconds = module.benchmark("main", a, b, c, repeat=7).seconds
    anchors = {"numpy": median_seconds(lambda: a @ b)} if target == "c" else gpu_anchors(a, b)
    return seconds, module.device_name, anchors


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="c")
    parser.add_argument("--sizes", default="512")
    parser.add_argument("--trials", default="64", help="one number, or one per size")
    parser.add_argument(
        "--db", default=None, help="records database (default: a fresh temporary one per size)"
    )
    parser.add_argument("--compare-random", action="store_true")
    parser.add_argument("--seeds", default="0")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    trials = [int(t) for t in args.trials.split(",")]
    trials = trials * len(sizes) if len(trials) == 1 else trials
    seeds = [int(s) for s in args.seeds.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="tune_matmul_"))
    if args.compare_random:
        compare(args.target, sizes[0], trials[0], seeds, folder)
        return
    for n, budget in zip(sizes, trials):
        db = Path(args.db) if args.db else folder / f"matmul_{n}.db"
        mod, result = tune_size(n, args.target, budget, db, seeds[0])
        seconds, device, anchors = measure_best(mod, args.target, db, n)
        flops = 2 * n**3
        print(
            f"{n}^3 on {device}: {budget} trials in {result.seconds:.0f} s "
            f"({result.cost_model_seconds:.1f} s cost model), {result.errors} failed candidates"
        )
        print(
            f"  tuned          {seconds * 1e3:9.3f} ms {flops / seconds / 1e9:10.1f} GFLOPS "
            f"(during tuning: {result.best_gflops:.1f})"
        )
        for name, anchor in anchors.items():
            print(
                f"  {name:<14} {anchor * 1e3:9.3f} ms {flops / anchor / 1e9:10.1f} GFLOPS "
                f"-> tuned is {anchor / seconds:.2f}x {name}"
            )


def compare(target: str, n: int, budget: int, seeds: list[int], folder: Path) -> None:
    guided, random = [], []
    for seed in seeds:
        for label, results in (("guided", guided), ("random", random)):
            _, result = tune_size(n, target, budget, folder / f"{label}_{seed}.db", seed, label == "guided")
            results.append(result.best_gflops)
            print(
                f"  seed {seed} {label:<7} best {result.best_gflops:8.1f} GFLOPS in {result.seconds:.0f} s",
                flush=True,
            )
    wins = sum(g > r for g, r in zip(guided, random))
    print(
        f"{n}^3, {budget} trials, seeds {seeds}: guided mean {statistics.fmean(guided):.1f} GFLOPS, "
        f"random mean {statistics.fmean(random):.1f} GFLOPS; guided wins {wins} of {len(seeds)}"
    )


if __name__ == "__main__":
    main()
