"""How long replaying the seed's shared-memory matmul schedule from a trace takes.

    python benchmarks/schedule_replay.py

The tuner replays thousands of traces, so this is the schedule's hot path.
Prints the median of 20 replays (and of parsing the module, for scale).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schedule import Schedule, Trace  # noqa: E402
from tests.schedule.seed_notebook import MyModuleMatmul, blocking_with_shared  # noqa: E402


def median_ms(fn, runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    sch = blocking_with_shared(Schedule(MyModuleMatmul), 8, 8, 8, 8, 8)
    trace_json = sch.trace.as_json()
    print(f"instructions in the trace: {len(sch.trace)}")

    def replay():
        Trace.apply_json_to_schedule(trace_json, Schedule(MyModuleMatmul))

    replay()  # warm-up
    print(f"apply the trace (median of 20): {median_ms(replay):.1f} ms")
    direct = median_ms(lambda: blocking_with_shared(Schedule(MyModuleMatmul), 8, 8, 8, 8, 8))
    print(f"apply the schedule functions directly: {direct:.1f} ms")


if __name__ == "__main__":
    main()
