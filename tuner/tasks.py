"""Many workloads in one run: a task file, a gradient-based task scheduler, and ``tune_tasks``.

``tir tune tasks.toml`` (or ``.json``) reads a :class:`TaskFile`: the workloads
of a model (built-in names with shapes, or script files), how often the model
runs each (``weight``), the target and a total trial budget. ``tune_tasks``
opens one :class:`~tuner.search.TuningTask` per workload (sharing one cost
model and one runner) and spends the budget one round at a time on the task the
:class:`GradientTaskScheduler` picks: after a round each, the one whose weighted
latency is expected to fall most, as in MetaSchedule's gradient-based task
scheduler (Zheng et al., Ansor, section 6): a blend of how fast its best latency
fell over the last rounds and an optimistic guess from its best and its rounds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codegen.target import Target
from tir.function import IRModule

from . import workloads
from .cost_model import CostModel
from .database import Database
from .feature_pool import FeaturePool, check_search_workers, default_workers
from .measure.local_runner import LocalRunner, Runner
from .progress import TuningProgress
from .search import TuneResult, TuningTask, _load_model, _model_path


class TaskFileError(ValueError):
    """A task file that cannot be read: the message names the file, the task and the field."""


@dataclass
class TaskSpec:
    """One workload of a multi-task run: its module, name, numpy reference (built-ins) and weight."""

    name: str
    mod: IRModule
    reference: Callable | None = None
    weight: float = 1.0


@dataclass
class TaskFile:
    """A parsed task file: ``tasks``, the total ``trials``, the ``target`` (default "c")."""

    tasks: list[TaskSpec]
    trials: int
    target: str = "c"


EXAMPLE = """\
target = "c"
trials = 96                      # the total, spent where the scheduler expects the largest gain

[[tasks]]
workload = "matmul"
shape = "256,256,256"
weight = 2                       # the model runs it twice

[[tasks]]
script = "my_kernels.py"         # parsed, never executed
func = "main"
"""


def load_task_file(path: str | Path, load_script: Callable[[Path], IRModule]) -> TaskFile:
    """Read a ``.toml`` or ``.json`` task file (see ``EXAMPLE``); scripts are resolved next to it."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise TaskFileError(f"cannot read the task file {path}: {error.strerror}") from None
    try:
        data = _toml(path).loads(text) if path.suffix == ".toml" else json.loads(text)
    except ValueError as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise TaskFileError(f"{path} is not valid {path.suffix[1:].upper()}: {error}") from None
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not entries or not isinstance(entries, list):
        raise TaskFileError(f"{path} lists no tasks; it needs a list `tasks`, e.g.\n{EXAMPLE}")
    trials = data.get("trials", 64)
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise TaskFileError(f"{path}: trials must be a whole number of at least 1; got {trials!r}")
    tasks = [_task(path, number, entry, load_script) for number, entry in enumerate(entries, 1)]
    return TaskFile(tasks, trials, str(data.get("target", "c")))


def _toml(path: Path):
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise TaskFileError(
            f"{path}: reading TOML needs Python 3.11 or later; write the tasks as JSON"
        ) from None
    return tomllib


def _task(path: Path, number: int, entry, load_script) -> TaskSpec:
    where = f"{path}, task {number}"
    if not isinstance(entry, dict) or ("workload" in entry) == ("script" in entry):
        raise TaskFileError(f"{where}: give either `workload` (a built-in name) or `script` (a .py file)")
    weight = entry.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
        raise TaskFileError(f"{where}: weight must be a positive number; got {weight!r}")
    if "script" in entry:
        module = load_script(path.parent / entry["script"])
        func = entry.get("func") or module.main_name()
        if func not in module:
            raise TaskFileError(f"{where}: {entry['script']} has no function {func!r}")
        name = f"{Path(entry['script']).stem}.{func}"
        return TaskSpec(name, IRModule.from_func(module[func]), None, float(weight))
    name, shape = entry["workload"], entry.get("shape")
    try:
        mod = workloads.make(name, shape, entry.get("dtype", "float32"))
        sizes = workloads.get_workload(name).sizes(shape)
    except workloads.WorkloadError as error:
        raise TaskFileError(f"{where}: {error}") from None
    reference = workloads.reference_for(name, shape, entry.get("dtype", "float32"))
    return TaskSpec(f"{name}[{','.join(map(str, sizes.values()))}]", mod, reference, float(weight))


@dataclass
class GradientTaskScheduler:
    """Chooses the task to tune next from each task's best latency after each of its rounds.

    Every task gets one round first. Then task i scores ``weight_i * (alpha * backward + (1 - alpha)
    * forward)``: ``backward`` is how much its best latency fell per round over the last ``window``
    rounds, ``forward`` its best latency over its rounds (how much one more round might still give,
    optimistically). The highest score is tuned next. A task without a working candidate after
    two rounds is skipped, and a task whose space is used up is retired.
    """

    weights: Sequence[float]
    alpha: float = 0.2
    window: int = 3
    history: list[list[float]] = field(default_factory=list)
    retired: set[int] = field(default_factory=set)

    def __post_init__(self):
        self.history = [[] for _ in self.weights]

    def record(self, task: int, best_seconds: float | None) -> None:
        """Note the best latency of ``task`` after a round (None: no working candidate yet)."""
        self.history[task].append(best_seconds if best_seconds else math.inf)

    def retire(self, task: int) -> None:
        self.retired.add(task)

    def next(self) -> int | None:
        """The task to tune next, or None when every task is retired."""
        alive = [i for i in range(len(self.weights)) if i not in self.retired]
        if not alive:
            return None
        unstarted = [i for i in alive if not self.history[i]]
        if unstarted:
            return unstarted[0]
        return max(alive, key=self.gain)

    def gain(self, task: int) -> float:
        """How much weighted latency one more round of ``task`` is expected to save (seconds)."""
        history, window = self.history[task], self.window
        best = history[-1]
        if math.isinf(best):  # nothing works yet: worth a second round, then only what is left
            return math.inf if len(history) < 2 else -math.inf
        backward = (history[-1 - window] - best) / window if len(history) > window else 0.0
        if math.isinf(backward):
            backward = best  # it started working within the window
        forward = best / len(history)
        return self.weights[task] * (self.alpha * backward + (1 - self.alpha) * forward)


def tune_tasks(
    tasks: Sequence[TaskSpec],
    target: Target | str = "c",
    trials: int = 64,
    db: str | Path | Database = "tuning.db",
    *,
    seed: int = 0,
    batch_size: int | None = None,
    runner: Runner | None = None,
    progress: bool = True,
    guided: bool = True,
    search_workers: int | None = None,
) -> list[TuneResult]:
    """Measure candidates of ``tasks``, a round at a time, where the :class:`GradientTaskScheduler`
    expects the largest gain, until ``db`` holds ``trials`` of them in all (as in ``tune``, the
    records already there count: a rerun resumes); one result per task, in order.
    ``search_workers`` as in ``tune``: one pool of feature processes serves every task.

    >>> specs = load_task_file("model.toml", cli.load_script).tasks  # doctest: +SKIP
    >>> [r.trials for r in tune_tasks(specs, "c", trials=96)]  # doctest: +SKIP
    [48, 16, 32]
    """
    if not tasks:
        raise ValueError("tune_tasks needs at least one task")
    check_search_workers(search_workers)
    target = Target.parse(target)
    own_runner = runner is None
    runner = runner if runner is not None else LocalRunner()
    runner.check(target)  # before the database file, as tune does
    database = db if isinstance(db, Database) else Database(db)
    model = _load_model(_model_path(database, target), seed) if guided else CostModel(seed=seed)
    opened: list[TuningTask] = []
    features = FeaturePool(search_workers or default_workers(runner))
    try:
        for number, spec in enumerate(tasks):
            task = TuningTask(
                spec.mod,
                target,
                database,
                runner,
                model,
                name=spec.name,
                reference=spec.reference,
                seed=seed + number,
                guided=guided,
                batch_size=batch_size,
                features=features,
            )
            opened.append(task)
        scheduler = GradientTaskScheduler([spec.weight for spec in tasks])
        with TuningProgress(None, None, enabled=progress) as bar:
            updates = [
                bar.row(t.result.workload, None, t.result.trials, t.result.best_gflops, t.result.errors)
                for t in opened
            ]
            spent = sum(task.result.trials for task in opened)
            if spent:
                bar.note(f"resuming: {spent} of {trials} trials already measured")
            while spent < trials and (chosen := scheduler.next()) is not None:
                task = opened[chosen]
                measured = task.round(min(task.batch_size, trials - spent), updates[chosen])
                if measured == 0:
                    scheduler.retire(chosen)
                    bar.note(f"{task.result.workload}: the design space has no unmeasured candidate left")
                    continue
                spent += measured
                scheduler.record(chosen, task.result.best_seconds)
    finally:
        for task in opened:
            task.close()
        features.close()
        if own_runner:
            runner.close()
        if not isinstance(db, Database):
            database.close()
    return [task.result for task in opened]
