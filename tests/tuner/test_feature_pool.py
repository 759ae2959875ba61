"""The feature pool: candidates' feature vectors computed in worker processes are the ones computed
here, a dead worker costs only time, and a tuning run chooses the same candidates with or without it."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

from codegen.target import Target
from tir import IRModule
from tuner import tune, workloads
from tuner.database import Database, workload_key
from tuner.feature_pool import FeaturePool, candidate_features
from tuner.space import SpaceGenerator

from .fake_runner import FakeRunner

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers")

CUDA = Target.parse("cuda")


def _candidates(count: int) -> list:
    mod = workloads.make("matmul", "256,256,256")
    space = SpaceGenerator(CUDA)
    return [space.sample(mod, seed).mod for seed in range(count)]


def test_vectors_from_the_workers_are_the_ones_computed_here():
    mods = _candidates(7)
    mods.insert(3, IRModule({}))  # no function to featurize: zeros
    expected = [candidate_features(mod, CUDA, 2 * 256**3) for mod in mods]
    assert not expected[3].any() and all(v.any() for i, v in enumerate(expected) if i != 3)
    with FeaturePool(3) as pool:
        assert len(pool._children) == 2
        got = pool.features(mods, CUDA, 2 * 256**3)
        assert pool.features([], CUDA, 1) == []
    assert len(got) == len(mods)
    for vector, want in zip(got, expected):
        np.testing.assert_array_equal(vector, want)


def test_a_dead_worker_costs_only_time():
    mods = _candidates(4)
    expected = [candidate_features(mod, CUDA, 1) for mod in mods]
    with FeaturePool(3) as pool:
        os.kill(pool._children[0].pid, signal.SIGKILL)
        got = pool.features(mods, CUDA, 1)
        assert len(pool._children) == 1  # the dead one is not asked again
        again = pool.features(mods, CUDA, 1)
    for vectors in (got, again):
        for vector, want in zip(vectors, expected):
            np.testing.assert_array_equal(vector, want)


def test_a_stuck_worker_and_an_unpicklable_module_cost_only_time(monkeypatch):
    import tuner.feature_pool as feature_pool

    mods = _candidates(4)
    expected = [candidate_features(mod, CUDA, 1) for mod in mods]
    monkeypatch.setattr(feature_pool, "ANSWER_SECONDS", 0.5)
    with FeaturePool(3) as pool:
        os.kill(pool._children[0].pid, signal.SIGSTOP)  # never answers
        got = pool.features(mods, CUDA, 1)
        assert len(pool._children) == 1

        def unpicklable(_work):
            raise TypeError("cannot pickle")

        monkeypatch.setattr(feature_pool.pickle, "dumps", unpicklable)
        again = pool.features(mods, CUDA, 1)  # the work can't be sent: computed here
        assert pool._children == []
    for vectors in (got, again):
        for vector, want in zip(vectors, expected):
            np.testing.assert_array_equal(vector, want)


def test_a_run_chooses_the_same_candidates_with_feature_workers(tmp_path):
    """Past the random warm-up the cost model ranks samples, mutants and the best records by their
    features: computed by three processes or by one, the records come out identical, in order."""
    mod = workloads.make("matmul", "64,64,64")
    traces = []
    for workers in (1, 3):
        db = tmp_path / f"w{workers}.db"
        tune(mod, "c", 28, db, runner=FakeRunner(), progress=False, search_workers=workers)
        with Database(db) as database:
            records = database.records(workload_key(mod), "c", "fake")
        traces.append([json.dumps(r.trace, sort_keys=True) for r in records])
    assert len(traces[0]) == 28 and traces[0] == traces[1]


@pytest.mark.parametrize("workers", [0, -2, 1.5, "4", True])
def test_a_bad_number_of_search_workers_is_refused_before_any_file_is_made(workers, tmp_path):
    db = tmp_path / "records.db"
    with pytest.raises(ValueError, match=r"search_workers must be a whole number of at least 1"):
        tune(workloads.matmul(8, 8, 8), "c", trials=1, db=db, search_workers=workers, progress=False)
    assert not db.exists()
