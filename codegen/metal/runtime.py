"""The Metal target's runtime on macOS: compile the module's MSL with the Metal framework, dispatch and time.

``build(mod, "metal")`` prints one MSL text and calls ``load(source,
functions, target)``. Through PyObjC's Metal bindings (the optional
``pyobjc-framework-Metal``, imported only here) the source becomes a library,
compiled in Metal's safe math mode (IEEE, like numpy, C and the simulator)
unless the target says ``-fast-math``, and each kernel a compute pipeline,
built once at load; a pipeline that allows fewer threads than its launch is a
BuildError then. Each function's shared-storage buffers (its array parameters
and workspaces) are made on its first call and reused by every later call and
by ``time``: a call copies the arrays in, encodes one compute encoder per
kernel launch (threadgroups = grid, threads per threadgroup = block) into one
command buffer, binds scalars by value with ``setBytes`` (converted to their
declared dtype by codegen/scalars.py), waits, checks the command buffer's
error, and copies the written buffers back. Command buffers and encoders are
made inside an autorelease pool, drained per submit, so a long loop of calls
does not grow memory; ``release()`` empties the buffers explicitly (PyObjC
releases before 12.x keep ``new*`` results retained, so dropping the Python
object alone would not free them). ``time`` reads the command buffer's GPU
start and end times. Elsewhere, ``build(mod, "metal", device="sim")`` runs the
same source on the host simulator, and tests/codegen/metal_standin.py drives
this file through a stand-in for PyObjC's calling protocol.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

import numpy as np

from codegen.errors import BuildError, CompileError, LaunchError, RuntimeUnavailableError
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.scalars import scalar_argument
from codegen.target import Target

METAL_MISSING = (
    "Metal needs macOS with a Metal device and pyobjc-framework-Metal; "
    "on Linux use build(mod, 'metal', device='sim')"
)
METAL_BINDINGS_MISSING = f"{METAL_MISSING} (pip install 'tensorir-py[metal]')"


class MetalUnavailableError(RuntimeUnavailableError):
    """The Metal runtime cannot start here: not macOS, no PyObjC Metal bindings, or no Metal device."""


def unavailable_reason(target: Target) -> str | None:
    """Why the Metal runtime cannot run here, found without importing it (None: it may run)."""
    if sys.platform != "darwin":
        return METAL_MISSING
    if importlib.util.find_spec("Metal") is None:
        return METAL_BINDINGS_MISSING
    return None


def load(source: str, functions: Sequence[CompiledFunction], target: Target) -> MetalModule:
    """Compile ``source`` on the system's default Metal device and build a pipeline per kernel."""
    metal, objc = _import_pyobjc()
    device = metal.MTLCreateSystemDefaultDevice()
    if device is None:
        raise MetalUnavailableError(f"{METAL_MISSING} (this Mac reports no Metal device)")
    return MetalModule(metal, objc, device, source, functions, target)


class MetalModule:
    """Compute pipelines on one Metal device, the functions that dispatch them and their resident buffers."""

    def __init__(
        self, metal, objc, device, source: str, functions: Sequence[CompiledFunction], target: Target
    ):
        self._metal = metal
        self._objc = objc
        self._device = device
        self._queue = device.newCommandQueue()
        self.device_name = str(device.name())
        library = self._compile(source, target.fast_math)
        self._functions = {function.name: function for function in functions}
        names = sorted({launch.name for function in functions for launch in function.launches})
        self._pipelines = {name: self._pipeline(library, name, source) for name in names}
        self._resident: dict[str, dict] = {}
        self._resident_shapes: dict[str, tuple] = {}
        for function in functions:
            for launch in function.launches:
                self._check_threads(function, launch)

    def run(self, name: str, arrays: Sequence) -> None:
        """Dispatch function ``name``'s kernels in order on ``arrays`` (in the order of its params)."""
        function = self._lookup(name).for_call(arrays)
        buffers, scalars = self._bind(function, arrays)
        self._submit(function, buffers, scalars, rounds=1)
        self._copy_back(function, arrays, buffers)

    def time(self, name: str, arrays: Sequence, number: int, repeat: int) -> list[float]:
        """Mean GPU seconds per call of ``name``: a warm-up, then ``repeat`` command buffers of ``number``."""
        if number < 1 or repeat < 1:
            raise ValueError(f"time() needs number and repeat >= 1; got number={number}, repeat={repeat}")
        function = self._lookup(name).for_call(arrays)
        buffers, scalars = self._bind(function, arrays)
        self._submit(function, buffers, scalars, rounds=1)
        means = [self._submit(function, buffers, scalars, rounds=number) / number for _ in range(repeat)]
        self._copy_back(function, arrays, buffers)
        return means

    def release(self) -> None:
        """Free every resident buffer now (its memory is emptied even if PyObjC keeps the object alive)."""
        for name in list(self._resident):
            self._release(name)

    def _release(self, function_name: str) -> None:
        for buffer in self._resident.pop(function_name, {}).values():
            buffer.setPurgeableState_(self._metal.MTLPurgeableStateEmpty)

    def __del__(self) -> None:
        if getattr(self, "_resident", None):
            self.release()

    def _compile(self, source: str, fast_math: bool):
        options = self._metal.MTLCompileOptions.new()
        # Fast math is Metal's default; off, the GPU keeps IEEE semantics like the simulator and numpy.
        # macOS 15 replaced fastMathEnabled with mathMode; older PyObjC releases lack its constants.
        if hasattr(self._metal, "MTLMathModeSafe") and options.respondsToSelector_("setMathMode:"):
            options.setMathMode_(self._metal.MTLMathModeFast if fast_math else self._metal.MTLMathModeSafe)
        else:
            options.setFastMathEnabled_(fast_math)
        library, error = self._device.newLibraryWithSource_options_error_(source, options, None)
        if library is None:
            message = _describe(error)
            if "bfloat" in source:
                # The default language version is the newest the OS has; bfloat came with MSL 3.1.
                message += "\n(bfloat16 kernels use MSL 3.1's bfloat: they need macOS 14 or later)"
            raise CompileError("Metal", message, source)
        return library

    def _pipeline(self, library, name: str, source: str):
        function = library.newFunctionWithName_(name)
        if function is None:
            raise LaunchError(
                f"kernel {name!r} is not in the compiled Metal library; "
                "the generated source and the launch descriptions disagree"
            )
        pipeline, error = self._device.newComputePipelineStateWithFunction_error_(function, None)
        if pipeline is None:
            raise CompileError("Metal", _describe(error), source)
        return pipeline

    def _check_threads(self, function: CompiledFunction, launch: KernelLaunch) -> None:
        limit = self._pipelines[launch.name].maxTotalThreadsPerThreadgroup()
        if launch.threads_per_group > limit:
            raise BuildError(
                f"kernel {launch.name!r} of {function.name!r} needs {launch.threads_per_group} threads per "
                f"threadgroup (block {launch.block}), but its pipeline on {self.device_name} allows {limit} "
                "(the kernel's registers and threadgroup memory set this limit); bind fewer threads, "
                "e.g. split the thread-bound loop further"
            )

    def _lookup(self, name: str) -> CompiledFunction:
        if name not in self._functions:
            known = ", ".join(sorted(self._functions)) or "none"
            raise KeyError(f"no function named {name!r} in this module; it has: {known}")
        return self._functions[name]

    def _bind(self, function: CompiledFunction, arrays: Sequence) -> tuple[dict, dict[str, bytes]]:
        """The function's resident buffers holding ``arrays``' data, and each scalar's bytes."""
        specs = [spec for spec in (*function.params, *function.workspaces) if not spec.scalar]
        shapes = tuple(spec.shape for spec in specs)
        buffers = self._resident.get(function.name)
        if buffers is None or self._resident_shapes[function.name] != shapes:  # a dynamic shape changed
            self._release(function.name)
            buffers = self._resident[function.name] = {spec.name: self._new_buffer(spec) for spec in specs}
            self._resident_shapes[function.name] = shapes
        scalars = {}
        for spec, array in zip(function.params, arrays):
            if spec.scalar:
                scalars[spec.name] = scalar_argument(
                    spec.dtype, array, f"{function.name}: {spec.name}"
                ).tobytes()
            elif spec.nbytes:
                _contents(buffers[spec.name], spec)[...] = array
        return buffers, scalars

    def _new_buffer(self, spec: BufferSpec):
        # Metal has no empty buffers; a zero-size array still gets 4 bytes.
        return self._device.newBufferWithLength_options_(
            max(spec.nbytes, 4), self._metal.MTLResourceStorageModeShared
        )

    def _copy_back(self, function: CompiledFunction, arrays: Sequence, buffers: dict) -> None:
        for spec, array in zip(function.params, arrays):
            if spec.written and not spec.scalar and spec.nbytes:
                array[...] = _contents(buffers[spec.name], spec)

    def _submit(
        self, function: CompiledFunction, buffers: dict, scalars: dict[str, bytes], rounds: int
    ) -> float:
        """Run ``rounds`` calls of ``function`` in one command buffer; its GPU seconds."""
        with self._objc.autorelease_pool():
            command_buffer = self._queue.commandBuffer()
            for _ in range(rounds):
                for launch in function.launches:
                    self._encode(command_buffer, launch, buffers, scalars)
            command_buffer.commit()
            command_buffer.waitUntilCompleted()
            error = command_buffer.error()
            if error is not None:
                names = ", ".join(repr(launch.name) for launch in function.launches)
                raise LaunchError(
                    f"kernel {names} of {function.name!r} failed on {self.device_name}: {_describe(error)}"
                )
            return command_buffer.GPUEndTime() - command_buffer.GPUStartTime()

    def _encode(self, command_buffer, launch: KernelLaunch, buffers: dict, scalars: dict[str, bytes]) -> None:
        # One encoder per launch: Metal orders encoders in a command buffer, so each kernel sees the last.
        encoder = command_buffer.computeCommandEncoder()
        encoder.setComputePipelineState_(self._pipelines[launch.name])
        for index, name in enumerate(launch.buffers):
            if name in scalars:
                encoder.setBytes_length_atIndex_(scalars[name], len(scalars[name]), index)
            else:
                encoder.setBuffer_offset_atIndex_(buffers[name], 0, index)
        encoder.dispatchThreadgroups_threadsPerThreadgroup_(
            self._metal.MTLSizeMake(*launch.grid), self._metal.MTLSizeMake(*launch.block)
        )
        encoder.endEncoding()


def _contents(buffer, spec: BufferSpec) -> np.ndarray:
    """The shared-storage MTLBuffer's bytes as an array of ``spec``'s dtype and shape (no copy)."""
    data = buffer.contents().as_buffer(spec.nbytes)
    return np.frombuffer(data, dtype=spec.numpy_dtype).reshape(spec.shape)


def _describe(error) -> str:
    """The compiler's or driver's own text (``program_source:12:5: error: ...``) from an NSError."""
    return str(error.localizedDescription()) if error is not None else "(no error description)"


def _import_pyobjc():
    """PyObjC's ``Metal`` and ``objc`` modules (``objc`` for autorelease pools)."""
    if sys.platform != "darwin":
        raise MetalUnavailableError(METAL_MISSING)
    try:
        import Metal
        import objc
    except ImportError as error:
        raise MetalUnavailableError(METAL_BINDINGS_MISSING) from error
    return Metal, objc
