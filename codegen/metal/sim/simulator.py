"""The Metal host simulator: runs the MSL our Metal printer emits on the CPU to check its numbers.

``build(mod, "metal", device="sim")`` hands the module's MSL text and its
``CompiledFunction`` descriptions to ``load``. The MSL is compiled as C++20 by
g++ against our own ``include/metal_stdlib`` (Metal's types, math, barrier and
empty address-space macros) with exactly one textual change: a line that starts
with ``threadgroup `` declares a threadgroup array and its keyword becomes
``alignas(16) static`` (one array shared by the threads of a threadgroup, since
threadgroups run one after another; 16-byte aligned like Metal's threadgroup
allocations). Line numbers are kept, so g++'s messages point at lines of the MSL
as emitted. A generated ``extern "C"`` wrapper per kernel (its parameter types
come from the BufferSpec dtypes; a scalar parameter is passed as the value behind its
pointer, for the kernel's ``constant T&``) and the launcher (``launcher.cpp``, one host
thread per lane of a threadgroup with a barrier that detects deadlocks and
divergent barrier counts) are linked into one shared object, cached under
``$TIR_CACHE_DIR/metal_sim`` (default ``~/.cache/tir``) and loaded with ctypes.

A ``"metal -fast-math"`` target compiles with g++'s ``-ffast-math`` optimizations
(``FAST_MATH_FLAGS``: the flag's parts, which leave the process's floating-point
mode alone), so the simulator takes the same liberties a GPU may then take
(reassociation, no NaN or infinity); by default it follows IEEE like the Metal runtime's safe math mode.
The simulator checks results; it never reports timings, which would say nothing
about a GPU.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from codegen.errors import CompileError, LaunchError
from codegen.metal.printer import METAL_TYPES
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.scalars import scalar_argument
from codegen.target import Target

COMPILER_TOOL = "g++ (Metal host simulator)"
COMPILE_FLAGS = (
    "-std=c++20",
    "-O2",
    "-fPIC",
    "-pthread",
    "-fvisibility=hidden",
    # Metal code reads float storage through float4 pointers; C++'s strict aliasing would let g++
    # reorder those accesses.
    "-fno-strict-aliasing",
    # [[buffer(0)]], [[thread_position_in_threadgroup]], ... mean nothing to g++.
    "-Wno-attributes",
    "-fno-diagnostics-color",
)
# What -ffast-math turns on, spelled out: with -ffast-math itself (or -funsafe-math-optimizations)
# on the link line, g++ 12 links crtfastmath.o, whose constructor sets flush-to-zero and
# denormals-are-zero for the whole Python process once ctypes loads the module (numpy's float32
# subnormals read as 0 from then on). g++ 13's -mno-daz-ftz would say the same in one flag.
FAST_MATH_FLAGS = (
    "-fno-math-errno",
    "-fno-signed-zeros",
    "-fno-trapping-math",
    "-fassociative-math",
    "-freciprocal-math",
    "-ffinite-math-only",
    "-fno-rounding-math",
    "-fno-signaling-nans",
    "-fcx-limited-range",
    "-fexcess-precision=fast",
)
TIMEOUT_ENV = "TIR_METAL_SIM_BARRIER_TIMEOUT"
DEFAULT_BARRIER_TIMEOUT_S = 10.0

_HERE = Path(__file__).resolve().parent
_INCLUDE_DIR = _HERE / "include"
_LAUNCHER = _HERE / "launcher.cpp"
# Threadgroup arrays (and scalars), but not pointers into threadgroup memory, which stay per thread.
_THREADGROUP_DECLARATION = re.compile(r"^([ \t]*)threadgroup (?=[^*;=\[\n]*[;=\[])", re.MULTILINE)
_ADDRESS = re.compile(r"address (0x[0-9a-f]+)")
_MSL_FILE = "kernel.metal"
_WRAPPER_FILE = "(simulator wrappers)"

# Threadgroup memory is a function-level static per kernel, shared by every launch of that kernel
# in this process, so launches run one at a time.
_LAUNCH_LOCK = threading.Lock()


class SimulatorError(LaunchError):
    """The simulator cannot do what was asked (timings, a missing g++, an unknown function)."""


class SimulatedModule:
    """A module's kernels compiled for the host; ``run`` executes a function's launches in order."""

    def __init__(
        self,
        source: str,
        functions: Sequence[CompiledFunction],
        library: ctypes.CDLL,
        barrier_timeout_s: float,
    ):
        self.source = source
        self.functions = {function.name: function for function in functions}
        self.device_name = f"Metal host simulator (g++ {compiler_version()})"
        self._library = library
        self._barrier_timeout_s = barrier_timeout_s

    def run(self, name: str, arrays: Sequence) -> None:
        """Run function ``name`` on ``arrays`` (numpy, in parameter order); written ones are updated."""
        function = self._function(name).for_call(arrays)
        bound = [_BoundArray(spec, array, name) for spec, array in zip(function.params, arrays)]
        buffers = {b.spec.name: b.data for b in bound}
        buffers.update({spec.name: _poisoned(spec) for spec in function.workspaces})
        with _LAUNCH_LOCK:
            for launch in function.launches:
                self._launch(function, launch, buffers)
        for argument in bound:
            argument.copy_back()

    def time(self, name: str, arrays: Sequence, number: int = 1, repeat: int = 1) -> list[float]:
        """Always raises: host run times say nothing about a GPU."""
        raise SimulatorError(
            f"cannot time {name!r}: the Metal host simulator checks numbers but never reports timings, "
            "because host run times say nothing about a GPU; use a Mac for GFLOPS "
            "(build(mod, 'metal') there), or the 'c' or 'cuda' target here"
        )

    def _function(self, name: str) -> CompiledFunction:
        if name not in self.functions:
            known = ", ".join(sorted(self.functions)) or "none"
            raise SimulatorError(f"no function named {name!r} in this module; it has: {known}")
        return self.functions[name]

    def _launch(
        self, function: CompiledFunction, launch: KernelLaunch, buffers: dict[str, np.ndarray]
    ) -> None:
        arrays = [buffers[name] for name in launch.buffers]
        args = (ctypes.c_void_p * max(len(arrays), 1))(*[array.ctypes.data for array in arrays])
        error = ctypes.create_string_buffer(4096)
        status = self._library.tir_sim_launch(
            getattr(self._library, f"tir_sim_{launch.name}"),
            args,
            *launch.grid,
            *launch.block,
            self._barrier_timeout_s,
            error,
            len(error),
        )
        if status != 0:
            message = _name_addresses(error.value.decode(errors="replace"), launch.buffers, arrays)
            raise LaunchError(
                f"kernel {launch.name} (function {function.name}, grid {launch.grid}, "
                f"threadgroup {launch.block}) failed in the Metal host simulator: {message}"
            )


class _BoundArray:
    """A numpy argument as the kernel sees it: itself when C-contiguous, else a copy copied back.

    A scalar parameter becomes a 0-d array of its declared dtype (codegen/scalars.py), which the
    kernel reads through its ``constant T&`` parameter.
    """

    def __init__(self, spec: BufferSpec, array, function_name: str):
        self.spec = spec
        self.original = array
        if spec.scalar:
            array = np.array(scalar_argument(spec.dtype, array, f"{function_name}: {spec.name}"))
        self.data = np.ascontiguousarray(array, dtype=spec.numpy_dtype)
        if spec.written and isinstance(array, np.ndarray) and not array.flags.writeable:
            raise SimulatorError(
                f"argument {spec.name} is written by the function but its array is read-only; "
                "pass a writable copy"
            )

    def copy_back(self) -> None:
        if self.spec.written and self.data is not self.original:
            np.copyto(self.original, self.data.reshape(np.shape(self.original)))


def _poisoned(spec: BufferSpec) -> np.ndarray:
    """A workspace for one call: NaN (floats) or a loud pattern, so reads of unwritten data show."""
    dtype = np.dtype(spec.numpy_dtype)
    if dtype.kind == "f":
        return np.full(spec.shape, np.nan, dtype=dtype)
    if dtype.kind == "b":
        return np.ones(spec.shape, dtype=dtype)
    return np.full(spec.shape, np.iinfo(dtype).max // 3, dtype=dtype)


def _name_addresses(message: str, names: Sequence[str], arrays: Sequence[np.ndarray]) -> str:
    """Replace a raw address in the launcher's message by the buffer and byte offset it falls in."""

    def describe(match: re.Match) -> str:
        address = int(match.group(1), 16)
        for name, array in zip(names, arrays):
            offset = address - array.ctypes.data
            if 0 <= offset < max(array.nbytes, 1):
                return f"byte offset {offset} of buffer {name}"
        return f"address {match.group(1)} (threadgroup or thread memory)"

    return _ADDRESS.sub(describe, message)


def load(
    source: str,
    functions: Sequence[CompiledFunction],
    target: Target,
    *,
    barrier_timeout_s: float | None = None,
) -> SimulatedModule:
    """Compile ``source`` (MSL as our Metal printer emits it) for the host and return it ready to run.

    ``barrier_timeout_s`` bounds a wait at threadgroup_barrier before the launch fails as a
    deadlock (default: $TIR_METAL_SIM_BARRIER_TIMEOUT, else 10 s).
    Raises CompileError (g++'s messages with the MSL lines they point at) or SimulatorError.
    """
    if target.kind != "metal":
        raise SimulatorError(f"the Metal host simulator runs Metal code; target {target} is not 'metal'")
    if barrier_timeout_s is None:
        barrier_timeout_s = float(os.environ.get(TIMEOUT_ENV, DEFAULT_BARRIER_TIMEOUT_S))
    if not barrier_timeout_s > 0:
        raise ValueError(f"barrier_timeout_s must be a positive number of seconds; got {barrier_timeout_s}")
    translation_unit = host_translation_unit(source, functions)
    flags = (*COMPILE_FLAGS, *FAST_MATH_FLAGS) if target.fast_math else COMPILE_FLAGS
    library = ctypes.CDLL(str(_compiled_library(translation_unit, source, flags)))
    library.tir_sim_launch.restype = ctypes.c_int
    library.tir_sim_launch.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_void_p),
        *[ctypes.c_uint] * 6,
        ctypes.c_double,
        ctypes.c_char_p,
        ctypes.c_int,
    ]
    return SimulatedModule(source, functions, library, barrier_timeout_s)


def host_translation_unit(source: str, functions: Sequence[CompiledFunction]) -> str:
    """The C++ text g++ compiles: the MSL with threadgroup declarations made static, then wrappers."""
    return "\n".join(
        [
            f'#line 1 "{_MSL_FILE}"',
            _THREADGROUP_DECLARATION.sub(r"\1alignas(16) static ", source),
            f'#line 1 "{_WRAPPER_FILE}"',
            *_kernel_wrappers(functions),
            "",
        ]
    )


def _kernel_wrappers(functions: Sequence[CompiledFunction]) -> list[str]:
    """One ``extern "C"`` entry per kernel that casts ``void** args`` to its parameter types."""
    wrappers: dict[str, str] = {}
    for function in functions:
        specs = {spec.name: spec for spec in (*function.params, *function.workspaces)}
        for launch in function.launches:
            casts = [_argument(specs, name, launch, i) for i, name in enumerate(launch.buffers)]
            arguments = ", ".join([*casts, "uint3(bx, by, bz)", "uint3(tx, ty, tz)"])
            wrappers[launch.name] = (
                f'extern "C" TIR_SIM_EXPORT void tir_sim_{launch.name}(void** args, '
                "uint bx, uint by, uint bz, uint tx, uint ty, uint tz) {\n"
                f"  {launch.name}({arguments});\n"
                "}"
            )
    return list(wrappers.values())


def _argument(specs: dict[str, BufferSpec], name: str, launch: KernelLaunch, index: int) -> str:
    """``args[index]`` as the kernel's parameter: a typed pointer, or the value a scalar's pointer holds."""
    if name not in specs:
        raise SimulatorError(
            f"kernel {launch.name} takes buffer {name!r}, which is neither a parameter nor a workspace"
        )
    dtype = specs[name].dtype
    if dtype not in METAL_TYPES:
        raise SimulatorError(f"buffer {name} of kernel {launch.name} has dtype {dtype}, which Metal lacks")
    pointer = f"({METAL_TYPES[dtype]}*)args[{index}]"
    return f"*{pointer}" if specs[name].scalar else pointer


def _compiled_library(translation_unit: str, source: str, flags: tuple[str, ...]) -> Path:
    """The cached shared object for ``translation_unit``, compiling and linking it on a miss."""
    launcher = _compiled_launcher()
    header = (_INCLUDE_DIR / "metal_stdlib").read_text()
    key = _digest(header, _LAUNCHER.read_text(), translation_unit, compiler_version(), *flags)
    library = _cache_dir() / f"module-{key}.so"
    if not library.exists():
        with tempfile.TemporaryDirectory(dir=_cache_dir()) as work:
            unit = Path(work) / "kernel.cpp"
            unit.write_text(translation_unit)
            output = Path(work) / library.name
            _run_compiler(
                [*flags, "-shared", f"-I{_INCLUDE_DIR}", str(unit), str(launcher), "-o", str(output)],
                source,
            )
            os.replace(output, library)
    return library


def _compiled_launcher() -> Path:
    """launcher.cpp compiled once per compiler and flags (it is the same for every module)."""
    key = _digest(_LAUNCHER.read_text(), compiler_version(), *COMPILE_FLAGS)
    obj = _cache_dir() / f"launcher-{key}.o"
    if not obj.exists():
        with tempfile.TemporaryDirectory(dir=_cache_dir()) as work:
            output = Path(work) / obj.name
            _run_compiler([*COMPILE_FLAGS, "-c", str(_LAUNCHER), "-o", str(output)], _LAUNCHER.read_text())
            os.replace(output, obj)
    return obj


def _run_compiler(arguments: list[str], source: str) -> None:
    result = subprocess.run([_compiler(), *arguments], capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(COMPILER_TOOL, result.stderr + result.stdout, source)


def _digest(*parts: str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode())
        hasher.update(b"\0")
    return hasher.hexdigest()[:32]


def _cache_dir() -> Path:
    root = Path(os.environ.get("TIR_CACHE_DIR", Path.home() / ".cache" / "tir"))
    directory = root / "metal_sim"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@functools.cache
def _compiler() -> str:
    compiler = shutil.which("g++")
    if compiler is None:
        raise SimulatorError(
            "the Metal host simulator needs g++ (12 or newer, for _Float16) on PATH; install it "
            "(apt-get install g++) or run Metal code on a Mac"
        )
    return compiler


@functools.cache
def compiler_version() -> str:
    """g++'s version, e.g. "12.2.0" (part of device_name and of the cache key)."""
    result = subprocess.run([_compiler(), "-dumpfullversion"], capture_output=True, text=True, check=True)
    return result.stdout.strip()
