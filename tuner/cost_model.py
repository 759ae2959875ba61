"""The tuner's cost model: gradient-boosted trees that score candidates before they are measured.

The search (tuner/search.py) extracts a feature vector per sampled candidate
(tuner/features.py), asks ``CostModel.predict`` which ones look fastest, measures
those, and hands the results back with ``CostModel.update``. The model is XGBoost
trained online on every measurement so far, saved beside the records database as
XGBoost's own JSON model plus our samples in an ``.npz`` (no pickle anywhere, so
loading a model never runs code). ``xgboost`` is imported at the first training or
load, so ``import tuner`` stays fast.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .features import FEATURE_LENGTH, FEATURE_NAMES

_FORMAT_VERSION = 1


class CostModelError(ValueError):
    """Samples of the wrong shape or value, or a saved model this version cannot use."""


class CostModel:
    """XGBoost regressor of normalized throughput, retrained as measurements arrive.

    Objective: squared error on ``gflops / best gflops of the same workload``, as
    MetaSchedule's XGBModel does by default, rather than ``rank:pairwise``. The
    target is scale-free, so workloads of very different speeds (and machines) share
    one model; a failed candidate is simply 0 and the model learns how far below the
    best it is, where a pairwise loss only learns the order and spends its effort
    on pairs of nearly equal candidates; and the cost is linear in the samples,
    not in pairs. Only the order of ``predict``'s scores matters to the search.

    Throttling, so that retraining never dominates tuning time: ``update`` retrains
    only when at least ``min_new_samples`` samples and at least ``growth`` times the
    samples of the last training have arrived since it. Training time grows with the
    samples, so retraining at geometrically spaced sizes keeps the total a small
    multiple of one final training. Boosting stops at ``max_rounds``.

    Shallow trees (depth 3), a small learning rate and 70% of the features per tree:
    the model trains on tens of noisy samples, and on measured C and H200 matmul
    records these settings ranked unseen candidates best among those tried
    (Spearman 0.54 and 0.71 against 0.49 and 0.63 for depth 6, eta 0.2, 64 rounds,
    at 64 samples; docs/ARCHITECTURE.md). Deterministic given ``seed``: XGBoost
    runs on ``nthread`` threads with the ``hist`` method and draws its feature
    columns from ``seed``, and the scores before the first training come from a
    generator seeded with ``seed``.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        min_new_samples: int = 8,
        growth: float = 0.1,
        max_rounds: int = 150,
        max_depth: int = 3,
        learning_rate: float = 0.1,
        column_sample: float = 0.7,
        nthread: int = 1,
    ):
        self.seed = seed
        self.min_new_samples = min_new_samples
        self.growth = growth
        self.max_rounds = max_rounds
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.column_sample = column_sample
        self.nthread = nthread
        self.training_seconds = 0.0
        self.prediction_seconds = 0.0
        self._features = np.zeros((0, FEATURE_LENGTH), dtype=np.float32)
        self._gflops = np.zeros(0, dtype=np.float64)
        self._workloads = np.zeros(0, dtype=str)
        self._trained_on = 0
        self._booster = None
        self._rng = np.random.default_rng(seed)

    # ------------------------------------------------------------ state

    @property
    def num_samples(self) -> int:
        return len(self._gflops)

    @property
    def is_trained(self) -> bool:
        return self._booster is not None

    def __repr__(self) -> str:
        state = f"trained on {self._trained_on}" if self.is_trained else "untrained"
        return f"CostModel({self.num_samples} samples, {state})"

    # ------------------------------------------------------------ learning

    def update(self, features: np.ndarray, gflops: np.ndarray, workload: str = "") -> bool:
        """Add measured candidates of one workload (failed ones with gflops 0) and retrain
        if enough new samples arrived; returns whether it retrained.

        ``features`` has shape ``(n, FEATURE_LENGTH)`` (tuner.features.extract_batch);
        ``gflops`` has n values. ``workload`` (e.g. the structural hash) groups samples
        whose throughputs are normalized together.
        """
        features = self._check_features(features, "update")
        gflops = np.asarray(gflops, dtype=np.float64).reshape(-1)
        if len(gflops) != len(features):
            raise CostModelError(
                f"CostModel.update: {len(features)} feature rows but {len(gflops)} gflops values; "
                "pass one measurement per candidate"
            )
        if not np.all(np.isfinite(gflops)) or np.any(gflops < 0):
            raise CostModelError(
                "CostModel.update: gflops must be finite and >= 0 (record a failed candidate as 0); "
                f"got {gflops[~np.isfinite(gflops) | (gflops < 0)][:5].tolist()}"
            )
        self._features = np.concatenate([self._features, features])
        self._gflops = np.concatenate([self._gflops, gflops])
        self._workloads = np.concatenate([self._workloads, np.full(len(gflops), str(workload))])
        if not self._due_for_training():
            return False
        self._train()
        return True

    def _due_for_training(self) -> bool:
        new = self.num_samples - self._trained_on
        return new >= max(self.min_new_samples, self.growth * self._trained_on, 1)

    def _targets(self) -> np.ndarray:
        """Each sample's gflops over the best of its workload (0 where nothing ran)."""
        targets = np.zeros_like(self._gflops)
        for workload in np.unique(self._workloads):
            rows = self._workloads == workload
            best = self._gflops[rows].max()
            if best > 0:
                targets[rows] = self._gflops[rows] / best
        return targets

    def _params(self) -> dict:
        return {
            "objective": "reg:squarederror",
            "tree_method": "hist",
            # Most features are log-scaled or small counts; 64 bins lose little and train
            # several times faster than the default 256.
            "max_bin": 64,
            "max_depth": self.max_depth,
            "eta": self.learning_rate,
            "colsample_bytree": self.column_sample,
            "min_child_weight": 1,
            "seed": self.seed,
            "nthread": self.nthread,
            "verbosity": 0,
        }

    def _train(self) -> None:
        import xgboost

        start = time.perf_counter()
        data = xgboost.DMatrix(self._features, label=self._targets(), feature_names=list(FEATURE_NAMES))
        self._booster = xgboost.train(self._params(), data, num_boost_round=self.max_rounds)
        self._trained_on = self.num_samples
        self.training_seconds += time.perf_counter() - start

    # ------------------------------------------------------------ scoring

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Scores of candidates, higher is better (about 1 for the best seen so far).

        Before the first training the scores are uniform random numbers, so a search
        guided by them samples at random.
        """
        features = self._check_features(features, "predict")
        start = time.perf_counter()
        if self._booster is None:
            scores = self._rng.uniform(size=len(features))
        elif len(features) == 0:
            scores = np.zeros(0)
        else:
            scores = self._booster.inplace_predict(features, validate_features=False)
        self.prediction_seconds += time.perf_counter() - start
        return np.asarray(scores, dtype=np.float64)

    @staticmethod
    def _check_features(features: np.ndarray, caller: str) -> np.ndarray:
        features = np.asarray(features, dtype=np.float32)
        if features.ndim == 1 and features.size == FEATURE_LENGTH:
            features = features.reshape(1, FEATURE_LENGTH)
        if features.ndim != 2 or features.shape[1] != FEATURE_LENGTH:
            raise CostModelError(
                f"CostModel.{caller}: features must have shape (n, {FEATURE_LENGTH}) "
                f"(tuner.features.extract_batch), got {features.shape}"
            )
        return features

    # ------------------------------------------------------------ files

    def save(self, path: str | os.PathLike) -> None:
        """Write ``<path>.json`` (XGBoost's model, when trained) and ``<path>.npz`` (the samples).

        A ``.json`` or ``.npz`` suffix on ``path`` is accepted too. Files are replaced
        atomically, so an interrupted tuning run never leaves half a model.
        """
        model_file, samples_file = _files(path)
        config = {
            "format_version": _FORMAT_VERSION,
            "seed": self.seed,
            "min_new_samples": self.min_new_samples,
            "growth": self.growth,
            "max_rounds": self.max_rounds,
            "max_depth": self.max_depth,
            "learning_rate": self.learning_rate,
            "column_sample": self.column_sample,
            "nthread": self.nthread,
            "trained_on": self._trained_on,
        }
        with _replacing(samples_file) as temporary, open(temporary, "wb") as out:
            np.savez(
                out,
                features=self._features,
                gflops=self._gflops,
                workloads=self._workloads,
                feature_names=np.array(FEATURE_NAMES),
                config=np.array(json.dumps(config)),
            )
        if self._booster is not None:
            with _replacing(model_file) as temporary:
                self._booster.save_model(temporary)
        elif model_file.exists():
            model_file.unlink()  # a stale model would not match the samples beside it

    @classmethod
    def load(cls, path: str | os.PathLike) -> CostModel:
        """The model saved at ``path`` (see ``save``)."""
        model_file, samples_file = _files(path)
        if not samples_file.exists():
            raise FileNotFoundError(f"no cost model at {samples_file} (CostModel.save writes it)")
        with np.load(samples_file, allow_pickle=False) as saved:
            config = json.loads(str(saved["config"]))
            names = tuple(str(n) for n in saved["feature_names"])
            if config.pop("format_version", None) != _FORMAT_VERSION or names != FEATURE_NAMES:
                raise CostModelError(
                    f"the cost model at {samples_file} was saved with other features "
                    f"({len(names)} instead of {FEATURE_LENGTH}) or format; delete {samples_file} and "
                    f"{model_file} to start a new model (the records database is not affected)"
                )
            trained_on = config.pop("trained_on")
            model = cls(**config)
            model._features = saved["features"].astype(np.float32)
            model._gflops = saved["gflops"].astype(np.float64)
            model._workloads = saved["workloads"].astype(str)
        if model_file.exists():
            import xgboost

            model._booster = xgboost.Booster(params={"nthread": model.nthread}, model_file=str(model_file))
            model._trained_on = trained_on
        return model


def _files(path: str | os.PathLike) -> tuple[Path, Path]:
    path = Path(path)
    if path.suffix in (".json", ".npz"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".json"), path.with_name(path.name + ".npz")


@contextmanager
def _replacing(target: Path) -> Iterator[str]:
    """A temporary file name beside ``target`` that replaces it when the block succeeds."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    try:
        yield temporary
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
