"""The run phase of a measurement: one runner process that loads, checks and times candidates.

``Measurer`` (tuner/measure/__init__.py) starts a :class:`RunnerProcess`, a
spawned child (a fresh interpreter: it alone owns the GPU context, and the
tuner never imports CuPy) that receives the workload's arguments and expected
outputs once, in its :class:`RunnerConfig`. For each candidate the tuner sends
the built source and function descriptions; the runner loads them with the
target's runtime, runs once on fresh copies of the arguments (outputs poisoned
with NaN), compares with the expected outputs, and only then times it with the timer
``Module.benchmark`` uses (codegen/timing.py: a warm-up, then ``number``
grown until one repeat lasts at least ``min_repeat_seconds``). The
tuner waits for each answer with a time limit: a runner that does not answer is
killed (:class:`RunnerTimeout`), one that dies says how (:class:`RunnerDied`),
and either way the tuner starts a new one and goes on.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

from codegen.build import generate_source
from codegen.errors import BuildError, CompileError, LaunchError, RuntimeUnavailableError
from codegen.program import CompiledFunction
from codegen.target import Target
from codegen.timing import time_calls
from tir import IRModule

from .arrays import fresh_arguments, mismatch
from .processes import Child

# Importing the runtime, and on a GPU creating its context, can take a while on a cold machine.
STARTUP_SECONDS = 300.0


class MeasureError(RuntimeError):
    """Measurement cannot start: the runner does not start, or the reference outputs cannot be made."""


class RunnerUnavailableError(MeasureError, RuntimeUnavailableError):
    """The target's runtime cannot start here (no CuPy, no GPU, not a Mac); the message says the fix."""


class RunnerTimeout(Exception):
    """The runner did not answer within the time limit."""


class RunnerDied(Exception):
    """The runner process ended while working; the message says how (e.g. "signal SIGSEGV")."""


@dataclass(frozen=True)
class RunnerConfig:
    """What the runner is given once: the workload's arguments and the outputs a candidate must produce.

    ``outputs`` are the indices of the parameters compared (the ones the workload writes),
    ``output_names`` their names, ``poisoned`` the outputs that start as NaN (all, unless the
    workload reads one before writing it), ``expected`` the arrays in ``outputs`` order (None
    while the runner computes them), ``terms`` about how many products each output element
    sums (float16's tolerance grows with it), ``output_dtypes`` the outputs' IR dtypes (bfloat16
    outputs are uint16 bit arrays, compared as values).
    """

    target: str
    device: str | None
    function: str
    arguments: list
    outputs: tuple[int, ...]
    output_names: tuple[str, ...]
    poisoned: tuple[int, ...]
    expected: list | None
    repeat: int
    min_repeat_seconds: float
    terms: float = 1.0
    max_number: int = 1000
    output_dtypes: tuple[str, ...] = ()


@dataclass
class RunnerPhases:
    """Where one candidate's time in the runner went: loading (on CUDA, compiling unless the build
    workers left a cubin; ``compiler`` says which built it), the checked first call with its
    copies and comparison, and the timing."""

    load_secs: float = 0.0
    check_secs: float = 0.0
    timing_secs: float = 0.0
    compiler: str = ""


# ---------------------------------------------------------------- inside the runner process


class _Session:
    """The runner's state: its runtime, its config, and the handling of one request."""

    def __init__(self, config: RunnerConfig):
        self.config = config
        target = Target.parse(config.target)
        load = target.backend.loader(config.device)
        self.load = lambda source, functions: load(source, functions, target)
        # An empty module asks the runtime which device it runs on without compiling a kernel.
        empty_source, _ = generate_source(IRModule({}), config.target)
        self.device_name: str = self.load(empty_source, []).device_name
        self.phases = RunnerPhases()  # of the request being answered

    def answer(self, request: tuple) -> tuple:
        kind, *args = request
        if kind == "configure":
            self.config = replace(self.config, **args[0])
            return ("configured",)
        self.phases = RunnerPhases()
        try:
            if kind == "outputs":
                return ("outputs", self._outputs(*args))
            return ("result", *self._measure(*args), self.phases)
        except Exception as error:
            return ("result", _status_of(error), (), _message(error), self.phases)

    def _run_once(self, source: str, functions: Sequence[CompiledFunction]) -> tuple[Any, list]:
        """The loaded module and the arguments after one call."""
        started = time.perf_counter()
        module = self.load(source, functions)
        self.phases.load_secs = time.perf_counter() - started
        self.phases.compiler = getattr(module, "compiler", "")
        arguments = fresh_arguments(self.config.arguments, self.config.poisoned)
        module.run(self.config.function, arguments)
        return module, arguments

    def _outputs(self, source: str, functions: Sequence[CompiledFunction]) -> list:
        _, arguments = self._run_once(source, functions)
        return [arguments[index] for index in self.config.outputs]

    def _measure(self, source: str, functions: Sequence[CompiledFunction]) -> tuple[str, tuple, str]:
        config = self.config
        started = time.perf_counter()
        module, arguments = self._run_once(source, functions)
        dtypes = config.output_dtypes or (None,) * len(config.outputs)
        problems = (
            mismatch(name, arguments[index], expected, config.terms, dtype)
            for index, name, expected, dtype in zip(
                config.outputs, config.output_names, config.expected, dtypes
            )
        )
        problem = next((problem for problem in problems if problem is not None), None)
        checked = time.perf_counter()
        self.phases.check_secs = checked - started - self.phases.load_secs
        if problem is not None:
            return "wrong_result", (), problem
        timing = time_calls(
            lambda number, repeat: module.time(config.function, arguments, number, repeat),
            repeat=config.repeat,
            min_repeat_seconds=config.min_repeat_seconds,
            max_number=config.max_number,
        )
        self.phases.timing_secs = time.perf_counter() - checked
        return "ok", timing.results, ""


def _status_of(error: Exception) -> str:
    if isinstance(error, BuildError):
        return "invalid"
    if isinstance(error, CompileError):
        return "compile_error"
    return "runtime_error"


def _message(error: Exception) -> str:
    if isinstance(error, (BuildError, CompileError, LaunchError)):
        return str(error)
    return f"running the candidate failed:\n{traceback.format_exc()}"


def _runner_main(conn: Connection) -> None:
    try:
        session = _Session(conn.recv())
    except RuntimeUnavailableError as error:
        conn.send(("unavailable", str(error)))
        return
    except BuildError as error:
        conn.send(("failed", str(error)))
        return
    except Exception:
        conn.send(("failed", traceback.format_exc()))
        return
    conn.send(("ready", session.device_name))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return  # the tuner closed the pipe or died
        conn.send(session.answer(request))


# ---------------------------------------------------------------- in the tuner


class RunnerProcess:
    """The tuner's handle on one runner: start it, send it requests with a time limit, stop it."""

    def __init__(self, config: RunnerConfig):
        # A fresh interpreter: nothing of the tuner's state (nor a GPU context) is inherited.
        self.child = Child(_runner_main, fork=False, name="tir-runner")
        try:
            reply = self.request(config, STARTUP_SECONDS)
        except (RunnerTimeout, RunnerDied) as error:
            self.close()
            raise MeasureError(
                f"the measurement runner for target {config.target!r} did not start: {error}"
            ) from None
        except BaseException:
            self.close()
            raise
        if reply[0] == "unavailable":
            self.close()
            raise RunnerUnavailableError(reply[1])
        if reply[0] != "ready":
            self.close()
            raise MeasureError(
                f"the measurement runner for target {config.target!r} could not start:\n{reply[1]}"
            )
        self.device_name: str = reply[1]

    @property
    def pid(self) -> int:
        return self.child.pid

    def request(self, message: object, timeout: float | None) -> tuple:
        """Send ``message`` and wait up to ``timeout`` seconds (None: no limit) for the answer."""
        conn = self.child.conn
        try:
            conn.send(message)
        except OSError:
            raise RunnerDied(self.child.how_it_ended()) from None
        if not conn.poll(timeout):
            raise RunnerTimeout(f"no answer within {timeout:g} s")
        try:
            return conn.recv()
        except (EOFError, OSError):
            raise RunnerDied(self.child.how_it_ended()) from None

    def close(self) -> None:
        self.child.kill()
