"""A runner that measures nothing, for tuning runs whose search, not whose kernels, is under test.

Each candidate's run time is made up from a hash of its trace, so two runs record the
same numbers exactly when they choose the same candidates: benchmarks/tuner_loop_split.py
times the search with it, and tests/tuner/test_feature_pool.py compares the records of
two runs.
"""

from __future__ import annotations

import hashlib
import json

from tuner.measure import MeasureResult


class FakeSession:
    """A measurement session that measures nothing: a run time made up from the trace."""

    device_name = "fake"

    def measure(self, candidates):
        results = []
        for candidate in candidates:
            digest = hashlib.sha256(json.dumps(candidate.trace_json, sort_keys=True).encode()).digest()
            seconds = 1e-3 * (1 + digest[0] / 64)
            results.append(MeasureResult("ok", (seconds,) * 3))
        return results

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class FakeRunner:
    """Opens :class:`FakeSession` for any workload and target."""

    def check(self, target) -> None:
        pass

    def session(self, workload, target, *, reference=None, seed=0) -> FakeSession:
        return FakeSession()

    def close(self) -> None:
        pass
