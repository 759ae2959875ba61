"""The Metal target's runtime on macOS: compile the module's MSL with the Metal framework, dispatch and time.

``build(mod, "metal")`` prints one MSL text and calls ``load(source,
functions, target)``. Through PyObjC's Metal bindings (the optional
``pyobjc-framework-Metal``, imported only here) the source becomes a library
and each kernel a compute pipeline, built once at load. A call copies the
arrays into shared-storage buffers, encodes one compute encoder per kernel
launch (threadgroups = grid, threads per threadgroup = block) into one command
buffer, waits for it, and copies the written buffers back. ``time`` reads the
command buffer's GPU start and end times. Elsewhere, ``build(mod, "metal",
device="sim")`` runs the same source on the host simulator instead.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

import numpy as np

from codegen.errors import CompileError, LaunchError, RuntimeUnavailableError
from codegen.program import CompiledFunction, KernelLaunch
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
    metal = _import_metal()
    device = metal.MTLCreateSystemDefaultDevice()
    if device is None:
        raise MetalUnavailableError(f"{METAL_MISSING} (this Mac reports no Metal device)")
    return MetalModule(metal, device, source, functions)


class MetalModule:
    """Compute pipelines on one Metal device and the functions that dispatch them."""

    def __init__(self, metal, device, source: str, functions: Sequence[CompiledFunction]):
        self._metal = metal
        self._device = device
        self._queue = device.newCommandQueue()
        self.device_name = str(device.name())
        library = self._compile(source)
        self._functions = {function.name: function for function in functions}
        names = sorted({launch.name for function in functions for launch in function.launches})
        self._pipelines = {name: self._pipeline(library, name, source) for name in names}
        for function in functions:
            for launch in function.launches:
                self._check_threads(function, launch)

    def run(self, name: str, arrays: Sequence[np.ndarray]) -> None:
        """Dispatch function ``name``'s kernels in order on ``arrays`` (in the order of its params)."""
        function = self._lookup(name)
        buffers = self._buffers(function, arrays)
        self._submit(function, buffers, rounds=1)
        self._copy_back(function, arrays, buffers)

    def time(self, name: str, arrays: Sequence[np.ndarray], number: int, repeat: int) -> list[float]:
        """Mean GPU seconds per call of ``name``: a warm-up, then ``repeat`` command buffers of ``number``."""
        if number < 1 or repeat < 1:
            raise ValueError(f"time() needs number and repeat >= 1; got number={number}, repeat={repeat}")
        function = self._lookup(name)
        buffers = self._buffers(function, arrays)
        self._submit(function, buffers, rounds=1)
        means = [self._submit(function, buffers, rounds=number) / number for _ in range(repeat)]
        self._copy_back(function, arrays, buffers)
        return means

    def _compile(self, source: str):
        library, error = self._device.newLibraryWithSource_options_error_(
            source, self._metal.MTLCompileOptions.new(), None
        )
        if library is None:
            raise CompileError("Metal", _describe(error), source)
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
            raise LaunchError(
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

    def _buffers(self, function: CompiledFunction, arrays: Sequence[np.ndarray]) -> dict:
        """Name -> shared-storage MTLBuffer holding each param's data; workspaces uninitialised."""
        shared = self._metal.MTLResourceStorageModeShared
        buffers = {}
        for spec, array in zip(function.params, arrays):
            data = np.ascontiguousarray(array).tobytes()
            buffers[spec.name] = (
                self._device.newBufferWithBytes_length_options_(data, len(data), shared)
                if data
                else self._device.newBufferWithLength_options_(4, shared)  # Metal has no empty buffers
            )
        for spec in function.workspaces:
            buffers[spec.name] = self._device.newBufferWithLength_options_(max(spec.nbytes, 4), shared)
        return buffers

    def _copy_back(self, function: CompiledFunction, arrays: Sequence[np.ndarray], buffers: dict) -> None:
        for spec, array in zip(function.params, arrays):
            if spec.written and array.size:
                contents = buffers[spec.name].contents().as_buffer(array.nbytes)
                array[...] = np.frombuffer(contents, dtype=array.dtype).reshape(array.shape)

    def _submit(self, function: CompiledFunction, buffers: dict, rounds: int) -> float:
        """Run ``rounds`` calls of ``function`` in one command buffer; its GPU seconds."""
        command_buffer = self._queue.commandBuffer()
        for _ in range(rounds):
            for launch in function.launches:
                self._encode(command_buffer, launch, buffers)
        command_buffer.commit()
        command_buffer.waitUntilCompleted()
        error = command_buffer.error()
        if error is not None:
            names = ", ".join(repr(launch.name) for launch in function.launches)
            raise LaunchError(
                f"kernel {names} of {function.name!r} failed on {self.device_name}: {_describe(error)}"
            )
        return command_buffer.GPUEndTime() - command_buffer.GPUStartTime()

    def _encode(self, command_buffer, launch: KernelLaunch, buffers: dict) -> None:
        # One encoder per launch: Metal orders encoders in a command buffer, so each kernel sees the last.
        encoder = command_buffer.computeCommandEncoder()
        encoder.setComputePipelineState_(self._pipelines[launch.name])
        for index, name in enumerate(launch.buffers):
            encoder.setBuffer_offset_atIndex_(buffers[name], 0, index)
        encoder.dispatchThreadgroups_threadsPerThreadgroup_(
            self._metal.MTLSizeMake(*launch.grid), self._metal.MTLSizeMake(*launch.block)
        )
        encoder.endEncoding()


def _describe(error) -> str:
    """The compiler's or driver's own text (``program_source:12:5: error: ...``) from an NSError."""
    return str(error.localizedDescription()) if error is not None else "(no error description)"


def _import_metal():
    if sys.platform != "darwin":
        raise MetalUnavailableError(METAL_MISSING)
    try:
        import Metal
    except ImportError as error:
        raise MetalUnavailableError(METAL_BINDINGS_MISSING) from error
    return Metal
