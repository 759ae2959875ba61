"""What a code generator hands to a runtime: the compiled functions' signatures and kernel launches.

``build`` lowers each PrimFunc, prints the whole module's source for the
target, and describes every function as a ``CompiledFunction``: its buffer
parameters (name, dtype, shape, whether it writes them), the global scratch
buffers the host allocates for one call (GPU targets), and the kernels it
launches in order with their grid and threadgroup sizes. A runtime
(``codegen/<target>/runtime.py``, the Metal host simulator) needs nothing else:
it compiles the source once and runs a function's launches on arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class BufferSpec:
    """One parameter a function takes, or a buffer the host allocates: its shape as the user wrote it.

    A scalar parameter (``scalar=True``, shape ``()``) is passed by value: a C
    argument, a CUDA kernel argument, a ``constant T&`` bound at its buffer
    index in Metal. A dynamic shape names its symbolic dimensions (``("n", 8)``);
    each such variable is a scalar parameter after the user's ones, with
    ``shape_of = (argument, dimension)`` saying which array's size gives it at call time.
    """

    name: str
    dtype: str
    shape: tuple[int | str, ...]
    written: bool = True
    scalar: bool = False
    shape_of: tuple[int, int] | None = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.numpy_dtype).itemsize

    @property
    def numpy_dtype(self) -> str:
        """The host array's dtype: the buffer's own, except bfloat16, which numpy holds as uint16 bits."""
        return "uint16" if self.dtype == "bfloat16" else self.dtype


@dataclass(frozen=True)
class KernelLaunch:
    """One GPU kernel launch: ``name`` over ``grid`` threadgroups of ``block`` threads (x, y, z).

    ``buffers`` names the kernel's parameters in order; each is one of the
    function's parameters (a buffer or a scalar) or workspaces. ``shared_bytes`` is the
    threadgroup (shared) memory the kernel declares; ``dynamic_shared_bytes``, when not 0, the
    dynamic shared memory the launch must request (CUDA, a kernel over the static 48 KB; its
    buffers are placed in it, 128-byte aligned).
    """

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    buffers: tuple[str, ...]
    shared_bytes: int = 0
    dynamic_shared_bytes: int = 0

    @property
    def threads_per_group(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class CompiledFunction:
    """A PrimFunc as a runtime sees it.

    GPU targets: ``launches`` in order, ``workspaces`` allocated by the host
    for the call. C target: ``entry`` is the exported C symbol taking the
    parameters' data pointers in order; ``launches`` is empty. Checked builds
    (``checks``, codegen/checks.py) have one more parameter, last: the check
    state the module passes for the user; ``arguments`` are the ones users pass.
    """

    name: str
    params: tuple[BufferSpec, ...]
    flops: int
    launches: tuple[KernelLaunch, ...] = ()
    workspaces: tuple[BufferSpec, ...] = ()
    entry: str | None = None
    attrs: dict = field(default_factory=dict)
    checks: tuple = ()

    @property
    def arguments(self) -> tuple[BufferSpec, ...]:
        """The parameters a caller passes (not the shape variables nor a checked build's check state)."""
        params = self.params[:-1] if self.checks else self.params
        return tuple(p for p in params if p.shape_of is None)

    def with_shapes(self, arrays: tuple) -> tuple:
        """The caller's ``arrays`` followed by the values of the shape variables, read from their sizes."""
        sizes = [np.int64(np.shape(arrays[index])[dim]) for index, dim in self.shape_sources()]
        return (*arrays, *sizes)

    def shape_sources(self) -> list[tuple[int, int]]:
        return [p.shape_of for p in self.params if p.shape_of is not None]

    def as_json(self) -> dict:
        """What a host program needs to call this function: parameters in argument order (dtype, shape,
        written, scalar), the workspaces it allocates, and each kernel launch in order."""
        return {
            "name": self.name,
            "flops": self.flops,
            "params": [_buffer_json(p) for p in self.params],
            "workspaces": [_buffer_json(w) for w in self.workspaces],
            "launches": [
                {
                    "kernel": launch.name,
                    "grid": list(launch.grid),
                    "block": list(launch.block),
                    "arguments": list(launch.buffers),
                    "shared_bytes": launch.shared_bytes,
                    "dynamic_shared_bytes": launch.dynamic_shared_bytes,
                }
                for launch in self.launches
            ],
        }


def _buffer_json(spec: BufferSpec) -> dict:
    return {
        "name": spec.name,
        "dtype": spec.dtype,
        "shape": list(spec.shape),
        "written": spec.written,
        "scalar": spec.scalar,
        **({"shape_of": list(spec.shape_of)} if spec.shape_of is not None else {}),
    }
