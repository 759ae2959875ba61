"""The XGBoost cost model (tuner/cost_model.py): ranking quality, throttled retraining, files.

Data are synthetic: random feature vectors whose "measured" GFLOPS are a known
function of two features, with a region of failed (0 GFLOPS) candidates; the model
must rank held-out candidates like that function does. Settings are small so that
every test trains in well under a second.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tuner.cost_model import CostModel, CostModelError
from tuner.features import FEATURE_LENGTH, FEATURE_NAMES

SMALL = {"max_rounds": 32, "max_depth": 4, "learning_rate": 0.3, "min_new_samples": 1}
THREADS = FEATURE_NAMES.index("log_threads_per_group")
LANES = FEATURE_NAMES.index("vector_lanes")
SHARED = FEATURE_NAMES.index("shared_limit_fraction")


def candidates(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Features and the GFLOPS they 'measure': more threads and wider vectors are faster,
    over-full shared memory fails."""
    features = rng.uniform(0.0, 1.0, size=(n, FEATURE_LENGTH)).astype(np.float32)
    features[:, THREADS] *= 10
    features[:, LANES] = rng.choice([1, 2, 4, 8], size=n)
    gflops = 40.0 * features[:, THREADS] * np.log2(1 + features[:, LANES])
    gflops[features[:, SHARED] > 0.9] = 0.0
    return features, gflops


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    rank_a, rank_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(rank_a, rank_b)[0, 1])


@pytest.fixture(scope="module")
def trained() -> CostModel:
    rng = np.random.default_rng(7)
    model = CostModel(seed=3, **SMALL)
    for _ in range(4):
        model.update(*candidates(rng, 100), workload="matmul")
    return model


def test_ranking_follows_the_measured_function(trained):
    features, gflops = candidates(np.random.default_rng(11), 400)
    scores = trained.predict(features)
    assert scores.shape == (400,)
    assert spearman(scores, gflops) > 0.8
    # Failed candidates sit at the bottom.
    assert np.median(scores[gflops == 0]) < np.percentile(scores[gflops > 0], 10)


def test_predict_before_training_is_random_and_seeded():
    features, _ = candidates(np.random.default_rng(0), 50)
    first, second = CostModel(seed=5), CostModel(seed=5)
    scores = first.predict(features)
    assert not first.is_trained and scores.shape == (50,)
    assert np.all((scores >= 0) & (scores < 1)) and np.std(scores) > 0.1
    np.testing.assert_array_equal(scores, second.predict(features))
    assert first.prediction_seconds > 0 and first.training_seconds == 0


def test_retraining_is_throttled():
    rng = np.random.default_rng(1)
    model = CostModel(seed=0, max_rounds=8, max_depth=3, min_new_samples=20, growth=1.0)
    assert model.update(*candidates(rng, 10)) is False and not model.is_trained
    assert model.update(*candidates(rng, 10)) is True and model.is_trained
    spent = model.training_seconds
    assert spent > 0
    # growth=1.0: the next training waits until the samples have doubled.
    assert model.update(*candidates(rng, 19)) is False
    assert model.training_seconds == spent
    assert model.update(*candidates(rng, 1)) is True
    assert model.training_seconds > spent and model.num_samples == 40


def test_timing_counters_accumulate(trained):
    before = trained.prediction_seconds
    trained.predict(candidates(np.random.default_rng(2), 10)[0])
    assert trained.prediction_seconds > before
    assert trained.training_seconds > 0


def test_training_is_deterministic():
    rng = np.random.default_rng(4)
    samples = candidates(rng, 120)
    held_out = candidates(rng, 50)[0]
    predictions = []
    for _ in range(2):
        model = CostModel(seed=9, **SMALL)
        model.update(*samples)
        predictions.append(model.predict(held_out))
    np.testing.assert_array_equal(predictions[0], predictions[1])


def test_throughput_is_normalized_per_workload():
    rng = np.random.default_rng(5)
    model = CostModel(seed=0, **SMALL)
    for workload, scale in (("small", 1.0), ("large", 1000.0)):
        features, gflops = candidates(rng, 200)
        features[:, 0] = workload == "large"  # the workloads differ in one feature
        model.update(features, gflops * scale, workload=workload)
    features, gflops = candidates(rng, 100)
    small, large = features.copy(), features.copy()
    small[:, 0], large[:, 0] = 0, 1
    # The same schedule is as good relative to its workload's best, whatever the scale.
    assert np.abs(model.predict(small) - model.predict(large)).max() < 0.25
    assert spearman(model.predict(large), gflops) > 0.8


def test_save_and_load_round_trip(tmp_path, trained):
    path = tmp_path / "tuning.cost_model"
    trained.save(path)
    model_file, samples_file = tmp_path / "tuning.cost_model.json", tmp_path / "tuning.cost_model.npz"
    assert json.loads(model_file.read_text())  # XGBoost's own JSON format
    with np.load(samples_file, allow_pickle=False) as saved:
        assert saved["features"].shape == (trained.num_samples, FEATURE_LENGTH)
    loaded = CostModel.load(path)
    features = candidates(np.random.default_rng(3), 64)[0]
    np.testing.assert_array_equal(loaded.predict(features), trained.predict(features))
    assert loaded.num_samples == trained.num_samples and loaded.is_trained
    assert (loaded.seed, loaded.max_rounds, loaded.max_depth) == (3, 32, 4)
    # The loaded model keeps learning where the saved one stopped.
    assert loaded.update(*candidates(np.random.default_rng(4), 50), workload="matmul")
    assert CostModel.load(model_file).num_samples == trained.num_samples  # suffixes accepted


def test_untrained_model_saves_its_samples_only(tmp_path):
    model = CostModel(seed=0, min_new_samples=100)
    model.update(*candidates(np.random.default_rng(6), 10))
    model.save(tmp_path / "m")
    assert (tmp_path / "m.npz").exists() and not (tmp_path / "m.json").exists()
    loaded = CostModel.load(tmp_path / "m")
    assert not loaded.is_trained and loaded.num_samples == 10 and loaded.min_new_samples == 100


def test_saved_model_with_other_features_is_refused(tmp_path, trained):
    trained.save(tmp_path / "m")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as saved:
        arrays = dict(saved)
    arrays["feature_names"] = arrays["feature_names"][:-1]
    np.savez(tmp_path / "m.npz", **arrays)
    with pytest.raises(CostModelError, match="saved with other features.*delete"):
        CostModel.load(tmp_path / "m")
    with pytest.raises(FileNotFoundError, match="no cost model"):
        CostModel.load(tmp_path / "missing")


def test_bad_samples_are_refused_with_the_expected_shape():
    model = CostModel()
    with pytest.raises(CostModelError, match=rf"shape \(n, {FEATURE_LENGTH}\).*\(3, 5\)"):
        model.predict(np.ones((3, 5)))
    features, gflops = candidates(np.random.default_rng(8), 4)
    with pytest.raises(CostModelError, match="4 feature rows but 3 gflops"):
        model.update(features, gflops[:3])
    with pytest.raises(CostModelError, match="finite and >= 0"):
        model.update(features, np.array([1.0, np.nan, 2.0, -1.0]))
    assert model.num_samples == 0
