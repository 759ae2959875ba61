"""Tuned fp32 matmul against the anchors, and guided search against random search, in one run.

    python benchmarks/tune_matmul.py --target c --sizes 512,1024 --trials 64
    python benchmarks/tune_matmul.py --target cuda --sizes 1024,4096 --trials 64,63
    python benchmarks/tune_matmul.py --target c --sizes 512 --trials 32 --compare-random --seeds 0,1,2
    python benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --overlap none

Each size is tuned from an empty database (in a temporary folder unless --db is
given); the best record is then rebuilt with apply_best, checked against float64
numpy and timed again next to the anchors (numpy on the CPU; cuBLAS and Triton
fp32 on the GPU). --compare-random tunes each seed twice with the same budget,
guided by the cost model and by random sampling of the same space, then re-times
the best kernel of every run side by side in one runner (median of 5 interleaved
rounds) and prints both, with each run's best after 1/4, 1/2 and 3/4 of the trials.
Each tuning run prints where its wall time went (TuneResult.time_split); --overlap
picks what runs while the next batch is proposed (tune's ``overlap``);
--runner-compiles leaves every CUDA compile to the runner's NVRTC, as before the
build workers compiled with nvcc (benchmarks/tuner_speed_gpu.sh compares the two).
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
from tuner.database import Database  # noqa: E402
from tuner.measure import Candidate, Measurer  # noqa: E402
from tuner.search import OVERLAP_MODES  # noqa: E402


def matmul_reference(n: int):
    """The numpy reference of the n^3 matmul workload, as tune() and Measurer take it."""
    workload = workloads.get_workload("matmul")
    sizes = workload.sizes(f"{n},{n},{n}")
    return lambda arrays: workload.reference(*arrays, **sizes)


def tune_size(
    n: int,
    target: str,
    trials: int,
    db: Path,
    seed: int,
    guided: bool = True,
    overlap: str = "auto",
    search_workers: int | None = None,
):
    mod = workloads.make("matmul", f"{n},{n},{n}")
    result = tune(
        mod,
        target,
        trials,
        db,
        seed=seed,
        reference=matmul_reference(n),
        progress=False,
        guided=guided,
        overlap=overlap,
        search_workers=search_workers,
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
    parser.add_argument("--folder", default=None, help="where the databases go (default: a temporary folder)")
    parser.add_argument("--seeds", default="0")
    parser.add_argument(
        "--overlap", default="auto", choices=OVERLAP_MODES, help="what runs while the next batch is proposed"
    )
    parser.add_argument(
        "--runner-compiles",
        action="store_true",
        help="CUDA: the build workers skip nvcc, so the runner compiles every candidate with NVRTC "
        "(the measurement before the build workers compiled; use a fresh TIR_CACHE_DIR and CUPY_CACHE_DIR)",
    )
    parser.add_argument(
        "--search-workers",
        type=int,
        default=None,
        help="tune's search_workers (default: half the cores, at most 8)",
    )
    args = parser.parse_args()
    if args.runner_compiles:
        import codegen.cuda

        codegen.cuda.nvcc_available = lambda: False  # read by its precompile, here and in the forked workers
    sizes = [int(s) for s in args.sizes.split(",")]
    trials = [int(t) for t in args.trials.split(",")]
    trials = trials * len(sizes) if len(trials) == 1 else trials
    seeds = [int(s) for s in args.seeds.split(",")]
    folder = Path(args.folder) if args.folder else Path(tempfile.mkdtemp(prefix="tune_matmul_"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.compare_random:
        compare(args.target, sizes[0], trials[0], seeds, folder)
        return
    for n, budget in zip(sizes, trials):
        db = Path(args.db) if args.db else folder / f"matmul_{n}.db"
        mod, result = tune_size(
            n, args.target, budget, db, seeds[0], overlap=args.overlap, search_workers=args.search_workers
        )
        seconds, device, anchors = measure_best(mod, args.target, db, n)
        flops = 2 * n**3
        print(f"{n}^3 on {device}: {budget} trials, {result.errors} failed candidates; {result.time_split()}")
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
    """Guided and random search per seed, then every run's best kernel re-timed side by side.

    The best GFLOPS a run recorded is the maximum of noisy measurements, so a run that
    measured many mediocre candidates can win by luck; re-timing the best kernel of every
    run in one runner, interleaved over several rounds, compares what each search found.
    """
    checkpoints = sorted({budget // 4, budget // 2, 3 * budget // 4, budget} - {0})
    runs = []
    for seed in seeds:
        for label in ("guided", "random"):
            db = folder / f"{label}_{seed}.db"
            mod, result = tune_size(n, target, budget, db, seed, label == "guided")
            curve = {t: g for t, g in result.history}
            runs.append((label, seed, db, result))
            print(
                f"  seed {seed} {label:<7} best {result.best_gflops:8.1f} GFLOPS in {result.seconds:.0f} s "
                f"({result.cost_model_seconds:.0f} s cost model); best after "
                + ", ".join(f"{t}: {curve.get(t, 0.0):.0f}" for t in checkpoints)
                + f"; mean of the last {budget // 2} candidates {mean_gflops(db, budget // 2):.0f}",
                flush=True,
            )
    retimed = retime_best(mod, target, [db for _, _, db, _ in runs], n)
    print(f"{n}^3 on {target}, {budget} trials; best kernel of each run re-timed side by side (GFLOPS):")
    print(f"  {'seed':>4} {'guided':>9} {'random':>9}   (recorded during tuning: guided, random)")
    by_seed = {}
    for (label, seed, _, result), gflops in zip(runs, retimed):
        by_seed.setdefault(seed, {})[label] = (gflops, result.best_gflops)
    for seed, pair in by_seed.items():
        (g, g_tuning), (r, r_tuning) = pair["guided"], pair["random"]
        print(f"  {seed:>4} {g:9.1f} {r:9.1f}   ({g_tuning:.1f}, {r_tuning:.1f})")
    guided = [pair["guided"][0] for pair in by_seed.values()]
    random = [pair["random"][0] for pair in by_seed.values()]
    wins = sum(g > r for g, r in zip(guided, random))
    print(
        f"  mean {statistics.fmean(guided):9.1f} {statistics.fmean(random):9.1f}   "
        f"guided wins {wins} of {len(seeds)} seeds"
    )


def mean_gflops(db: Path, last: int) -> float:
    """Mean GFLOPS of the last ``last`` candidates measured (failures count 0): what the search proposes."""
    with Database(db) as database:
        records = database.records()[-last:]
    return statistics.fmean(r.gflops or 0.0 for r in records) if records else 0.0


def retime_best(mod, target: str, dbs: list[Path], n: int, rounds: int = 5) -> list[float]:
    """GFLOPS of each database's best kernel, timed in one runner process in ``rounds``
    interleaved rounds (median), so that every kernel sees the same machine."""
    candidates = []
    for db in dbs:
        sch = apply_best(mod, target, db)
        candidates.append(Candidate(sch.trace.as_json(), sch.mod))
    seconds: list[list[float]] = [[] for _ in candidates]
    with Measurer(mod, target, reference=matmul_reference(n), repeat=5, min_repeat_seconds=0.05) as measurer:
        for _ in range(rounds):
            for times, measured in zip(seconds, measurer.measure(candidates)):
                times.append(measured.mean_secs)
    return [2 * n**3 / statistics.median(times) / 1e9 for times in seconds]


if __name__ == "__main__":
    main()
