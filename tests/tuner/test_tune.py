"""End to end: tune() records measurements, resumes, and apply_best rebuilds a correct kernel."""

from __future__ import annotations

import numpy as np
import pytest

from codegen import build
from tuner import Database, NoRecordError, apply_best, tune, workload_key, workloads


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    db = tmp_path_factory.mktemp("tune") / "tuning.db"
    mod = workloads.make("matmul", "64,64,64")
    result = tune(mod, "c", trials=8, db=db, seed=1, batch_size=4, progress=False)
    return mod, db, result


def test_tune_records_every_trial(tuned):
    mod, db, result = tuned
    assert result.trials == 8
    with Database(db) as database:
        records = database.records(workload_key(mod), "c")
    assert len(records) == 8
    assert result.best is not None and result.best_gflops > 0
    assert [trial for trial, _ in result.history] == list(range(1, 9))
    best_so_far = [gflops for _, gflops in result.history]
    assert best_so_far == sorted(best_so_far)


def test_tune_resumes_without_measuring_a_trace_twice(tuned):
    mod, db, _ = tuned
    again = tune(mod, "c", trials=4, db=db, seed=1, batch_size=4, progress=False)
    assert again.trials == 4
    with Database(db) as database:
        traces = [str(r.trace) for r in database.records(workload_key(mod), "c")]
    assert len(traces) == 12 and len(set(traces)) == 12


def test_apply_best_rebuilds_a_correct_kernel(tuned):
    mod, db, _ = tuned
    sch = apply_best(mod, "c", db)
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype=np.float32), rng.random((64, 64), dtype=np.float32)
    c = np.full((64, 64), np.nan, dtype=np.float32)
    build(sch.mod, "c")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4)


def test_apply_best_without_a_record_says_what_was_looked_up(tuned):
    mod, db, _ = tuned
    with pytest.raises(NoRecordError, match=r"no successful record of workload .* for target 'cuda'"):
        apply_best(mod, "cuda", db)
    with pytest.raises(NoRecordError, match="tune it first"):
        apply_best(workloads.make("matmul", "32,32,32"), "c", db)


def test_guided_rounds_once_the_model_has_trained(tmp_path):
    mod = workloads.make("matmul", "32,32,32")
    result = tune(mod, "c", trials=20, db=tmp_path / "g.db", batch_size=4, progress=False)
    # the cost model trains at 16 samples, so the fifth round is chosen by it
    assert result.trials == 20 and result.errors == 0
    assert (tmp_path / "g.db.c.model.json").exists()
    with Database(tmp_path / "g.db") as database:
        predicted = [r.meta["predicted"] for r in database.records(workload_key(mod), "c")]
    assert len(set(predicted[16:])) > 1
