"""The C target's runtime: compile the module's C source once, load it with ctypes, call and time it.

``build(mod, "c")`` prints one C text for the module and calls
``load(source, functions, target)``. The source is compiled by the system
compiler (``codegen/c/compiler.py``, cached on disk) into a shared library;
each ``CompiledFunction.entry`` is a symbol taking the data pointers of the
function's ``params`` in order. Arrays are used in place when they are
C-contiguous; others are copied into contiguous arrays and, when the function
writes them, copied back. OpenMP runs the parallel loops on as many threads as
``OMP_NUM_THREADS`` says (read at every call), else on every core, with each
thread bound to a core (``OMP_PROC_BIND=true`` unless the environment says
otherwise; set while the first library loads, since OpenMP reads it once).

OpenMP binds the thread that loads it (the caller's) to the first core of the
process for good. Left so, the user's Python thread, and every process it starts
afterwards (compilers, the tuner's workers), would run on that one core: eight
measuring processes of a node would share core 0. The runtime therefore gives
the caller its cores back after loading, and binds it to OpenMP's core only
while a kernel runs; the variables it sets are removed again, so children do not
inherit them.
"""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys
import time as _time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from codegen.program import BufferSpec, CompiledFunction
from codegen.scalars import scalar_argument
from codegen.target import Target

from .compiler import CCompiler, CompilerNotFoundError, compile_library, find_compiler


def unavailable_reason(target: Target) -> str | None:
    """Why the C runtime cannot run here (no C compiler), or None."""
    try:
        find_compiler(target)
    except CompilerNotFoundError as error:
        return str(error)
    return None


def load(source: str, functions: Sequence[CompiledFunction], target: Target) -> CModule:
    """Compile ``source`` for ``target`` (or reuse the cached library) and bind each function's entry."""
    compiler = find_compiler(target)
    library = compile_library(source, compiler)
    return CModule(library, functions, compiler)


# OpenMP reads these once, when its runtime starts (the first library with parallel loops loads).
# Bound threads stay on their cores between calls, so the repeats of a small kernel agree instead
# of depending on where the scheduler moved a thread (docs/ARCHITECTURE.md, "Timing").
OPENMP_DEFAULTS = {"OMP_PROC_BIND": "true"}
# The cores OpenMP bound its first thread to when it started in this process (None: not yet).
_openmp_cores: set[int] | None = None
_HAS_AFFINITY = hasattr(os, "sched_getaffinity")


def load_library(path: Path) -> ctypes.CDLL:
    """``ctypes.CDLL(path)`` with ``OPENMP_DEFAULTS`` set while OpenMP starts, and the caller's
    cores given back afterwards (OpenMP binds the loading thread to one core for good)."""
    global _openmp_cores
    added = {name: value for name, value in OPENMP_DEFAULTS.items() if name not in os.environ}
    os.environ.update(added)
    cores = os.sched_getaffinity(0) if _HAS_AFFINITY else None
    try:
        library = ctypes.CDLL(str(path))
    finally:
        for name in added:
            os.environ.pop(name, None)
        if cores is not None:
            bound = os.sched_getaffinity(0)
            if bound != cores:
                _openmp_cores = bound
                os.sched_setaffinity(0, cores)
    return library


@contextmanager
def openmp_thread_bound() -> Iterator[None]:
    """Run the body on the core OpenMP bound the calling thread to when it started, if it did."""
    if _openmp_cores is None or not _HAS_AFFINITY:
        yield
        return
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, _openmp_cores)
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


class CModule:
    """A compiled C library and the functions it exports."""

    def __init__(self, library_path: Path, functions: Sequence[CompiledFunction], compiler: CCompiler):
        self.library_path = library_path
        self.compiler = compiler
        self.device_name = f"{cpu_model()} ({os.cpu_count()} cores), {compiler.description}"
        self._library = load_library(library_path)
        self._functions = {function.name: function for function in functions}
        self._entries = {function.name: self._bind(function) for function in functions}
        # Resolved through the library's dependencies; absent when it was built without OpenMP.
        self._set_num_threads = getattr(self._library, "omp_set_num_threads", None)

    def run(self, name: str, arrays: Sequence[np.ndarray]) -> None:
        """Call function ``name`` once on ``arrays`` (in the order of its params)."""
        function, entry = self._lookup(name)
        with _pointers(function, arrays) as pointers, openmp_thread_bound():
            self._apply_thread_count()
            entry(*pointers)

    def time(self, name: str, arrays: Sequence[np.ndarray], number: int, repeat: int) -> list[float]:
        """Mean seconds per call of ``name``: one warm-up call, then ``repeat`` means of ``number`` calls."""
        if number < 1 or repeat < 1:
            raise ValueError(
                f"time() needs number >= 1 and repeat >= 1; got number={number}, repeat={repeat}"
            )
        function, entry = self._lookup(name)
        means = []
        with _pointers(function, arrays) as pointers, openmp_thread_bound():
            self._apply_thread_count()
            entry(*pointers)
            for _ in range(repeat):
                start = _time.perf_counter()
                for _ in range(number):
                    entry(*pointers)
                means.append((_time.perf_counter() - start) / number)
        return means

    def _bind(self, function: CompiledFunction):
        if function.entry is None:
            raise ValueError(
                f"function {function.name!r} has no C entry symbol; was it built for target 'c'?"
            )
        try:
            entry = getattr(self._library, function.entry)
        except AttributeError:
            raise ValueError(
                f"the compiled library {self.library_path} has no symbol {function.entry!r} for function "
                f"{function.name!r}; the generated source and the function descriptions disagree"
            ) from None
        entry.argtypes = [_SCALAR_CTYPES[p.dtype] if p.scalar else ctypes.c_void_p for p in function.params]
        entry.restype = None
        return entry

    def _lookup(self, name: str):
        if name not in self._functions:
            known = ", ".join(sorted(self._functions)) or "none"
            raise KeyError(f"no function named {name!r} in this module; it has: {known}")
        return self._functions[name], self._entries[name]

    def _apply_thread_count(self) -> None:
        """Honour ``OMP_NUM_THREADS`` set after the OpenMP runtime started (it reads it once, at load)."""
        requested = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        if self._set_num_threads is not None and requested.isdigit() and int(requested) > 0:
            self._set_num_threads(int(requested))


_SCALAR_CTYPES = {
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "bool": ctypes.c_bool,
}


@contextmanager
def _pointers(function: CompiledFunction, arrays: Sequence[np.ndarray]) -> Iterator[list[ctypes.c_void_p]]:
    """Data pointers of C-contiguous versions of ``arrays``; written copies go back to the originals."""
    contiguous = [
        scalar_argument(spec.dtype, array, f"{function.name}: {spec.name}")
        if spec.scalar
        else _contiguous(spec, array, function.name)
        for spec, array in zip(function.params, arrays)
    ]
    yield [
        _SCALAR_CTYPES[spec.dtype](value.item()) if spec.scalar else ctypes.c_void_p(value.ctypes.data)
        for spec, value in zip(function.params, contiguous)
    ]
    for spec, original, used in zip(function.params, arrays, contiguous):
        if spec.written and not spec.scalar and used is not original:
            np.copyto(original, used)


def _contiguous(spec: BufferSpec, array: np.ndarray, function_name: str) -> np.ndarray:
    if spec.written and not array.flags.writeable:
        raise ValueError(
            f"{function_name} writes {spec.name!r}, but the array passed for it is read-only; "
            "pass a writable array (e.g. array.copy())"
        )
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def cpu_model() -> str:
    """The processor's marketing name, e.g. ``AMD EPYC 9654``; the machine type when unknown."""
    if sys.platform == "darwin":
        result = subprocess.run(
            ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, check=False
        )
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
