"""The built module: source, callable functions, timing and GFLOPS.

``build`` returns a ``Module``. ``mod["main"](a, b, c)`` checks every array's
shape and dtype against the function's signature before anything runs, then
runs the kernels (numpy arrays are copied to the device and back; device
arrays are used in place). ``time_evaluator`` and ``benchmark`` measure on the
device and report seconds and GFLOPS, with FLOPs counted from the IR.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .checks import new_state, raise_if_failed
from .errors import LaunchError
from .program import CompiledFunction
from .scalars import scalar_argument
from .target import Target


@dataclass(frozen=True)
class TimingResult:
    """Seconds per call, one entry per repeat (each the mean of ``number`` calls)."""

    results: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results)


@dataclass(frozen=True)
class BenchmarkResult:
    """A measured function: median seconds per call and the GFLOPS that gives."""

    name: str
    seconds: float
    flops: int
    timing: TimingResult
    device: str
    target: str

    @property
    def gflops(self) -> float:
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.seconds * 1e3:.4g} ms (median of {len(self.timing.results)}), "
            f"{self.gflops:,.1f} GFLOPS on {self.device} [{self.target}]"
        )


class Function:
    """One compiled function of a module; call it with arrays matching its signature."""

    def __init__(self, module: Module, spec: CompiledFunction):
        self.module = module
        self.spec = spec

    def __call__(self, *arrays) -> None:
        check_arguments(self.spec, arrays)
        if not self.spec.checks:
            self.module.loaded.run(self.spec.name, arrays)
            return
        state = new_state(self.spec)
        self.module.loaded.run(self.spec.name, (*arrays, state))
        raise_if_failed(self.spec, state)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}{list(p.shape)}" for p in self.spec.arguments)
        return f"<{self.module.target.kind} function {self.spec.name}({params})>"


class Module:
    """What ``build`` returns: ``get_source()``, ``mod[name](*arrays)``, ``time_evaluator``, ``benchmark``."""

    def __init__(
        self,
        source: str,
        functions: Sequence[CompiledFunction],
        target: Target,
        loader: Callable[[], object],
        timings: bool = True,
    ):
        self.source = source
        self.functions = {f.name: f for f in functions}
        self.target = target
        self._loader = loader
        self._loaded = None
        self._timings = timings

    @property
    def loaded(self):
        """The runtime's loaded module, compiled on first use."""
        if self._loaded is None:
            self._loaded = self._loader()
        return self._loaded

    @property
    def device_name(self) -> str:
        return self.loaded.device_name

    def get_source(self) -> str:
        return self.source

    def __getitem__(self, name: str) -> Function:
        if name not in self.functions:
            raise KeyError(f"no function {name!r} in this module; it has {', '.join(self.functions)}")
        return Function(self, self.functions[name])

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def time_evaluator(self, name: str, number: int = 10, repeat: int = 3) -> Callable[..., TimingResult]:
        """A function of the arrays that returns seconds per call for each of ``repeat`` rounds."""
        spec = self[name].spec
        self._check_timings()

        def evaluate(*arrays) -> TimingResult:
            check_arguments(spec, arrays)
            return TimingResult(tuple(self._time(spec, arrays, number, repeat)))

        return evaluate

    def benchmark(
        self, name: str, *arrays, number: int | None = None, repeat: int = 5, min_repeat_seconds: float = 0.05
    ) -> BenchmarkResult:
        """Median seconds per call and GFLOPS; ``number`` defaults to calls filling min_repeat_seconds."""
        spec = self[name].spec
        self._check_timings()
        check_arguments(spec, arrays)
        if number is None:
            (once,) = self._time(spec, arrays, 1, 1)
            number = max(1, min(1000, math.ceil(min_repeat_seconds / max(once, 1e-7))))
        timing = TimingResult(tuple(self._time(spec, arrays, number, repeat)))
        return BenchmarkResult(name, timing.median, spec.flops, timing, self.device_name, str(self.target))

    def _time(self, spec: CompiledFunction, arrays: Sequence, number: int, repeat: int) -> list[float]:
        """The runtime's timings; a checked build passes its check state and raises if a check failed."""
        if not spec.checks:
            return self.loaded.time(spec.name, arrays, number, repeat)
        state = new_state(spec)
        seconds = self.loaded.time(spec.name, (*arrays, state), number, repeat)
        raise_if_failed(spec, state)
        return seconds

    def _check_timings(self) -> None:
        if not self._timings:
            raise LaunchError(
                "the Metal host simulator checks numbers only and never reports timings or GFLOPS; "
                "measure on a Mac with build(mod, 'metal') or on another target"
            )

    def __repr__(self) -> str:
        return f"<Module target={self.target} functions={list(self.functions)}>"


def check_arguments(spec: CompiledFunction, arrays: Sequence) -> None:
    """Every array's shape and dtype against the function's signature, before anything runs."""
    params = spec.arguments
    if len(arrays) != len(params):
        names = ", ".join(p.name for p in params)
        raise TypeError(f"{spec.name} takes {len(params)} arrays ({names}); got {len(arrays)}")
    for position, (param, array) in enumerate(zip(params, arrays)):
        if param.scalar:
            scalar_argument(param.dtype, array, f"{spec.name}: argument {position} ({param.name})")
            continue
        shape = tuple(getattr(array, "shape", ()))
        dtype = str(getattr(array, "dtype", type(array).__name__))
        if shape != param.shape or dtype != param.numpy_dtype:
            raise ValueError(
                f"{spec.name}: argument {position} ({param.name}) must be a {param.numpy_dtype} array of "
                f"shape {param.shape}; got {dtype} of shape {shape}"
            )
