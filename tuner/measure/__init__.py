"""Measurement: candidate schedules in, measured (or failed) results out, without crashing or hanging.

The search (tuner/search.py) hands a batch of :class:`Candidate` to
:meth:`Measurer.measure` and gets one :class:`MeasureResult` per candidate, in
order, with a status from tuner.database.STATUSES. The :class:`Measurer` makes
the workload's random arguments and expected outputs once (a numpy
``reference`` when given, else the unscheduled workload built for C, checked
against ``tir.interpret`` when it is small), then for each batch builds the
candidates in worker processes under ``build_timeout`` (builder.py) and runs
them one at a time in one runner process under ``run_timeout`` (runner.py; on
a GPU each as soon as it is built, while the workers build the rest):
every candidate is checked against the expected outputs before it is timed, so
a wrong kernel is recorded as "wrong_result" and never wins. A crash, a hang or
an exception in either phase costs only that candidate; Ctrl-C stops every
child process and propagates.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

import tir
from codegen.build import generate_source
from codegen.program import CompiledFunction
from codegen.target import Target
from tir import Buffer, IRModule, PrimFunc
from tir.bfloat16 import to_bfloat16_bits

from .arrays import ArgumentError, fresh_arguments, mismatch, random_arguments, written_params
from .builder import BUILT, BuildOutcome, BuildPool, BuildTask, OnBuilt
from .runner import (
    MeasureError,
    RunnerConfig,
    RunnerDied,
    RunnerPhases,
    RunnerProcess,
    RunnerTimeout,
)

__all__ = ["ArgumentError", "Candidate", "MeasureError", "MeasureResult", "Measurer"]

# Below this many FLOPs the executor checks the C reference in a few seconds at most.
CROSS_CHECK_FLOPS = 2e7

Reference = Callable[[list[np.ndarray]], Sequence[np.ndarray]]


@dataclass
class Candidate:
    """One schedule to measure: its trace (``Trace.as_json()``) and the scheduled module (``sch.mod``).

    ``source_override`` is for tests: the source text compiled and run instead of the printed one.
    """

    trace_json: dict
    mod: IRModule
    source_override: str | None = None


@dataclass(frozen=True)
class MeasureResult:
    """``status`` is one of tuner.database.STATUSES; ``run_secs`` holds seconds per call for each repeat
    (only when "ok"); ``error`` the whole message of a failure ("" when ok). ``device`` and ``node``
    say where it ran when that is not the session's own device ("" for a local measurement).
    ``runner_secs`` and ``phases`` say how long the runner took and on what (0 when it never ran)."""

    status: str
    run_secs: tuple[float, ...] = ()
    error: str = ""
    build_secs: float = 0.0
    device: str = ""
    node: str = ""
    runner_secs: float = 0.0  # the runner's whole answer, as the tuner waited for it
    phases: RunnerPhases = field(default_factory=RunnerPhases)  # where the runner's time went

    @property
    def mean_secs(self) -> float:
        """Mean seconds per call; infinity without run times, so that failures sort last."""
        return math.fsum(self.run_secs) / len(self.run_secs) if self.run_secs else math.inf


class Measurer:
    """Builds, checks and times candidate schedules of ``workload`` on ``target``; see the module docstring.

    ``reference(inputs)`` receives the arguments of the parameters the workload does not
    write (in order) and returns the expected arrays of those it writes (in order).
    ``device="sim"`` measures Metal code on the host simulator. Use as a context manager,
    or call :meth:`close`.
    """

    def __init__(
        self,
        workload: IRModule | PrimFunc,
        target: Target | str,
        *,
        reference: Reference | None = None,
        workers: int | None = None,
        build_timeout: float = 60,
        run_timeout: float = 30,
        repeat: int = 3,
        min_repeat_seconds: float = 0.02,
        seed: int = 0,
        device: str | None = None,
    ):
        self.target = Target.parse(target)
        self.device = self.target.backend.check_device(device)
        self.run_timeout = run_timeout
        self.workload = workload if isinstance(workload, IRModule) else IRModule.from_func(workload)
        try:
            self._function = self.workload.main_name()
        except ValueError as error:
            raise MeasureError(f"cannot choose the function to measure: {error}") from None
        func = self.workload[self._function]
        self._signature = [_param_signature(param) for param in func.params]
        self._builder = BuildPool(workers or os.cpu_count() or 1, build_timeout)
        self._runner: RunnerProcess | None = None
        outputs = written_params(func)
        arguments = random_arguments(func, seed)
        if not outputs:
            raise MeasureError(
                f"function {func.name} writes none of its parameters: there is nothing to measure"
            )
        self._config = RunnerConfig(
            target=str(self.target),
            device=self.device,
            function=self._function,
            arguments=arguments,
            outputs=tuple(outputs),
            output_names=tuple(func.params[i].name for i in outputs),
            output_dtypes=tuple(func.params[i].dtype for i in outputs),
            poisoned=tuple(outputs),
            expected=None,
            repeat=repeat,
            min_repeat_seconds=min_repeat_seconds,
            terms=tir.flop_count(func) / (2 * sum(arguments[i].size for i in outputs)),
        )
        try:
            # The target's runner first: where the target cannot run, that is the error to see.
            self.device_name: str = self._ensure_runner().device_name
            if reference is not None:
                self._config = replace(self._config, expected=self._reference_outputs(reference))
            else:
                self._c_reference_outputs(func)
            changes = {"expected": self._config.expected, "poisoned": self._config.poisoned}
            self._ensure_runner().request(("configure", changes), None)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------ measuring

    def measure(self, candidates: Sequence[Candidate]) -> list[MeasureResult]:
        """Build, check and time ``candidates``; one result each, in the same order.

        On a GPU each candidate runs as soon as it is built, while the workers build the rest
        (the GPU's timings do not need the host's cores); on the CPU the batch is built first,
        so that no compiler runs beside a kernel being timed.
        """
        if not self.target.is_gpu:
            return self.run(self.build(candidates))
        results: list[MeasureResult | None] = [None] * len(candidates)

        def run_built(index: int, outcome: BuildOutcome) -> None:
            results[index] = self._run(outcome)

        self.build(candidates, run_built)
        return results  # type: ignore[return-value]

    def build(self, candidates: Sequence[Candidate], on_built: OnBuilt | None = None) -> list[BuildOutcome]:
        """The first half of ``measure``: build ``candidates`` in the worker processes
        (``on_built(index, outcome)`` as each ends, see ``BuildPool.build``)."""
        try:
            tasks = [BuildTask(c.mod, str(self.target), c.source_override) for c in candidates]
            return self._builder.build(tasks, on_built)
        except BaseException:
            self.close()  # Ctrl-C (or a bug here) must not leave workers or the runner behind
            raise

    def run(self, built: Sequence[BuildOutcome]) -> list[MeasureResult]:
        """The second half of ``measure``: check and time what ``build`` built, one at a time (or
        what Ray build tasks built elsewhere: tuner/measure/ray_runner.py)."""
        try:
            return [self._run(outcome) for outcome in built]
        except BaseException:
            self.close()
            raise

    def _run(self, outcome: BuildOutcome) -> MeasureResult:
        if outcome.status != BUILT:
            return MeasureResult(outcome.status, error=outcome.error, build_secs=outcome.build_secs)
        problem = self._signature_problem(outcome.functions)
        if problem is not None:
            return MeasureResult("invalid", error=problem, build_secs=outcome.build_secs)
        started = time.perf_counter()
        try:
            reply = self._ensure_runner().request(
                ("measure", outcome.source, outcome.functions), self.run_timeout
            )
        except RunnerTimeout:
            self._stop_runner()
            error = (
                f"the candidate did not finish within {self.run_timeout:g} s (run_timeout: loading, "
                "checking and timing it); the runner was killed and a new one started"
            )
            return MeasureResult(
                "timeout",
                error=error,
                build_secs=outcome.build_secs,
                runner_secs=time.perf_counter() - started,
            )
        except RunnerDied as died:
            self._stop_runner()
            error = f"runner process died ({died}) while running the candidate"
            return MeasureResult(
                "runtime_error",
                error=error,
                build_secs=outcome.build_secs,
                runner_secs=time.perf_counter() - started,
            )
        _, status, run_secs, error, phases = reply
        if status == "runtime_error" and self.target.is_gpu:
            self._stop_runner()  # after a GPU fault the context may be unusable: start afresh
        runner_secs = time.perf_counter() - started
        return MeasureResult(
            status, tuple(run_secs), error, outcome.build_secs, runner_secs=runner_secs, phases=phases
        )

    def _signature_problem(self, functions: Sequence[CompiledFunction]) -> str | None:
        found = {function.name: function for function in functions}.get(self._function)
        if found is None:
            names = ", ".join(f.name for f in functions) or "none"
            return f"the candidate has no function {self._function!r} (it has {names})"
        signature = [(p.dtype, tuple(p.shape), p.scalar) for p in found.params]
        if signature != self._signature:
            return (
                f"the candidate's {self._function} takes {_describe(signature)}, "
                f"but the workload's takes {_describe(self._signature)}"
            )
        return None

    # ------------------------------------------------------------ expected outputs

    def _reference_outputs(self, reference: Reference) -> list[np.ndarray]:
        config = self._config
        inputs = [a.copy() for i, a in enumerate(config.arguments) if i not in config.outputs]
        results = list(reference(inputs))
        if len(results) != len(config.outputs):
            raise MeasureError(
                f"reference returned {len(results)} arrays; the workload writes {len(config.outputs)} "
                f"({', '.join(config.output_names)}), one array each in that order"
            )
        expected = []
        for index, name, result, dtype in zip(
            config.outputs, config.output_names, results, config.output_dtypes
        ):
            like = config.arguments[index]
            result = np.asarray(result)
            if dtype == "bfloat16" and result.dtype.kind == "f":
                result = to_bfloat16_bits(result)  # a reference may give values; the runner holds bits
            if result.shape != like.shape:
                raise MeasureError(
                    f"reference returned shape {result.shape} for {name}, expected {like.shape}"
                )
            expected.append(result.astype(like.dtype))
        return expected

    def _c_reference_outputs(self, func: PrimFunc) -> None:
        """Expected outputs from the unscheduled workload built for C, run by a C runner."""
        c_config = replace(self._config, target="c", device=None)
        source, functions = generate_source(self.workload, "c")
        on_c = self.target.kind == "c"
        runner = self._ensure_runner() if on_c else RunnerProcess(c_config)
        try:
            expected = self._outputs(runner, source, functions)
            # An output that comes back NaN is read before it is written (an accumulation into it):
            # it must start from the random values instead.
            read_first = [
                i for i, e in zip(c_config.outputs, expected) if e.dtype.kind == "f" and np.isnan(e).any()
            ]
            if read_first:
                poisoned = tuple(i for i in c_config.outputs if i not in read_first)
                runner.request(("configure", {"poisoned": poisoned}), None)
                expected = self._outputs(runner, source, functions)
                self._config = replace(self._config, poisoned=poisoned)
            self._config = replace(self._config, expected=expected)
            if tir.flop_count(func) < CROSS_CHECK_FLOPS:
                self._cross_check(func, expected)
        finally:
            if not on_c:
                runner.close()

    def _outputs(self, runner: RunnerProcess, source: str, functions: Sequence[CompiledFunction]) -> list:
        reply = runner.request(("outputs", source, functions), None)
        if reply[0] != "outputs":
            raise MeasureError(
                f"the unscheduled workload, built for C, failed to run ({reply[1]}):\n{reply[3]}"
            )
        return reply[1]

    def _cross_check(self, func: PrimFunc, expected: list[np.ndarray]) -> None:
        config = self._config
        arguments = fresh_arguments(config.arguments, config.poisoned)
        tir.interpret(self.workload, *arguments, func_name=self._function)
        for index, name, c_output, dtype in zip(
            config.outputs, config.output_names, expected, config.output_dtypes
        ):
            problem = mismatch(name, c_output, arguments[index], config.terms, dtype)
            if problem is not None:
                raise MeasureError(
                    f"the unscheduled {func.name}, built for C, disagrees with tir.interpret: {problem}. "
                    "This is a bug in the C code generator or in the executor; pass reference= to measure "
                    "against a known answer meanwhile"
                )

    # ------------------------------------------------------------ processes

    def _ensure_runner(self) -> RunnerProcess:
        """The runner, restarted if it is gone (so that a death between candidates blames none)."""
        if self._runner is not None and not self._runner.child.is_alive():
            self._stop_runner()
        if self._runner is None:
            self._runner = RunnerProcess(self._config)
        return self._runner

    def _stop_runner(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    @property
    def pids(self) -> list[int]:
        """The child processes alive now (build workers and the runner), for diagnostics."""
        runner = [self._runner.pid] if self._runner is not None and self._runner.pid else []
        return self._builder.pids + runner

    def close(self) -> None:
        """Stop the build workers and the runner; a later ``measure`` starts them again."""
        self._builder.close()
        self._stop_runner()

    def __enter__(self) -> Measurer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _param_signature(param) -> tuple[str, tuple[int, ...], bool]:
    if isinstance(param, Buffer):
        return (param.dtype, tuple(param.static_shape() or ()), False)
    return (param.dtype, (), True)


def _describe(signature: Sequence[tuple[str, tuple[int, ...], bool]]) -> str:
    return (
        "("
        + ", ".join(dtype if scalar else f"{dtype}{list(shape)}" for dtype, shape, scalar in signature)
        + ")"
    )
