"""The built module: source, callable functions, timing and GFLOPS.

``build`` returns a ``Module``. ``mod["main"](a, b, c)`` checks every array's
shape and dtype against the function's signature before anything runs, then
runs the kernels (numpy arrays are copied to the device and back; device
arrays are used in place). Any object with ``__dlpack__`` (CuPy, PyTorch, JAX)
is viewed in place as the runtime's own array: on the CPU as numpy, on a GPU
through the runtime's ``from_dlpack``. ``time_evaluator`` and ``benchmark``
measure on the device with the one timer of codegen/timing.py and report the
median, the spread of the repeats and GFLOPS, with FLOPs counted from the IR.
``export(folder)`` writes what an application needs to call the kernels
without Python (each target's ``export.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tir.bfloat16 import bfloat16_argument

from .checks import new_state, raise_if_failed
from .errors import LaunchError
from .program import CompiledFunction
from .scalars import scalar_argument
from .target import Target
from .timing import TimingResult, significant, time_calls


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
        timing = self.timing
        return (
            f"{self.name}: {significant(self.seconds * 1e3)} ms (median of {timing.repeat} x {timing.number} "
            f"calls, spread {timing.spread:.0%}), {significant(self.gflops)} GFLOPS "
            f"on {self.device} [{self.target}]"
        )


class Function:
    """One compiled function of a module; call it with arrays matching its signature."""

    def __init__(self, module: Module, spec: CompiledFunction):
        self.module = module
        self.spec = spec

    def __call__(self, *arrays) -> None:
        arrays, write_backs = bfloat16_arguments(self.spec, self.module.adopt(arrays))
        check_arguments(self.spec, arrays)
        arrays = self.spec.with_shapes(arrays)
        if not self.spec.checks:
            self.module.loaded.run(self.spec.name, arrays)
        else:
            state = new_state(self.spec)
            self.module.loaded.run(self.spec.name, (*arrays, state))
            raise_if_failed(self.spec, state)
        for write_back in write_backs:
            write_back()

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

    def time_evaluator(
        self, name: str, number: int = 10, repeat: int = 3, min_repeat_ms: float = 0
    ) -> Callable[..., TimingResult]:
        """A function of the arrays that times ``name`` as TVM's ``time_evaluator`` does.

        Each of ``repeat`` rounds is the mean of ``number`` calls after a warm-up call;
        ``number`` grows until one round lasts at least ``min_repeat_ms`` (codegen/timing.py).
        """
        spec = self[name].spec
        self._check_timings()

        def evaluate(*arrays) -> TimingResult:
            arrays, _ = bfloat16_arguments(spec, self.adopt(arrays))
            check_arguments(spec, arrays)
            return time_calls(
                lambda n, r: self._time(spec, arrays, n, r),
                number=number,
                repeat=repeat,
                min_repeat_seconds=min_repeat_ms / 1e3,
            )

        return evaluate

    def benchmark(
        self, name: str, *arrays, number: int | None = None, repeat: int = 5, min_repeat_seconds: float = 0.05
    ) -> BenchmarkResult:
        """Median seconds per call, the spread of the repeats, and GFLOPS (three significant digits).

        Without ``number``, the calls per repeat grow from one until a repeat lasts
        ``min_repeat_seconds``; a given ``number`` is used as it is.
        """
        spec = self[name].spec
        self._check_timings()
        arrays, _ = bfloat16_arguments(spec, self.adopt(arrays))
        check_arguments(spec, arrays)
        grow_to_ms = min_repeat_seconds * 1e3 if number is None else 0
        timing = self.time_evaluator(name, number or 1, repeat, grow_to_ms)(*arrays)
        flops = spec.flops_for_call(spec.with_shapes(arrays))
        return BenchmarkResult(name, timing.median, flops, timing, self.device_name, str(self.target))

    def adopt(self, arrays: Sequence) -> tuple:
        """The arguments with every DLPack object (``__dlpack__``: CuPy, PyTorch, JAX) viewed in place
        as the runtime's own array; numpy arrays and scalars pass unchanged."""
        return tuple(adopt_dlpack(array, self) for array in arrays)

    def export(self, folder: str | Path, name: str = "kernels") -> list[Path]:
        """Write what an application needs to call this module without Python into ``folder``.

        C: ``lib<name>.so`` and ``<name>.h`` with each function's prototype; CUDA: ``<name>.cu``,
        ``<name>.ptx`` and ``.cubin`` (when nvcc is here) and ``<name>.json`` with the launch
        dimensions; Metal: ``<name>.metal``, ``<name>.json`` (launch dimensions, argument order)
        and ``<name>.swift``, a dispatch snippet. Returns the files written.

        >>> rt = build(matmul, "c")
        >>> rt.export("out")  # doctest: +SKIP
        [PosixPath('out/libkernels.so'), PosixPath('out/kernels.h'), PosixPath('out/kernels.c')]
        """
        if not name.isidentifier():
            raise ValueError(
                f"export name must be an identifier (it names files and a C header); got {name!r}"
            )
        return self.target.backend.export(self, Path(folder), name)

    def _time(self, spec: CompiledFunction, arrays: Sequence, number: int, repeat: int) -> list[float]:
        """The runtime's timings; a checked build passes its check state and raises if a check failed."""
        arrays = spec.with_shapes(tuple(arrays))
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


def adopt_dlpack(array, module: Module) -> object:
    """``array`` itself, or the module's runtime's in-place view of a DLPack object (never a copy)."""
    if isinstance(array, np.ndarray) or not hasattr(array, "__dlpack__"):
        return array
    device_type = array.__dlpack_device__()[0] if hasattr(array, "__dlpack_device__") else DLPACK_CPU
    if device_type in (DLPACK_CPU, DLPACK_CUDA_HOST):
        return np.from_dlpack(array)
    from_dlpack = getattr(module.loaded, "from_dlpack", None)
    if from_dlpack is None:
        raise TypeError(
            f"this module's runtime cannot use an array on DLPack device type {device_type} in place; "
            "pass a CPU array (numpy, or the framework's .cpu()) instead"
        )
    return from_dlpack(array)


# DLPack's device types (dlpack.h: kDLCPU, kDLCUDAHost).
DLPACK_CPU, DLPACK_CUDA_HOST = 1, 3


def bfloat16_arguments(spec: CompiledFunction, arrays: Sequence) -> tuple[tuple, list[Callable[[], None]]]:
    """The arguments with each numpy array for a bfloat16 parameter as the uint16 bits the kernel reads,
    and the copies back into float32 arrays to make after the call (only for parameters it writes)."""
    converted, write_backs = list(arrays), []
    for position, (param, array) in enumerate(zip(spec.arguments, arrays)):
        if param.dtype != "bfloat16" or param.scalar or not isinstance(array, np.ndarray):
            continue
        try:
            converted[position], write_back = bfloat16_argument(array)
        except TypeError as error:
            raise ValueError(f"{spec.name}: argument {position} ({param.name}): {error}") from None
        if write_back is not None and param.written:
            write_backs.append(write_back)
    return tuple(converted), write_backs


def check_arguments(spec: CompiledFunction, arrays: Sequence) -> None:
    """Every array's shape and dtype against the function's signature, before anything runs. A scalar
    parameter that is also a dimension (``n`` of ``A: (n,)``) must equal the arrays' size."""
    params = spec.arguments
    if len(arrays) != len(params):
        names = ", ".join(p.name for p in params)
        raise TypeError(f"{spec.name} takes {len(params)} arrays ({names}); got {len(arrays)}")
    sizes: dict[str, int] = {}  # symbolic dimensions as the first array that has one gives them
    for position, (param, array) in enumerate(zip(params, arrays)):
        if param.scalar:
            scalar_argument(param.dtype, array, f"{spec.name}: argument {position} ({param.name})")
            continue
        shape = tuple(getattr(array, "shape", ()))
        dtype = str(getattr(array, "dtype", type(array).__name__))
        expected = _expected_shape(param.shape, shape, sizes)
        if shape != expected or dtype != param.numpy_dtype:
            shown = tuple(param.shape) if expected == param.shape else f"{tuple(param.shape)} = {expected}"
            raise ValueError(
                f"{spec.name}: argument {position} ({param.name}) must be a {param.numpy_dtype} array of "
                f"shape {shown}; got {dtype} of shape {shape}"
            )
    for position, (param, value) in enumerate(zip(params, arrays)):
        if param.scalar and param.name in sizes and int(value) != sizes[param.name]:
            raise ValueError(
                f"{spec.name}: argument {position} ({param.name}) is a dimension of the arrays, which "
                f"have {param.name} = {sizes[param.name]}; got {int(value)} (it would index past them)"
            )


def _expected_shape(declared: tuple, actual: tuple, sizes: dict[str, int]) -> tuple:
    """``declared`` with its symbolic dimensions bound: by ``sizes``, or else by ``actual`` (recorded)."""
    if len(declared) != len(actual):
        return tuple(declared)
    expected = []
    for dim, size in zip(declared, actual):
        if isinstance(dim, str):
            dim = sizes.setdefault(dim, size)
        expected.append(dim)
    return tuple(expected)
