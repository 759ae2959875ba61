"""The CUDA target's runtime: compile the module's CUDA source with NVRTC through CuPy, launch and time it.

``build(mod, "cuda")`` prints one .cu text (every kernel ``extern "C"``) and
calls ``load(source, functions, target)``. CuPy (an optional extra, imported
only here) compiles it for the GPU it runs on, so no architecture has to be
named; a target that names one (``"cuda -arch=sm_80"``) must match the GPU.
A call copies numpy arrays to the GPU and the written ones back, uses CuPy
arrays in place, allocates the function's workspaces, and launches its
kernels in order; each launch is checked, so a failure names its kernel.
``time`` measures with CUDA events around ``number`` calls. A cubin that nvcc
built from the same source for this GPU's architecture (the tuner's build
workers leave one in the cache: ``codegen.cuda.nvcc.cached_cubin``) is loaded
instead of compiling again.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from codegen.errors import BuildError, CompileError, LaunchError, RuntimeUnavailableError
from codegen.program import CompiledFunction, KernelLaunch
from codegen.scalars import scalar_argument
from codegen.target import Target

from .nvcc import cached_cubin, nvcc_path

CUPY_MISSING = (
    "the CUDA runtime needs CuPy: pip install 'tensorir-py[cuda]' (installs cupy-cuda12x, for CUDA 12), "
    "or pip install cupy-cuda13x (CuPy 14 or later) for CUDA 13. To check that CUDA source compiles "
    "without a GPU, use codegen.cuda.nvcc.compile_with_nvcc."
)
NVRTC_OPTIONS = ("-std=c++17",)
GRID_LIMITS = (2**31 - 1, 65535, 65535)  # gridDim.x, .y, .z of every GPU since compute capability 3.0


def nvrtc_options(source: str) -> tuple[str, ...]:
    """NVRTC's options for ``source``. WMMA's ``mma.h`` includes ``crt/mma.h``, which the CUDA
    headers of pip's nvidia packages (CuPy's include path when CUDA comes from pip) lack: a
    source that includes it also searches the CUDA toolkit's headers, where nvcc is."""
    if "#include <mma.h>" not in source:
        return NVRTC_OPTIONS
    for include in _toolkit_includes():
        if (include / "crt" / "mma.h").is_file():
            return (*NVRTC_OPTIONS, f"-I{include}")
    return NVRTC_OPTIONS


def _toolkit_includes() -> list[Path]:
    """Include folders of the CUDA toolkits here: ``$CUDA_HOME``, ``$CUDA_PATH``, nvcc's, /usr/local/cuda."""
    nvcc = nvcc_path()
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    roots += [str(Path(nvcc).resolve().parent.parent) if nvcc else None, "/usr/local/cuda"]
    return [
        include
        for root in roots
        if root
        for include in (Path(root, "include"), *Path(root).glob("targets/*/include"))
    ]


class CudaUnavailableError(RuntimeUnavailableError):
    """The CUDA runtime cannot start here: CuPy is missing, or it sees no NVIDIA GPU."""


def unavailable_reason(target: Target) -> str | None:
    """Why the CUDA runtime cannot run here, found without importing CuPy (None: it may run).

    Only CuPy's presence is checked; whether it sees a GPU is known once the runtime starts.
    """
    if importlib.util.find_spec("cupy") is None:
        return CUPY_MISSING
    return None


def load(source: str, functions: Sequence[CompiledFunction], target: Target) -> CudaModule:
    """Compile ``source`` with NVRTC for the current GPU and look up every kernel the functions launch."""
    return CudaModule(_import_cupy(), source, functions, target)


class CudaModule:
    """Compiled kernels on one GPU and the functions that launch them."""

    def __init__(self, cupy, source: str, functions: Sequence[CompiledFunction], target: Target):
        self._cupy = cupy
        device = cupy.cuda.Device()
        self.device_name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"].decode()
        self.arch = _arch_for(target, f"sm_{device.compute_capability}", self.device_name)
        self._functions = {function.name: function for function in functions}
        names = sorted({launch.name for function in functions for launch in function.launches})
        cubin = cached_cubin(source, self.arch) if names else None
        kernels = self._cubin_kernels(cubin, names) if cubin is not None else None
        self.compiler = "nvcc" if kernels is not None else "nvrtc"  # which one built the kernels
        if kernels is None:
            # CuPy adds -arch for the current GPU itself (capped at what its NVRTC knows); a second
            # -arch would be overridden, so the options leave it out.
            module = cupy.RawModule(code=source, options=nvrtc_options(source))
            kernels = {name: self._kernel(module, name, source) for name in names}
        self._kernels = kernels
        for launch in (launch for function in functions for launch in function.launches):
            if launch.dynamic_shared_bytes:  # over 48 KB: the kernel must opt in before its launches
                self._kernels[launch.name].max_dynamic_shared_size_bytes = launch.dynamic_shared_bytes

    def run(self, name: str, arrays: Sequence) -> None:
        """Launch function ``name``'s kernels in order on ``arrays`` (numpy or CuPy, in params order)."""
        function = self._lookup(name).for_call(arrays)
        with self._device_buffers(function, arrays) as buffers:
            for launch in function.launches:
                self._launch(function, launch, buffers)
                self._synchronize(function, (launch,))

    def from_dlpack(self, array):
        """A CuPy view (no copy) of a GPU array from another library (PyTorch, JAX) through DLPack."""
        return self._cupy.from_dlpack(array)

    def time(self, name: str, arrays: Sequence, number: int, repeat: int) -> list[float]:
        """Mean seconds per call of ``name`` by CUDA events: one warm-up call, then ``repeat`` means."""
        if number < 1 or repeat < 1:
            raise ValueError(f"time() needs number and repeat >= 1; got number={number}, repeat={repeat}")
        function = self._lookup(name).for_call(arrays)
        start, end = self._cupy.cuda.Event(), self._cupy.cuda.Event()
        means = []
        with self._device_buffers(function, arrays) as buffers:
            for launch in function.launches:
                self._launch(function, launch, buffers)
            self._synchronize(function, function.launches)
            for _ in range(repeat):
                start.record()
                for _ in range(number):
                    for launch in function.launches:
                        self._launch(function, launch, buffers)
                end.record()
                self._synchronize(function, function.launches)
                means.append(self._cupy.cuda.get_elapsed_time(start, end) / 1e3 / number)
        return means

    def _cubin_kernels(self, cubin: Path, names: Sequence[str]) -> dict | None:
        """The kernels of nvcc's cached cubin of this source (the tuner's build workers leave one),
        or None if the driver refuses it (one older than that nvcc): then NVRTC compiles the source."""
        try:  # CuPy loads the file when the module is made or at the first lookup (by version)
            module = self._cupy.RawModule(path=str(cubin))
            return {name: module.get_function(name) for name in names}
        except self._cupy.cuda.driver.CUDADriverError:
            return None

    def _kernel(self, module, name: str, source: str):
        cupy = self._cupy
        try:
            return module.get_function(name)  # the first lookup compiles the whole module
        except cupy.cuda.compiler.CompileException as error:
            raise CompileError("NVRTC", error.get_message(), source) from None
        except cupy.cuda.driver.CUDADriverError as error:
            raise LaunchError(
                f"kernel {name!r} is not in the compiled CUDA module ({error}); "
                "the generated source and the launch descriptions disagree"
            ) from None

    def _lookup(self, name: str) -> CompiledFunction:
        if name not in self._functions:
            known = ", ".join(sorted(self._functions)) or "none"
            raise KeyError(f"no function named {name!r} in this module; it has: {known}")
        return self._functions[name]

    @contextmanager
    def _device_buffers(self, function: CompiledFunction, arrays: Sequence) -> Iterator[dict]:
        """Name -> contiguous CuPy array for params and workspaces; written results go back at exit."""
        cupy = self._cupy
        buffers, copy_back = {}, []
        for spec, array in zip(function.params, arrays):
            if spec.scalar:
                buffers[spec.name] = scalar_argument(spec.dtype, array, f"{function.name}: {spec.name}")
                continue
            if isinstance(array, cupy.ndarray):
                device = array if array.flags.c_contiguous else cupy.ascontiguousarray(array)
            else:
                device = cupy.asarray(np.ascontiguousarray(array))
            if spec.written and device is not array:
                copy_back.append((array, device))
            buffers[spec.name] = device
        for spec in function.workspaces:
            buffers[spec.name] = cupy.empty(spec.shape, dtype=spec.numpy_dtype)
        yield buffers
        for original, device in copy_back:
            original[...] = device if isinstance(original, cupy.ndarray) else device.get()

    def _launch(self, function: CompiledFunction, launch: KernelLaunch, buffers: dict) -> None:
        if any(extent > limit for extent, limit in zip(launch.grid, GRID_LIMITS)):
            raise LaunchError(
                f"kernel {launch.name!r} of {function.name!r} needs a grid of {launch.grid} thread blocks, "
                f"over CUDA's limits {GRID_LIMITS} (a dynamic size this large); bind the loop that grows "
                "with the size to blockIdx.x, or split it further"
            )
        args = tuple(buffers[name] for name in launch.buffers)
        try:
            dynamic = launch.dynamic_shared_bytes
            self._kernels[launch.name](launch.grid, launch.block, args, shared_mem=dynamic)
        except self._cupy.cuda.driver.CUDADriverError as error:
            raise LaunchError(
                f"kernel {launch.name!r} of {function.name!r} did not launch with grid {launch.grid} "
                f"and block {launch.block} on {self.device_name}: {error}"
            ) from None

    def _synchronize(self, function: CompiledFunction, launches: Sequence[KernelLaunch]) -> None:
        cupy = self._cupy
        try:
            cupy.cuda.get_current_stream().synchronize()
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as error:
            names = ", ".join(repr(launch.name) for launch in launches)
            raise LaunchError(
                f"kernel {names} of {function.name!r} failed on {self.device_name}: {error}. "
                "The CUDA context may now be unusable (restart the process); "
                "compute-sanitizer finds the faulting access."
            ) from None


def _arch_for(target: Target, device_arch: str, device_name: str) -> str:
    """The GPU's architecture; a target that names another one is an error, not a silent override."""
    named = any(option.startswith("-arch=") for option in target.options)
    if named and target.arch != device_arch:
        raise BuildError(
            f"target {str(target)!r} asks for {target.arch}, but this GPU ({device_name}) is {device_arch}; "
            "the CUDA runtime compiles for the GPU it runs on. Drop the -arch option, or check that the "
            f"source builds for {target.arch} with "
            f"codegen.cuda.nvcc.compile_with_nvcc(source, {target.arch!r})."
        )
    return device_arch


def _import_cupy():
    try:
        import cupy
    except ImportError as error:
        raise CudaUnavailableError(CUPY_MISSING) from error
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise CudaUnavailableError(f"the CUDA runtime found no usable NVIDIA GPU: {error}") from error
    if count == 0:
        raise CudaUnavailableError("the CUDA runtime found no NVIDIA GPU (CuPy reports 0 devices)")
    return cupy
