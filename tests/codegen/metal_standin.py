"""A STAND-IN for PyObjC's Metal bindings (the calling protocol, not a GPU), so CI drives the Metal runtime.

This is not Metal and not a GPU model. It stands in for what
``codegen/metal/runtime.py`` talks to (``import Metal`` and ``import objc`` from
pyobjc) with exactly the selectors that runtime may call, spelled and called the
way PyObjC spells and calls them: ``setBytes_length_atIndex_`` (a trailing
underscore per selector part), ``NSError**`` out-parameters passed as ``None``
and returned as a second tuple element, ``MTLSizeMake``,
``buffer.contents().as_buffer(n)``, ``objc.autorelease_pool()``. Every call
checks its arguments' types, count and ranges, and a call of any other selector
is an AttributeError. An MTLBuffer is raw bytes. On ``commit`` each dispatch
runs through our Metal host simulator on exactly the bytes bound at each
``[[buffer(i)]]`` index, reinterpreted as the parameter types the kernel's MSL
declares (``device const float*``, ``constant int&``): what a GPU does with the
bytes it is given, so a scalar passed with the wrong width reads wrong here as
it would on a Mac. The stand-in follows what PyObjC releases before 12.x do with
``new*`` results (they stay retained), so only ``setPurgeableState_`` frees a
buffer's bytes; its ``ledger`` counts buffers, live bytes, setBytes calls and
objects autoreleased with no pool in place, for the tests to read.

Use ``install(monkeypatch)``: ``build(mod, "metal")`` then takes the runtime's
own path, with the stand-in under it.
"""

from __future__ import annotations

import re
import sys
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from codegen.errors import CompileError, LaunchError
from codegen.metal import runtime
from codegen.metal import sim as simulator
from codegen.metal.printer import METAL_TYPES
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target

DEVICE_NAME = "Metal stand-in (PyObjC protocol only; kernels run on the host simulator)"
SET_BYTES_LIMIT = 4096  # Metal: setBytes:length:atIndex: is for data under 4 KB
STORAGE_MODE_SHARED = 0
PURGEABLE_STATE_EMPTY = 4
MATH_MODE_SAFE, MATH_MODE_RELAXED, MATH_MODE_FAST = 0, 1, 2
STATUS_COMPLETED, STATUS_ERROR = 4, 5
_DTYPES = {msl: dtype for dtype, msl in METAL_TYPES.items()}
_KERNEL = re.compile(r"\bkernel\s+void\s+(\w+)\s*\(")
_PARAM = re.compile(r"^(device|constant)\s+(const\s+)?(\w+)\s*([*&])\s*\w+\s*\[\[buffer\((\d+)\)\]\]$")
_GXX_LOCATION = re.compile(r"^kernel\.metal:(\d+):(\d+): ", re.MULTILINE)


class ProtocolError(TypeError):
    """The runtime called the stand-in in a way PyObjC or Metal would not accept."""


@dataclass
class Ledger:
    """What the runtime did to the stand-in, for tests to assert on."""

    buffers_created: int = 0
    live_bytes: int = 0
    set_bytes_calls: int = 0
    command_buffers: int = 0
    leaked_autoreleased: int = 0
    math_modes: list[int] = field(default_factory=list)
    read_only: dict[str, list[int]] = field(default_factory=dict)  # kernel -> its device const indices


def install(monkeypatch, max_threads_per_pipeline: int = 1024, has_math_mode: bool = True) -> Ledger:
    """Make ``import Metal`` / ``import objc`` in the Metal runtime return the stand-in; its ledger."""
    ledger = Ledger()
    objc = _ObjC(ledger)
    metal = _Metal(ledger, objc, max_threads_per_pipeline, has_math_mode)
    monkeypatch.setitem(sys.modules, "Metal", metal)
    monkeypatch.setitem(sys.modules, "objc", objc)
    monkeypatch.setattr(runtime, "sys", types.SimpleNamespace(platform="darwin"))
    return ledger


def _expect(selector: str, name: str, value, kinds, check=None) -> None:
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in _tuple(kinds):
        raise ProtocolError(
            f"stand-in: {selector} argument {name} must be {_names(kinds)}, got {type(value).__name__}"
        )
    if check is not None and not check(value):
        raise ProtocolError(f"stand-in: {selector} argument {name} has an invalid value {value!r}")


def _tuple(kinds) -> tuple:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _names(kinds) -> str:
    return " or ".join(kind.__name__ for kind in _tuple(kinds))


_BYTES_LIKE = (bytes, bytearray, memoryview)


class _ObjC:
    """``objc``: only ``autorelease_pool()``; autoreleased objects with no pool are counted as leaked."""

    def __init__(self, ledger: Ledger):
        self._ledger = ledger
        self._pools: list[list] = []

    @contextmanager
    def autorelease_pool(self):
        self._pools.append([])
        try:
            yield
        finally:
            self._pools.pop()

    def _autorelease(self, obj):
        if self._pools:
            self._pools[-1].append(obj)
        else:
            self._ledger.leaked_autoreleased += 1
        return obj


class _NSError:
    def __init__(self, description: str):
        self._description = description

    def localizedDescription(self) -> str:
        return self._description


@dataclass(frozen=True)
class _MTLSize:
    width: int
    height: int
    depth: int


class _CompileOptions:
    """``MTLCompileOptions``: fast math on by default, as in Metal."""

    has_math_mode = True

    def __init__(self):
        self._math_mode = MATH_MODE_FAST

    @classmethod
    def new(cls):
        return cls()

    def respondsToSelector_(self, selector: str) -> bool:
        _expect("respondsToSelector:", "selector", selector, str)
        return selector in ("setFastMathEnabled:", "fastMathEnabled") or (
            self.has_math_mode and selector in ("setMathMode:", "mathMode")
        )

    def setFastMathEnabled_(self, enabled: bool) -> None:
        _expect("setFastMathEnabled:", "enabled", enabled, bool)
        self._math_mode = MATH_MODE_FAST if enabled else MATH_MODE_SAFE

    def setMathMode_(self, mode: int) -> None:
        if not self.has_math_mode:
            raise AttributeError("stand-in: MTLCompileOptions has no setMathMode: before macOS 15")
        _expect("setMathMode:", "mode", mode, int, lambda m: m in (0, 1, 2))
        self._math_mode = mode


class _Metal:
    """The ``Metal`` module: constants, ``MTLCreateSystemDefaultDevice``, ``MTLSizeMake``."""

    MTLResourceStorageModeShared = STORAGE_MODE_SHARED
    MTLPurgeableStateEmpty = PURGEABLE_STATE_EMPTY
    MTLMathModeSafe, MTLMathModeRelaxed, MTLMathModeFast = MATH_MODE_SAFE, MATH_MODE_RELAXED, MATH_MODE_FAST
    MTLCommandBufferStatusError = STATUS_ERROR

    def __init__(self, ledger: Ledger, objc: _ObjC, max_threads: int, has_math_mode: bool):
        self._device = _Device(ledger, objc, max_threads)
        self.MTLCompileOptions = type(
            "MTLCompileOptions", (_CompileOptions,), {"has_math_mode": has_math_mode}
        )

    def MTLCreateSystemDefaultDevice(self):
        return self._device

    def MTLSizeMake(self, width: int, height: int, depth: int) -> _MTLSize:
        for name, value in (("width", width), ("height", height), ("depth", depth)):
            _expect("MTLSizeMake", name, value, int, lambda v: v >= 1)
        return _MTLSize(width, height, depth)


class _Device:
    def __init__(self, ledger: Ledger, objc: _ObjC, max_threads: int):
        self._ledger = ledger
        self._objc = objc
        self._max_threads = max_threads

    def name(self) -> str:
        return DEVICE_NAME

    def newCommandQueue(self):
        return _Queue(self._ledger, self._objc)

    def newLibraryWithSource_options_error_(self, source, options, error):
        selector = "newLibraryWithSource:options:error:"
        _expect(selector, "source", source, str)
        _expect(selector, "options", options, _CompileOptions)
        _expect(selector, "error", error, type(None))  # PyObjC: pass None, get the NSError back
        self._ledger.math_modes.append(options._math_mode)
        try:
            library = _Library(source, options._math_mode)
        except CompileError as failure:
            return None, _NSError(
                "Compilation failed:\n\n" + _GXX_LOCATION.sub(r"program_source:\1:\2: ", failure.output)
            )
        self._ledger.read_only.update(library._read_only)
        return library, None

    def newComputePipelineStateWithFunction_error_(self, function, error):
        selector = "newComputePipelineStateWithFunction:error:"
        _expect(selector, "function", function, _Function)
        _expect(selector, "error", error, type(None))
        return _Pipeline(function, self._max_threads), None

    def newBufferWithLength_options_(self, length: int, options: int):
        _expect("newBufferWithLength:options:", "length", length, int, lambda n: n > 0)
        _expect("newBufferWithLength:options:", "options", options, int)
        return self._buffer(bytearray(length))

    def newBufferWithBytes_length_options_(self, data, length: int, options: int):
        selector = "newBufferWithBytes:length:options:"
        _expect(selector, "bytes", data, _BYTES_LIKE)
        _expect(selector, "length", length, int, lambda n: 0 < n <= len(memoryview(data).cast("B")))
        _expect(selector, "options", options, int)
        return self._buffer(bytearray(memoryview(data).cast("B")[:length]))

    def _buffer(self, data: bytearray):
        self._ledger.buffers_created += 1
        self._ledger.live_bytes += len(data)
        return _Buffer(data, self._ledger)


class _Buffer:
    """An MTLBuffer: raw bytes until ``setPurgeableState_(Empty)`` discards them."""

    def __init__(self, data: bytearray, ledger: Ledger):
        self._data: bytearray | None = data
        self._ledger = ledger

    def length(self) -> int:
        return len(self._bytes())

    def contents(self):
        return _Contents(self._bytes())

    def setPurgeableState_(self, state: int) -> int:
        _expect("setPurgeableState:", "state", state, int, lambda s: 1 <= s <= 4)
        if state == PURGEABLE_STATE_EMPTY and self._data is not None:
            self._ledger.live_bytes -= len(self._data)
            self._data = None
        return 2

    def _bytes(self) -> bytearray:
        if self._data is None:
            raise ProtocolError(
                "stand-in: this MTLBuffer was emptied (setPurgeableState: Empty) and then used"
            )
        return self._data


class _Contents:
    """``buffer.contents()``: a void pointer; PyObjC reads it with ``as_buffer(length)``."""

    def __init__(self, data: bytearray):
        self._data = data

    def as_buffer(self, length: int) -> memoryview:
        _expect("as_buffer", "length", length, int, lambda n: 0 <= n <= len(self._data))
        return memoryview(self._data)[:length]


class _Library:
    """Compiled MSL: every kernel's parameters from its signature, compiled once by the host simulator."""

    def __init__(self, source: str, math_mode: int):
        self._source = source
        declared = _kernel_parameters(source)
        self._kernels = {
            name: [(dtype, scalar) for dtype, scalar, _ in params] for name, params in declared.items()
        }
        self._read_only = {
            name: [i for i, p in enumerate(params) if p[2]] for name, params in declared.items()
        }
        self._target = Target.parse("metal -fast-math" if math_mode == MATH_MODE_FAST else "metal")
        simulator.load(source, self._functions(None), self._target)  # a CompileError is Metal's

    def newFunctionWithName_(self, name: str):
        _expect("newFunctionWithName:", "name", name, str)
        return _Function(self, name) if name in self._kernels else None

    def _run(self, name: str, arrays: list, grid: _MTLSize, block: _MTLSize) -> None:
        launch = KernelLaunch(name, _xyz(grid), _xyz(block), _slots(len(self._kernels[name])))
        simulator.load(self._source, self._functions(launch), self._target).run(name, arrays)

    def _functions(self, launch: KernelLaunch | None) -> list[CompiledFunction]:
        """One function per kernel (the same text, so one cached compile); ``launch`` replaces its own."""
        functions = []
        for name, params in self._kernels.items():
            specs = tuple(
                BufferSpec(f"b{i}", dtype, (), written=not scalar, scalar=scalar)
                for i, (dtype, scalar) in enumerate(params)
            )
            own = launch if launch is not None and launch.name == name else None
            own = own or KernelLaunch(name, (1, 1, 1), (1, 1, 1), _slots(len(params)))
            functions.append(CompiledFunction(name, specs, 0, launches=(own,)))
        return functions


def _slots(count: int) -> tuple[str, ...]:
    return tuple(f"b{i}" for i in range(count))


def _xyz(size: _MTLSize) -> tuple[int, int, int]:
    return (size.width, size.height, size.depth)


def _kernel_parameters(source: str) -> dict[str, list[tuple[str, bool, bool]]]:
    """Kernel name -> (dtype, a ``constant T&`` scalar?, ``device const``?) per buffer index, from the MSL."""
    kernels = {}
    for match in _KERNEL.finditer(source):
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        params = {}
        for text in source[match.end() : end - 1].split(","):
            declaration = " ".join(text.split())
            parsed = _PARAM.match(declaration)
            if parsed:
                space, const, msl_type, kind, index = parsed.groups()
                params[int(index)] = (_DTYPES[msl_type], kind == "&", space == "device" and const is not None)
            elif "[[buffer(" in declaration:
                raise ProtocolError(f"stand-in: cannot read the buffer parameter {declaration!r}")
        if sorted(params) != list(range(len(params))):
            raise ProtocolError(
                f"stand-in: kernel {match.group(1)} binds buffers {sorted(params)}, not 0..n-1"
            )
        kernels[match.group(1)] = [params[i] for i in range(len(params))]
    return kernels


class _Function:
    def __init__(self, library: _Library, name: str):
        self._library = library
        self._name = name


class _Pipeline:
    def __init__(self, function: _Function, max_threads: int):
        self._function = function
        self._max_threads = max_threads

    def maxTotalThreadsPerThreadgroup(self) -> int:
        return self._max_threads

    def threadExecutionWidth(self) -> int:
        return 32


class _Queue:
    def __init__(self, ledger: Ledger, objc: _ObjC):
        self._ledger = ledger
        self._objc = objc

    def commandBuffer(self):
        self._ledger.command_buffers += 1
        return self._objc._autorelease(_CommandBuffer(self._ledger, self._objc))


@dataclass
class _Dispatch:
    pipeline: _Pipeline
    bindings: dict
    grid: _MTLSize
    block: _MTLSize


class _CommandBuffer:
    def __init__(self, ledger: Ledger, objc: _ObjC):
        self._ledger = ledger
        self._objc = objc
        self._dispatches: list[_Dispatch] = []
        self._encoder: _Encoder | None = None
        self._state = "encoding"
        self._error: _NSError | None = None
        self._times = (0.0, 0.0)

    def computeCommandEncoder(self):
        self._require("encoding", "computeCommandEncoder")
        if self._encoder is not None and not self._encoder._ended:
            raise ProtocolError("stand-in: a new encoder while the previous one was not ended (endEncoding)")
        self._encoder = _Encoder(self._dispatches.append, self._ledger)
        return self._objc._autorelease(self._encoder)

    def commit(self) -> None:
        self._require("encoding", "commit")
        if self._encoder is not None and not self._encoder._ended:
            raise ProtocolError("stand-in: commit with an encoder not ended (endEncoding)")
        start = time.perf_counter()
        for dispatch in self._dispatches:
            try:
                _execute(dispatch)
            except LaunchError as failure:
                self._error = _NSError(
                    "Execution of the command buffer was aborted due to an error during execution. "
                    f"(stand-in: {failure})"
                )
                break
        self._times = (start, time.perf_counter())
        self._state = "committed"

    def waitUntilCompleted(self) -> None:
        self._require("committed", "waitUntilCompleted")
        self._state = "completed"

    def status(self) -> int:
        return STATUS_ERROR if self._error is not None else STATUS_COMPLETED

    def error(self):
        return self._error

    def GPUStartTime(self) -> float:
        self._require("completed", "GPUStartTime")
        return self._times[0]

    def GPUEndTime(self) -> float:
        self._require("completed", "GPUEndTime")
        return self._times[1]

    def _require(self, state: str, selector: str) -> None:
        if self._state != state:
            raise ProtocolError(
                f"stand-in: {selector} on a command buffer that is {self._state}, not {state}"
            )


class _Encoder:
    def __init__(self, record, ledger: Ledger):
        self._record = record
        self._ledger = ledger
        self._pipeline: _Pipeline | None = None
        self._bindings: dict[int, object] = {}
        self._ended = False

    def setComputePipelineState_(self, pipeline) -> None:
        _expect("setComputePipelineState:", "state", pipeline, _Pipeline)
        self._pipeline = pipeline

    def setBuffer_offset_atIndex_(self, buffer, offset: int, index: int) -> None:
        selector = "setBuffer:offset:atIndex:"
        _expect(selector, "buffer", buffer, _Buffer)
        _expect(selector, "offset", offset, int, lambda n: 0 <= n < buffer.length())
        _expect(selector, "index", index, int, lambda n: 0 <= n < 31)
        self._bindings[index] = (buffer, offset)

    def setBytes_length_atIndex_(self, data, length: int, index: int) -> None:
        selector = "setBytes:length:atIndex:"
        _expect(selector, "bytes", data, _BYTES_LIKE)
        _expect(selector, "length", length, int, lambda n: 0 < n <= min(len(data), SET_BYTES_LIMIT))
        _expect(selector, "index", index, int, lambda n: 0 <= n < 31)
        self._ledger.set_bytes_calls += 1
        self._bindings[index] = bytes(memoryview(data).cast("B")[:length])  # Metal copies them now

    def dispatchThreadgroups_threadsPerThreadgroup_(self, grid, block) -> None:
        selector = "dispatchThreadgroups:threadsPerThreadgroup:"
        _expect(selector, "threadgroupsPerGrid", grid, _MTLSize)
        _expect(selector, "threadsPerThreadgroup", block, _MTLSize)
        if self._pipeline is None:
            raise ProtocolError("stand-in: dispatch before setComputePipelineState:")
        threads = block.width * block.height * block.depth
        if threads > self._pipeline.maxTotalThreadsPerThreadgroup():
            raise ProtocolError(
                f"stand-in: {threads} threads per threadgroup exceed the pipeline's "
                f"maxTotalThreadsPerThreadgroup {self._pipeline.maxTotalThreadsPerThreadgroup()}"
            )
        self._record(_Dispatch(self._pipeline, dict(self._bindings), grid, block))

    def endEncoding(self) -> None:
        self._ended = True


def _execute(dispatch: _Dispatch) -> None:
    """Run one dispatch on the simulator with each binding's bytes read as the kernel declares them."""
    function = dispatch.pipeline._function
    params = function._library._kernels[function._name]
    arrays = []
    for index, (dtype, scalar) in enumerate(params):
        if index not in dispatch.bindings:
            raise ProtocolError(f"stand-in: kernel {function._name} has nothing bound at buffer({index})")
        arrays.append(_view(dispatch.bindings[index], np.dtype(dtype), scalar, function._name, index))
    function._library._run(function._name, arrays, dispatch.grid, dispatch.block)


def _view(binding, dtype: np.dtype, scalar: bool, kernel: str, index: int):
    if isinstance(binding, bytes):
        if len(binding) < dtype.itemsize:
            raise ProtocolError(
                f"stand-in: kernel {kernel} reads a {dtype} at buffer({index}), "
                f"but only {len(binding)} bytes were set"
            )
        data, offset = bytearray(binding), 0  # setBytes data is read-only to the kernel; a copy
    else:
        buffer, offset = binding
        data = buffer._bytes()
    if scalar:
        return np.frombuffer(data, dtype=dtype, count=1, offset=offset)[0]
    return np.frombuffer(data, dtype=dtype, count=(len(data) - offset) // dtype.itemsize, offset=offset)
