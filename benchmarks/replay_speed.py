"""How long the tuner's inner loop takes per candidate: trace replay, sampling, mutation, features.

    python benchmarks/replay_speed.py                    # both targets, medians of 5 rounds
    python benchmarks/replay_speed.py --targets cuda --profile

The search (tuner/search.py) samples about 64 candidates per batch of 8 measured,
mutates the best-scored twice over, and lowers every one of them for its feature
vector, so these per-candidate costs times the candidates per batch are the cost
model's loop. No GPU is needed: the CUDA space is sampled, replayed and lowered
for features exactly as on the H200, only nothing is built. Prints, per target:
replay of the seed notebook's shared-memory matmul trace (26 instructions, the
number the issue compares with TVM's 3.1 ms), then ms per sampled candidate, per
mutant (replay of a changed decision plus the limit check) and per feature
vector, each the median over ``--rounds`` rounds; ``--profile`` adds the call
counts and cumulative times of the top functions (cProfile) of one round.
``--steady N`` times only the seed trace's replay, N times after 5 warm-ups (the
steadier number on a loaded machine).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schedule import Schedule, Trace  # noqa: E402
from tests.schedule.seed_notebook import MyModuleMatmul, blocking_with_shared  # noqa: E402
from tuner import workloads  # noqa: E402
from tuner.features import extract_features  # noqa: E402
from tuner.space import SpaceError, SpaceGenerator  # noqa: E402

SHAPES = {"cuda": "1024,1024,1024", "c": "512,512,512"}


def median_ms(fn, rounds: int, per: int = 1) -> float:
    """Median over ``rounds`` of the milliseconds one call of ``fn`` takes, divided by ``per``."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1e3 / per)
    return statistics.median(times)


def seed_trace_replay_ms(rounds: int) -> float:
    trace_json = blocking_with_shared(Schedule(MyModuleMatmul), 8, 8, 8, 8, 8).trace.as_json()
    Trace.apply_json_to_schedule(trace_json, Schedule(MyModuleMatmul))  # warm-up
    return median_ms(lambda: Trace.apply_json_to_schedule(trace_json, Schedule(MyModuleMatmul)), rounds * 4)


def steady_replay(replays: int) -> None:
    """The seed trace replayed ``replays`` times after 5 warm-ups: median and fastest (CPU ms)."""
    trace_json = blocking_with_shared(Schedule(MyModuleMatmul), 8, 8, 8, 8, 8).trace.as_json()
    times = []
    for number in range(replays + 5):
        start = time.process_time()
        Trace.apply_json_to_schedule(trace_json, Schedule(MyModuleMatmul))
        if number >= 5:
            times.append((time.process_time() - start) * 1e3)
    median, fastest = statistics.median(times), min(times)
    print(f"seed trace replay, {replays} replays: median {median:.2f} ms, fastest {fastest:.2f} ms")


def candidate_loop(target: str, count: int, seed: int = 0):
    """One round of the cost model's loop without the model: ``count`` samples, one mutant
    of each, and the features of all of them. Returns the three phases as callables."""
    mod = workloads.make("matmul", SHAPES[target])
    space = SpaceGenerator(target)
    schedules = []

    def sample():
        rng = random.Random(seed)
        schedules.clear()
        for _ in range(count):
            try:
                schedules.append(space.sample(mod, rng.randrange(1 << 31)))
            except SpaceError:
                continue

    mutants = []

    def mutate():
        rng = random.Random(seed)
        mutants.clear()
        for sch in schedules:
            child = space.mutate(sch, mod, rng)  # as the search does: replays from the changed decision
            if child is not None:
                mutants.append(child)

    def features():
        for sch in schedules + mutants:
            extract_features(sch.mod, target)

    return sample, mutate, features, schedules, mutants


def report(target: str, count: int, rounds: int, profile: bool) -> None:
    sample, mutate, features, schedules, mutants = candidate_loop(target, count)
    sample()
    mutate()
    features()  # warm-up (imports, caches of the first call)
    sample_ms = median_ms(sample, rounds, count)
    mutate_ms = median_ms(mutate, rounds, max(1, len(schedules)))
    feature_ms = median_ms(features, rounds, max(1, len(schedules) + len(mutants)))
    print(
        f"{target} matmul {SHAPES[target]}: {sample_ms:.1f} ms per sample, {mutate_ms:.1f} ms per mutant, "
        f"{feature_ms:.1f} ms per feature vector ({len(schedules)} samples, {len(mutants)} mutants, "
        f"median of {rounds})"
    )
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(lambda: (sample(), mutate(), features()))
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", default="cuda,c")
    parser.add_argument("--count", type=int, default=16, help="candidates sampled per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--steady", type=int, default=0, help="only the seed trace replay, this many times")
    args = parser.parse_args()
    if args.steady:
        steady_replay(args.steady)
        return
    print(f"seed shared-memory matmul trace replay: {seed_trace_replay_ms(args.rounds):.1f} ms (median)")
    for target in args.targets.split(","):
        report(target, args.count, args.rounds, args.profile)


if __name__ == "__main__":
    main()
