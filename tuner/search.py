"""Evolutionary search guided by the cost model: ``tune(mod, target, trials, db)``.

Each round samples candidates from the design space (tuner/space), adds the best
records already in the database and mutations of the fittest, scores them all
with the XGBoost cost model (features from each candidate's lowered IR), and
measures the top-scored ones not measured before, plus an epsilon of random
ones, in one batch (tuner/measure). Every measurement goes to the records
database as it completes, and the model retrains on them. ``trials`` is the
total for the workload, target and device in the database, so running the same
command again resumes: it measures only the trials that remain, candidates
already in the database are never measured twice, and their records seed the
population.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import tir
from codegen.target import Target
from codegen.timing import significant
from schedule import Schedule, Trace
from tir.function import IRModule, PrimFunc

from .batches import OVERLAP_MODES, Batches, MeasureClock
from .cost_model import CostModel, CostModelError
from .database import Database, TuningRecord
from .feature_pool import FeaturePool, check_search_workers, default_workers
from .measure.local_runner import LocalRunner, Runner
from .progress import TuningProgress
from .space import SpaceError, SpaceGenerator


@dataclass
class TuneResult:
    """What a tuning run found: the best record so far and how the run went.

    ``trials`` and ``errors`` count every record of the workload, target and device in the
    database (``resumed`` of them were there before this run).
    """

    workload: str
    workload_key: str
    target: str
    device: str
    flops: int
    trials: int
    errors: int
    best: TuningRecord | None
    history: list[tuple[int, float]] = field(default_factory=list)
    seconds: float = 0.0
    cost_model_seconds: float = 0.0  # proposing (sampling, mutating, features, scoring) and training
    measure_seconds: float = 0.0  # waiting for builds and measurements (not overlapped with the above)
    build_seconds: float = 0.0  # the build workers' seconds on this run's candidates, summed over workers
    resumed: int = 0  # trials already in the database when the run started
    measurement: MeasureClock = field(default_factory=MeasureClock)

    def time_split(self) -> str:
        """Where the wall time went, as one line (``tir tune`` and benchmarks/tune_matmul.py print it)."""
        other = self.seconds - self.cost_model_seconds - self.measure_seconds
        return (
            f"{self.seconds:.1f} s wall: {self.cost_model_seconds:.1f} s cost model loop, "
            f"{self.measure_seconds:.1f} s waiting for builds and measurements "
            f"({self.build_seconds:.1f} s of building summed over the workers), {other:.1f} s other; "
            f"{self.measurement}"
        )

    @property
    def best_gflops(self) -> float:
        return self.best.gflops if self.best is not None and self.best.gflops else 0.0

    @property
    def best_seconds(self) -> float | None:
        return self.best.mean_secs if self.best is not None else None


# The first WARMUP_TRIALS candidates of a workload are random samples. Then each round scores
# RANDOM_PER_MEASURED fresh samples per candidate it will measure and breeds GENERATIONS times:
# the PARENTS best-scored (of those samples, their children and the best records) get CHILDREN
# mutants each. It measures the best-scored, except for an epsilon share of plain samples.
# Choosing among many samples finds the tail of the space's distribution; mutating the best
# records searches near what is known to be fast (docs/ARCHITECTURE.md, "Search").
WARMUP_TRIALS = 16
RANDOM_PER_MEASURED = 8
GENERATIONS = 2
PARENTS = 8
CHILDREN = 2


def _trace_key(trace_json: dict) -> str:
    return json.dumps(trace_json, sort_keys=True)


def tune(
    mod: IRModule | PrimFunc,
    target: Target | str = "c",
    trials: int = 64,
    db: str | Path | Database = "tuning.db",
    *,
    seed: int = 0,
    batch_size: int | None = None,
    workload_name: str | None = None,
    reference=None,
    epsilon: float = 0.25,
    workers: int | None = None,
    progress: bool = True,
    guided: bool = True,
    runner: Runner | None = None,
    overlap: str = "auto",
    search_workers: int | None = None,
) -> TuneResult:
    """Measure candidates of ``mod`` on ``target`` until ``db`` holds ``trials`` of them, and record them.

    ``trials`` is the total for this workload, target and device in the
    database (failures included): a run resumed after Ctrl-C measures only what
    remains, and a run whose trials are all done measures nothing and returns
    the best record. ``guided=False`` measures random samples of the same space
    (the baseline the cost model must beat). ``reference`` is a function of the
    input arrays returning the expected outputs (built-in workloads pass their
    numpy reference); without it the unscheduled program built for C is the
    reference. ``runner`` says where candidates are built and measured:
    ``LocalRunner(workers)`` (the default) or ``RayRunner(address)``; a runner
    passed in is left open for the caller to close. A target whose runtime
    cannot run here (local runner) raises RuntimeUnavailableError before the
    database file is created. ``overlap`` proposes the next batch while the last
    one is built, and on GPU targets measured too (one of ``OVERLAP_MODES``; see
    tuner/batches.py; a Ray session measures its batches at once). ``search_workers`` is how
    many processes compute the proposed candidates' feature vectors (default: half the cores,
    at most 8, with the local runner; 1 computes them in this one; tuner/feature_pool.py):
    the result is the same.
    """
    if overlap not in OVERLAP_MODES:
        raise ValueError(f"tune(overlap={overlap!r}): expected one of {', '.join(OVERLAP_MODES)}")
    check_search_workers(search_workers)
    target = Target.parse(target)
    own_runner = runner is None
    runner = runner if runner is not None else LocalRunner(workers)
    runner.check(target)  # before the database file: where the target cannot run, none is left behind
    database = db if isinstance(db, Database) else Database(db)
    model = _load_model(_model_path(database, target), seed) if guided else CostModel(seed=seed)
    features = FeaturePool(search_workers or default_workers(runner))
    try:
        with (
            TuningTask(
                mod,
                target,
                database,
                runner,
                model,
                name=workload_name,
                reference=reference,
                seed=seed,
                epsilon=epsilon,
                guided=guided,
                batch_size=batch_size,
                trials=trials,
                overlap=overlap,
                features=features,
            ) as task,
            TuningProgress(task.result.workload, trials, enabled=progress) as bar,
        ):
            result = task.result
            bar.start_at(result.trials, result.best_gflops, result.errors)
            if result.resumed:
                bar.note(_resume_message(result, trials))
            while True:
                count = min(task.batch_size, trials - result.trials - task.batches.in_flight)
                # With overlap, what is proposed now is measured after the batch before it comes back.
                proposed = task.step(count, bar.update)
                if not proposed and not task.batches.in_flight:
                    if count > 0:
                        bar.note("the design space has no unmeasured candidate left")
                    break
    finally:
        features.close()
        if own_runner:
            runner.close()
        if not isinstance(db, Database):
            database.close()
    return task.result


class TuningTask:
    """One workload's search: its measurement session, the candidates seen, the best so far.

    ``tune`` runs one task to its trial budget; ``tune_tasks`` (tuner/tasks.py) runs
    several, one round at a time, sharing one cost ``model``. ``round(count)``
    proposes, measures and records ``count`` candidates and trains the model on them.
    ``result.trials`` counts the workload's records for this target and device, those
    already in the database (``result.resumed``) included. ``trials``, when known, skips
    retraining the model on the records of a workload that needs no more. ``tune`` calls
    ``step``, which overlaps batches (``overlap``); ``round`` is a whole batch measured.
    """

    def __init__(
        self,
        mod: IRModule | PrimFunc,
        target: Target,
        database: Database,
        runner: Runner,
        model: CostModel,
        *,
        name: str | None = None,
        reference=None,
        seed: int = 0,
        epsilon: float = 0.25,
        guided: bool = True,
        batch_size: int | None = None,
        trials: int | None = None,
        overlap: str = "none",
        features: FeaturePool | None = None,
    ):
        self.mod = mod if isinstance(mod, IRModule) else IRModule.from_func(mod)
        self.features = features if features is not None else FeaturePool(1)
        self.target = target
        self.database = database
        self.model = model
        self.seed, self.epsilon, self.guided = seed, epsilon, guided
        self.batch_size = batch_size or 8
        self.exhausted = False
        self._started = time.perf_counter()
        self._feature_seconds = 0.0
        # The measurer runs the module's main function: its name, FLOPs and key come from that one.
        name = name or self.mod.main_name()
        self.key = database.commit_workload(self.mod, name)
        self.flops = tir.flop_count(self.mod.main_function())
        self.rng = random.Random(seed)
        self.space = SpaceGenerator(target)
        self.session = runner.session(self.mod, target, reference=reference, seed=seed)
        try:
            self.device = self.session.device_name
            records = database.records(self.key, str(target), self.device)
            self.seen = {_trace_key(r.trace) for r in records}
            needs_more = trials is None or len(records) < trials
            if guided and model.num_samples == 0 and records and needs_more:
                self._feature_seconds += _learn_records(
                    model, records, self.mod, target, self.flops, self.key, self.features
                )
            best = _best(database, self.key, target, self.device)
            self.result = TuneResult(
                name, self.key, str(target), self.device, self.flops, len(records), 0, best
            )
            self.result.resumed = len(records)
            self.result.errors = sum(r.status != "ok" for r in records)
            self.elders = _Elders(self.mod, target, self.flops, self.features)
            self.batches = Batches(self.session, overlap, target)
        except BaseException:
            self.session.close()
            raise

    def round(self, count: int, update=None) -> int:
        """Propose, measure and record up to ``count`` candidates (``update(best_gflops, errors)``
        after each); how many (0 once the space has nothing new: ``exhausted``). Needs
        ``overlap="none"``, so that the batch is measured before it returns."""
        proposed = self.step(count, update)
        self.exhausted = proposed == 0
        return proposed

    def step(self, count: int, update=None) -> int:
        """Propose up to ``count`` candidates and submit them; record the batches that are done.
        Returns how many were proposed."""
        pool: list[_Scored] = []
        if count > 0:
            pool, scored_seconds = _propose(
                self.space,
                self.model,
                self.mod,
                self.database,
                self.key,
                self.target,
                self.device,
                self.rng,
                count,
                self.seen,
                self.epsilon,
                self.guided,
                self.flops,
                self.elders,
                self.features,
            )
            self._feature_seconds += scored_seconds
            self.seen.update(c.key for c in pool)
        for measured_pool, results in self.batches.submit(pool):
            records = [
                _record(self.key, self.target, self.device, c, m, self.flops, self.seed)
                for c, m in zip(measured_pool, results)
            ]
            _absorb(self.result, self.database, records, results, update)
            if self.guided:
                gflops = np.asarray([r.gflops or 0.0 for r in records])
                self.model.update(np.stack([c.features for c in measured_pool]), gflops, workload=self.key)
                self.model.save(_model_path(self.database, self.target))
        return len(pool)

    def close(self) -> None:
        """Stop the work in flight, close the measurement session, finish the result (times, best)."""
        try:
            self.batches.close()
        finally:
            self.session.close()
        result = self.result
        result.measure_seconds = self.batches.wait_seconds
        result.measurement = self.batches.clock
        result.seconds = time.perf_counter() - self._started
        result.cost_model_seconds = (
            self.model.training_seconds + self.model.prediction_seconds + self._feature_seconds
        )
        result.best = _best(self.database, self.key, self.target, self.device) or result.best

    def __enter__(self) -> TuningTask:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _resume_message(result: TuneResult, trials: int) -> str:
    best = f"best {significant(result.best_gflops)} GFLOPS"
    if result.resumed >= trials:
        return (
            f"all {trials} trials already measured ({result.resumed} in the database, {best}); nothing to do"
        )
    return f"resuming: {result.resumed} of {trials} trials already measured ({best})"


def _absorb(result: TuneResult, database: Database, records: list[TuningRecord], measured, update) -> None:
    """Store one measured batch and count it into ``result``; ``update(best_gflops, errors)`` per record."""
    for record, outcome in zip(records, measured):
        database.add(record)
        result.trials += 1
        result.errors += outcome.status != "ok"
        result.build_seconds += outcome.build_secs or 0.0
        if record.gflops and record.gflops > result.best_gflops:
            result.best = record
        result.history.append((result.trials, result.best_gflops))
        if update is not None:
            update(result.best_gflops, result.errors)


@dataclass(eq=False)
class _Scored:
    """A candidate with its trace (as JSON and as the key that deduplicates it) and its features."""

    sch: Schedule
    trace_json: dict
    key: str
    features: np.ndarray | None  # None until the group it was admitted with is featurized
    score: float = 0.0
    family: str = ""  # the key of the sample or record it descends from by mutation

    def __post_init__(self):
        self.family = self.family or self.key

    @property
    def trace(self) -> Trace:
        return self.sch.trace

    @property
    def mod(self) -> IRModule:
        return self.sch.mod


def _propose(
    space,
    model,
    mod,
    database,
    key,
    target,
    device,
    rng,
    count,
    seen,
    epsilon,
    guided,
    flops,
    elders,
    features,
):
    """``count`` unmeasured candidates: the cost model's favourites plus an epsilon of random ones."""
    started = time.perf_counter()
    keys = set(seen)

    def admit(schedules, family: str = "") -> list[_Scored]:
        """The schedules neither measured nor proposed yet this round (their features come after,
        a group at a time: ``_featurize``)."""
        fresh = []
        for sch in schedules:
            trace_json = sch.trace.as_json()
            trace_key = _trace_key(trace_json)
            if trace_key not in keys:
                keys.add(trace_key)
                fresh.append(_Scored(sch, trace_json, trace_key, None, family=family))
        return fresh

    # Until the model has seen a few measurements its scores mean little: the first batches
    # are random samples.
    guided = guided and model.is_trained and len(seen) >= WARMUP_TRIALS
    samples = _sample_new(space, mod, rng, count * (RANDOM_PER_MEASURED if guided else 1), admit)
    _featurize(features, target, flops, samples)
    if not guided:
        return samples[:count], time.perf_counter() - started
    # The best records so far breed but are not measured again.
    elders = elders.of(database.best(key, str(target), device, k=max(PARENTS, count)))
    population = list(samples)
    for _generation in range(GENERATIONS):
        _score(model, population + elders)
        parents = sorted(population + elders, key=lambda c: -c.score)[: max(PARENTS, count)]
        children = []
        for parent in parents:
            children += admit(_mutants(space, parent, mod, rng, CHILDREN), family=parent.family)
        _featurize(features, target, flops, children)
        population += children
    _score(model, population)
    return _select(population, samples, count, epsilon, rng), time.perf_counter() - started


class _Elders:
    """The best records as candidates to breed from, each replayed and featurized once per run
    (the best records of one round are mostly those of the round before)."""

    def __init__(self, mod: IRModule, target: Target, flops: int, features: FeaturePool):
        self.mod, self.target, self.flops, self.features = mod, target, flops, features
        self._known: dict[str, _Scored] = {}

    def of(self, records: list[TuningRecord]) -> list[_Scored]:
        found = []
        replayed = _replayed([r for r in records if _trace_key(r.trace) not in self._known], self.mod)
        vectors = self.features.features([sch.mod for _, sch in replayed], self.target, self.flops)
        for (record, sch), vector in zip(replayed, vectors):
            trace_json = sch.trace.as_json()
            self._known[_trace_key(record.trace)] = _Scored(sch, trace_json, _trace_key(trace_json), vector)
        for record in records:
            elder = self._known.get(_trace_key(record.trace))
            if elder is not None:
                found.append(elder)
        return found


def _select(
    population: list[_Scored], samples: list[_Scored], count: int, epsilon: float, rng
) -> list[_Scored]:
    """The ``count`` to measure. Half of the exploited ones are the best-scored of everything, at
    most one per family (a sample and its mutants), so a round never spends itself on
    near-copies of one known kernel; the other half are the best-scored plain samples, which
    keep finding fast kernels elsewhere in the space; an epsilon share are random samples."""
    explore = min(math.ceil(epsilon * count), count)
    exploit = count - explore
    chosen: list[_Scored] = []
    families: set[str] = set()
    for candidate in sorted(population, key=lambda c: -c.score):
        if len(chosen) == math.ceil(exploit / 2):
            break
        if candidate.family not in families:
            families.add(candidate.family)
            chosen.append(candidate)
    rest = sorted((c for c in samples if c not in chosen), key=lambda c: -c.score)
    chosen += rest[: exploit - len(chosen)]
    unchosen = [c for c in samples if c not in chosen]
    chosen += rng.sample(unchosen, min(count - len(chosen), len(unchosen)))
    if len(chosen) < count:  # few samples left in a small space: fill with the best-scored
        chosen += [c for c in sorted(population, key=lambda c: -c.score) if c not in chosen][
            : count - len(chosen)
        ]
    return chosen


def _sample_new(space, mod, rng, count, admit) -> list[_Scored]:
    """Up to ``count`` random candidates that ``admit`` accepts (a resumed run skips what it measured)."""
    found: list[_Scored] = []
    for _ in range(count * 4):
        if len(found) == count:
            break
        try:
            found += admit([space.sample(mod, rng.randrange(1 << 31))])
        except SpaceError:
            continue
    return found


def _mutants(space, parent: _Scored, mod, rng, children: int):
    for _ in range(children):
        child = space.mutate(parent.sch, mod, rng)
        if child is not None:
            yield child


def _featurize(features: FeaturePool, target: Target, flops: int, candidates: list[_Scored]) -> None:
    for candidate, vector in zip(candidates, features.features([c.mod for c in candidates], target, flops)):
        candidate.features = vector


def _score(model: CostModel, population: list[_Scored]) -> None:
    if population:
        scores = model.predict(np.stack([c.features for c in population]))
        for candidate, score in zip(population, scores):
            candidate.score = float(score)


def _replayed(records, mod) -> list[tuple[TuningRecord, Schedule]]:
    """Each record with its trace replayed on ``mod``; a record from an older space that no
    longer replays is skipped."""
    replayed = []
    for record in records:
        try:
            sch = Schedule(mod)
            Trace.apply_json_to_schedule(record.trace, sch)
        except Exception:  # noqa: BLE001 - any failure of an old trace only skips it
            continue
        replayed.append((record, sch))
    return replayed


def _record(key, target, device, candidate: _Scored, measured, flops: int, seed: int) -> TuningRecord:
    ok = measured.status == "ok"
    meta = {"seed": seed, "build_secs": measured.build_secs, "predicted": candidate.score}
    if measured.node:
        meta["node"] = measured.node  # the Ray node that measured it
    return TuningRecord(
        workload_key=key,
        target=str(target),
        device=measured.device or device,
        trace=candidate.trace_json,
        run_secs=tuple(measured.run_secs) if ok else (),
        gflops=flops / measured.mean_secs / 1e9 if ok and measured.mean_secs else None,
        status=measured.status,
        error=measured.error,
        meta=meta,
    )


def _best(database: Database, key: str, target: Target, device: str) -> TuningRecord | None:
    best = database.best(key, str(target), device, k=1)
    return best[0] if best else None


def _load_model(path: str, seed: int) -> CostModel:
    """The model saved beside the database, or a new one when there is none or it was saved by
    another version of the features (it is then retrained from the records)."""
    if not Path(f"{path}.npz").exists():
        return CostModel(seed=seed)
    try:
        return CostModel.load(path)
    except CostModelError:
        return CostModel(seed=seed)


def _learn_records(
    model: CostModel, records, mod, target, flops: int, key: str, pool: FeaturePool, limit: int = 512
) -> float:
    """Train ``model`` on the newest ``limit`` records already in the database (a run resumed
    without a usable saved model); returns the seconds spent on features."""
    started = time.perf_counter()
    replayed = _replayed(records[-limit:], mod)
    features = pool.features([sch.mod for _, sch in replayed], target, flops)
    throughputs = [record.gflops or 0.0 for record, _ in replayed]
    if features:
        model.update(np.stack(features), np.asarray(throughputs), workload=key)
    return time.perf_counter() - started


def _model_path(database: Database, target: Target) -> str:
    return f"{database.path}.{target.kind}.model"
