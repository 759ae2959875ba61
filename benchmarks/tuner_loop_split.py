"""Where the tuner's own CPU time goes in a whole tuning run, measured without a GPU.

    python benchmarks/tuner_loop_split.py                          # CUDA matmul 1024^3, 64 trials
    python benchmarks/tuner_loop_split.py --target c --shape 512,512,512
    python benchmarks/tuner_loop_split.py --profile 25             # plus cProfile's top 25

Runs ``tune()`` exactly as ``tir tune`` does, but with a fake runner: nothing is
built or timed, each candidate gets a made-up run time (a hash of its trace, so the
same candidate always gets the same one and the cost model has something to learn).
Everything the search does on its own thread (sampling, mutating and replaying
candidates, the space's limit check, lowering for features, the feature walk,
training and asking the cost model) runs as on the H200. The run's CPU time
(``time.process_time``) is split by wrapping those functions; each phase counts its
own time only (the planning inside a limit check is "planning", not "limit check"):

    sample          the design-space rules on a fresh schedule (SpaceGenerator.sample)
    replay          replaying traces: mutants and the best records (Trace.apply_to_schedule)
    limit check     check_limits outside the planning
    planning        plan + compact buffer allocation (shared by the limit check and the features)
    lower           the rest of the lowering up to the feature stage
    features        the feature walk over the lowered IR
    model           XGBoost training and prediction
    other           the rest of the run (trace JSON and keys, selection, the database)

Prints the phases in milliseconds per measured trial and in total.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import codegen.pipeline  # noqa: E402
import tuner.feature_pool  # noqa: E402
import tuner.features  # noqa: E402
import tuner.space.generator  # noqa: E402
import tuner.space.limits  # noqa: E402
from schedule import Trace  # noqa: E402
from tests.tuner.fake_runner import FakeRunner  # noqa: E402
from tuner import tune, workloads  # noqa: E402
from tuner.cost_model import CostModel  # noqa: E402
from tuner.space import SpaceGenerator  # noqa: E402

PHASES = ("sample", "replay", "limit check", "planning", "lower", "features", "model", "other")


class PhaseClock:
    """CPU seconds per phase, each phase counting only its own time (not the phases it calls)."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self._stack: list[list] = []

    def wrap(self, phase: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            frame = [phase, time.process_time()]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.process_time() - frame[1]
                self.seconds[phase] += spent
                if self._stack:
                    self.seconds[self._stack[-1][0]] -= spent

        return timed


def instrument(clock: PhaseClock) -> None:
    """Wrap the functions of each phase where the tuner looks them up."""
    SpaceGenerator.sample = clock.wrap("sample", SpaceGenerator.sample)
    Trace.apply_to_schedule = clock.wrap("replay", Trace.apply_to_schedule)
    tuner.space.generator.check_limits = clock.wrap("limit check", tuner.space.generator.check_limits)
    planned = clock.wrap("planning", codegen.pipeline.planned_allocations)
    codegen.pipeline.planned_allocations = tuner.space.limits.planned_allocations = planned
    tuner.features.lower_for_target = clock.wrap("lower", tuner.features.lower_for_target)
    tuner.feature_pool.extract_features = clock.wrap("features", tuner.feature_pool.extract_features)
    CostModel.update = clock.wrap("model", CostModel.update)
    CostModel.predict = clock.wrap("model", CostModel.predict)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--shape", default="1024,1024,1024")
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's top N by cumulative time")
    parser.add_argument(
        "--search-workers",
        type=int,
        default=1,
        help="tune's search_workers (default 1: every phase in this process, where the CPU time is read; "
        "with more, the features of most candidates are computed in other processes and not counted)",
    )
    args = parser.parse_args()
    clock = PhaseClock()
    instrument(clock)
    mod = workloads.make("matmul", args.shape)
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as folder:
        started, wall = time.process_time(), time.perf_counter()
        if profiler is not None:
            profiler.enable()
        database = Path(folder) / "t.db"
        result = tune(
            mod,
            args.target,
            args.trials,
            database,
            seed=args.seed,
            runner=FakeRunner(),
            progress=False,
            search_workers=args.search_workers,
        )
        if profiler is not None:
            profiler.disable()
        total, wall = time.process_time() - started, time.perf_counter() - wall
    clock.seconds["other"] += total - sum(clock.seconds.values())
    print(
        f"{args.target} matmul {args.shape}, {result.trials} trials (fake runner): {total:.1f} CPU s "
        f"({wall:.1f} s wall), {1e3 * total / result.trials:.0f} ms per trial"
    )
    for phase in PHASES:
        seconds = clock.seconds[phase]
        per_trial = 1e3 * seconds / result.trials
        print(f"  {phase:12s} {per_trial:7.1f} ms/trial  {seconds:6.2f} s  {seconds / total:5.1%}")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
