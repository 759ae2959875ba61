"""End to end: tune() records measurements, resumes, and apply_best rebuilds a correct kernel."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from codegen import build
from tuner import Database, NoRecordError, apply_best, tune, workload_key, workloads
from tuner.cost_model import CostModel
from tuner.features import FEATURE_LENGTH
from tuner.search import _Scored, _select


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


def test_trials_are_the_total_and_a_rerun_resumes_without_measuring_a_trace_twice(tuned):
    mod, db, first = tuned
    done = tune(mod, "c", trials=8, db=db, seed=1, batch_size=4, progress=False)
    assert (done.trials, done.resumed, done.history) == (8, 8, [])
    assert done.best_gflops == first.best_gflops
    again = tune(mod, "c", trials=12, db=db, seed=1, batch_size=4, progress=False)
    assert (again.trials, again.resumed) == (12, 8)
    assert [trial for trial, _ in again.history] == [9, 10, 11, 12]
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
    # the first 16 candidates are random samples, so the fifth round is chosen by the model
    assert result.trials == 20 and result.errors == 0
    assert (tmp_path / "g.db.c.model.json").exists()
    with Database(tmp_path / "g.db") as database:
        predicted = [r.meta["predicted"] for r in database.records(workload_key(mod), "c")]
    assert len(set(predicted[16:])) > 1


@pytest.mark.parametrize("saved_model", ["deleted", "other_features"])
def test_resumed_run_retrains_a_missing_or_stale_model_from_the_records(tmp_path, saved_model):
    mod = workloads.make("matmul", "32,32,32")
    db = tmp_path / "r.db"
    tune(mod, "c", trials=8, db=db, batch_size=4, progress=False)
    model = tmp_path / "r.db.c.model"
    for path in tmp_path.glob("r.db.c.model.*"):
        path.unlink()
    if saved_model == "other_features":
        config = json.dumps({"format_version": 1, "seed": 0, "trained_on": 0})
        np.savez(f"{model}.npz", feature_names=np.array(["a", "b"]), config=np.array(config))
    tune(mod, "c", trials=12, db=db, batch_size=4, progress=False)
    rebuilt = CostModel.load(model)
    assert rebuilt.num_samples == 12 and rebuilt.is_trained


@pytest.mark.parametrize("overlap", ["measure", "none"])
def test_overlapped_batches_record_every_trial_once_and_train_on_all(tmp_path, overlap):
    """Proposing the next batch while one is measured (the GPU default; the C default overlaps
    the builds only) still measures exactly ``trials`` distinct candidates, each checked, and
    the model learns from every one; so does the plain loop."""
    mod = workloads.make("matmul", "32,32,32")
    db = tmp_path / "o.db"
    result = tune(mod, "c", trials=20, db=db, batch_size=4, progress=False, overlap=overlap)
    assert result.trials == 20 and result.errors == 0
    with Database(db) as database:
        records = database.records(workload_key(mod), "c")
    assert len(records) == 20 and len({json.dumps(r.trace, sort_keys=True) for r in records}) == 20
    assert all(r.status == "ok" for r in records)
    assert CostModel.load(tmp_path / "o.db.c.model").num_samples == 20
    assert result.measure_seconds > 0 and result.build_seconds > 0
    assert "cost model loop" in result.time_split()
    clock = result.measurement  # the measurements' own wall time, beside the search or not
    assert clock.candidates == 20 and clock.batches >= clock.runner > 0
    assert clock.runner >= clock.load + clock.check + clock.timing and clock.timing > 0
    assert clock.nvrtc == 0 and "in the runner" in result.time_split()


def test_tune_names_an_unknown_overlap_mode(tmp_path):
    with pytest.raises(ValueError, match="expected one of auto, measure, build, none"):
        tune(workloads.make("matmul", "32,32,32"), "c", trials=1, db=tmp_path / "x.db", overlap="always")


def scored(key: str, score: float, family: str = "") -> _Scored:
    return _Scored(None, {}, key, np.zeros(FEATURE_LENGTH, dtype=np.float32), score, family)


def test_a_round_never_spends_itself_on_one_family():
    samples = [scored(f"s{i}", 0.1 * i) for i in range(10)]
    mutants = [scored(f"m{i}", 2.0 + i, family="s0") for i in range(6)]
    chosen = _select(samples + mutants, samples, count=8, epsilon=0.25, rng=random.Random(0))
    keys = [c.key for c in chosen]
    assert len(keys) == len(set(keys)) == 8
    # One mutant (the best), the best-scored samples, then two random samples.
    assert keys[:6] == ["m5", "s9", "s8", "s7", "s6", "s5"]
    assert all(k.startswith("s") and int(k[1:]) < 5 for k in keys[6:])
