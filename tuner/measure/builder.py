"""The build phase of a measurement: candidates lowered, printed and compiled in worker processes.

``Measurer.measure`` (tuner/measure/__init__.py) hands a batch of
:class:`BuildTask` to a :class:`BuildPool`. Each worker is a child process
(forked on Linux, so it starts with everything the tuner imported) that runs
``generate_source`` and the backend's ``precompile`` (for C, ``compile_library``,
which leaves the shared library in the on-disk cache: the runner then only
loads it). A worker
takes one candidate at a time, so a candidate's time limit starts when it is
sent; a worker past the limit is killed with its compiler, that candidate is
"timeout", and the other workers go on undisturbed. Whatever goes wrong inside
a worker comes back as a :class:`BuildOutcome` with a status and the message;
a worker that dies is reported the same way and replaced.
"""

from __future__ import annotations

import pickle
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from codegen.build import generate_source
from codegen.errors import BuildError, CompileError, RuntimeUnavailableError
from codegen.program import CompiledFunction
from codegen.target import Target
from tir import IRModule

from .processes import Child

BUILT = "built"


@dataclass(frozen=True)
class BuildTask:
    """One candidate to build: its scheduled module, the target's text, and (tests only) a source to
    compile instead of the printed one."""

    mod: IRModule
    target: str
    source_override: str | None = None


@dataclass(frozen=True)
class BuildOutcome:
    """``status`` is "built" (then ``source`` and ``functions`` are set) or the failure's status in
    tuner.database.STATUSES with ``error`` saying why."""

    status: str
    source: str = ""
    functions: tuple[CompiledFunction, ...] = ()
    error: str = ""
    build_secs: float = 0.0


OnBuilt = Callable[[int, BuildOutcome], None]


def build_candidate(task: BuildTask) -> BuildOutcome:
    """Lower, print and (C) compile one candidate; never raises."""
    start = time.perf_counter()
    try:
        target = Target.parse(task.target)
        source, functions = generate_source(task.mod, target)
        if task.source_override is not None:
            source = task.source_override
        if target.backend.precompile is not None:
            _precompile(target, source)
    except BuildError as error:
        return BuildOutcome("invalid", error=str(error), build_secs=time.perf_counter() - start)
    except CompileError as error:
        return BuildOutcome("compile_error", error=str(error), build_secs=time.perf_counter() - start)
    except Exception:
        text = f"building the candidate failed:\n{traceback.format_exc()}"
        return BuildOutcome("compile_error", error=text, build_secs=time.perf_counter() - start)
    return BuildOutcome(BUILT, source, tuple(functions), build_secs=time.perf_counter() - start)


def _precompile(target: Target, source: str) -> None:
    """Compile ahead where this machine can; a build on a machine without the compiler (a Ray node
    that only builds) leaves the compiling to the measuring node, which compiles what it loads."""
    with suppress(RuntimeUnavailableError):
        target.backend.precompile(source, target)


def _worker_main(conn: Connection) -> None:
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):
            return  # the tuner closed the pipe or died
        try:
            task = pickle.loads(payload)
        except Exception:
            conn.send(
                BuildOutcome("compile_error", error=f"unreadable build task:\n{traceback.format_exc()}")
            )
            continue
        conn.send(build_candidate(task))


class _Worker:
    """One build process and the candidate it is building (``index``, since ``started``)."""

    def __init__(self):
        # Forked on Linux: it starts at once with the tuner's modules loaded. macOS forbids fork
        # once its frameworks have started, so there it is a fresh interpreter.
        self.child = Child(_worker_main, fork=sys.platform.startswith("linux"), name="tir-build")
        self.index = -1
        self.started = 0.0

    @property
    def conn(self) -> Connection:
        return self.child.conn

    def send(self, index: int, payload: bytes) -> None:
        self.child.conn.send_bytes(payload)
        self.index, self.started = index, time.monotonic()

    def receive(self) -> BuildOutcome:
        """The outcome of the current candidate; a worker that died says how."""
        try:
            return self.child.conn.recv()
        except (EOFError, OSError):
            return BuildOutcome(
                "compile_error",
                error=f"the build worker died ({self.child.how_it_ended()}) while building the candidate",
                build_secs=time.monotonic() - self.started,
            )


class BuildPool:
    """Up to ``workers`` build processes, started on demand and kept between batches."""

    def __init__(self, workers: int, timeout: float):
        if workers < 1:
            raise ValueError(f"a measurement needs at least one build worker; got workers={workers}")
        self.workers = workers
        self.timeout = timeout
        self._idle: list[_Worker] = []

    @property
    def pids(self) -> list[int]:
        return [worker.child.pid for worker in self._idle]

    def build(self, tasks: Sequence[BuildTask], on_built: OnBuilt | None = None) -> list[BuildOutcome]:
        """One outcome per task, in order. ``on_built(index, outcome)``, if given, is called as each
        one ends (in the order they end), while the other workers go on building."""
        outcomes: list[BuildOutcome | None] = [None] * len(tasks)

        def record(index: int, outcome: BuildOutcome) -> None:
            outcomes[index] = outcome
            if on_built is not None:
                on_built(index, outcome)

        pending = deque(range(len(tasks)))
        busy: dict[Connection, _Worker] = {}
        try:
            while pending or busy:
                while pending and len(busy) < self.workers:
                    index = pending.popleft()
                    worker = self._dispatch(index, tasks[index], record)
                    if worker is not None:
                        busy[worker.conn] = worker
                if busy:
                    self._collect(busy, record)
        except BaseException:
            for worker in busy.values():
                worker.child.kill()
            raise
        return outcomes  # type: ignore[return-value]

    def _dispatch(self, index: int, task: BuildTask, record: OnBuilt) -> _Worker | None:
        try:
            payload = pickle.dumps(task)
        except Exception as error:
            record(
                index,
                BuildOutcome(
                    "compile_error", error=f"the candidate cannot be sent to a build worker: {error!r}"
                ),
            )
            return None
        worker = self._idle_worker()
        try:
            worker.send(index, payload)
        except OSError:  # it died while idle: one fresh worker
            worker.child.kill()
            worker = _Worker()
            worker.send(index, payload)
        except BaseException:
            worker.child.kill()
            raise
        return worker

    def _idle_worker(self) -> _Worker:
        """A live idle worker, or a new one (an idle worker may have been killed from outside)."""
        while self._idle:
            worker = self._idle.pop()
            if worker.child.is_alive():
                return worker
            worker.child.kill()
        return _Worker()

    def _collect(self, busy: dict[Connection, _Worker], record: OnBuilt) -> None:
        """Wait until a worker answers or the oldest candidate's time is up; record what ended."""
        oldest = min(worker.started for worker in busy.values())
        for conn in wait(list(busy), timeout=max(0.0, oldest + self.timeout - time.monotonic())):
            worker = busy.pop(conn)
            outcome = worker.receive()
            if worker.child.is_alive():
                self._idle.append(worker)
            else:
                worker.child.kill()
            record(worker.index, outcome)
        now = time.monotonic()
        for conn, worker in list(busy.items()):
            # An answer that arrived while ``record`` ran (the runner timing a GPU candidate) is read
            # on the next pass, not mistaken for a build over its time (a dead child polls too).
            if now - worker.started >= self.timeout and not conn.poll():
                del busy[conn]
                worker.child.kill()
                outcome = BuildOutcome(
                    "timeout",
                    error=f"building the candidate took longer than {self.timeout:g} s "
                    "(build_timeout); its build worker was killed",
                    build_secs=now - worker.started,
                )
                record(worker.index, outcome)

    def close(self) -> None:
        """Stop the idle workers (a batch in progress stops its own when interrupted)."""
        while self._idle:
            self._idle.pop().child.kill()
