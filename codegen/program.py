"""What a code generator hands to a runtime: the compiled functions' signatures and kernel launches.

``build`` lowers each PrimFunc, prints the whole module's source for the
target, and describes every function as a ``CompiledFunction``: its buffer
parameters (name, dtype, shape, whether it writes them), the global scratch
buffers the host allocates for one call (GPU targets), and the kernels it
launches in order with their grid and threadgroup sizes. A runtime
(``codegen/<target>/runtime.py``, the Metal host simulator) needs nothing else:
it compiles the source once and runs a function's launches on arrays.

A dynamic shape makes some of this known only at call time: a grid extent
(``(n + 15) // 16`` threadgroups) or a workspace dimension is a
``SymbolicExtent`` of the function's integer scalars (the shape variables and
the user's own). ``CompiledFunction.for_call(arguments)`` is the function with
those values filled in, which is what every GPU runtime launches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from tir.analysis.flops import FlopCountError, flop_count
from tir.arith import ConstIntBound, const_int_bound
from tir.expr import PrimExpr
from tir.function import PrimFunc
from tir.functor import collect_vars


@dataclass(frozen=True)
class SymbolicExtent:
    """A launch or workspace size known at call time: ``text`` as TVMScript prints it (``(n + 15) // 16``)
    and the expression, of the function's integer scalars, it evaluates."""

    text: str
    expr: PrimExpr = field(compare=False, repr=False)

    def value(self, scalars: dict[str, int]) -> int:
        """The extent once each variable's value is known (``scalars`` maps names to values)."""
        bounds = {}
        for var in collect_vars(self.expr):
            if var.name not in scalars:
                raise ValueError(f"the extent {self.text} needs {var.name}, which no scalar argument gives")
            bounds[var] = ConstIntBound(scalars[var.name], scalars[var.name])
        bound = const_int_bound(self.expr, bounds)
        if not bound.is_const:
            raise ValueError(f"the extent {self.text} could not be evaluated from {scalars}")
        return bound.min_value

    def __str__(self) -> str:
        return self.text


Extent = int | SymbolicExtent


def evaluate(extent: Extent | str, scalars: dict[str, int]) -> int:
    """An extent's value for one call: a constant as it is, a shape variable's name or an expression bound."""
    if isinstance(extent, str):
        return scalars[extent]
    return extent.value(scalars) if isinstance(extent, SymbolicExtent) else extent


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
    shape: tuple[int | str | SymbolicExtent, ...]
    written: bool = True
    scalar: bool = False
    shape_of: tuple[int, int] | None = None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.nbytes_per_element

    @property
    def nbytes_per_element(self) -> int:
        return np.dtype(self.numpy_dtype).itemsize

    @property
    def numpy_dtype(self) -> str:
        """The host array's dtype: the buffer's own, except bfloat16, which numpy holds as uint16 bits."""
        return "uint16" if self.dtype == "bfloat16" else self.dtype


@dataclass(frozen=True)
class KernelLaunch:
    """One GPU kernel launch: ``name`` over ``grid`` threadgroups of ``block`` threads (x, y, z).

    A dynamic shape may make a grid extent a ``SymbolicExtent``; the threads per threadgroup are
    always constants (checked against the target's limits at build).

    ``buffers`` names the kernel's parameters in order; each is one of the
    function's parameters (a buffer or a scalar) or workspaces. ``shared_bytes`` is the static
    threadgroup (shared) memory the kernel declares.
    """

    name: str
    grid: tuple[Extent, Extent, Extent]
    block: tuple[int, int, int]
    buffers: tuple[str, ...]
    shared_bytes: int = 0

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
    A dynamic shape's FLOPs depend on the call: ``flops`` is 0 and ``counted`` is
    the function ``flops_for_call`` counts them in.
    """

    name: str
    params: tuple[BufferSpec, ...]
    flops: int
    launches: tuple[KernelLaunch, ...] = ()
    workspaces: tuple[BufferSpec, ...] = ()
    entry: str | None = None
    attrs: dict = field(default_factory=dict)
    checks: tuple = ()
    counted: PrimFunc | None = field(default=None, repr=False, compare=False)

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

    @property
    def is_dynamic(self) -> bool:
        """Whether a parameter's or workspace's shape, or a launch's grid, is known only at call time."""
        extents = [d for spec in (*self.params, *self.workspaces) for d in spec.shape]
        extents += [e for launch in self.launches for e in launch.grid]
        return any(not isinstance(extent, int) for extent in extents)

    def for_call(self, arguments: Sequence) -> CompiledFunction:
        """This function for one call on ``arguments`` (in ``params`` order, the shape variables
        included): every shape and grid extent a number, and launches over an empty grid dropped."""
        if not self.is_dynamic:
            return self
        scalars = self._integer_scalars(arguments)

        def concrete(spec: BufferSpec) -> BufferSpec:
            return replace(spec, shape=tuple(evaluate(d, scalars) for d in spec.shape))

        launches = []
        for launch in self.launches:
            grid = tuple(evaluate(extent, scalars) for extent in launch.grid)
            if min(grid) > 0:
                launches.append(replace(launch, grid=grid))
        return replace(
            self,
            params=tuple(concrete(spec) for spec in self.params),
            workspaces=tuple(concrete(spec) for spec in self.workspaces),
            launches=tuple(launches),
        )

    def flops_for_call(self, arguments: Sequence) -> int:
        """FLOPs of one call on ``arguments`` (in ``params`` order, the shape variables included)."""
        if self.counted is None:
            return self.flops
        try:
            return flop_count(self.counted, shape_vars=self._integer_scalars(arguments))
        except FlopCountError:  # an extent that is not a function of the sizes
            return 0

    def _integer_scalars(self, arguments: Sequence) -> dict[str, int]:
        return {
            spec.name: int(value)
            for spec, value in zip(self.params, arguments)
            if spec.scalar and np.dtype(spec.numpy_dtype).kind in "iu"
        }

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
                    "grid": [_extent_json(extent) for extent in launch.grid],
                    "block": list(launch.block),
                    "arguments": list(launch.buffers),
                    "shared_bytes": launch.shared_bytes,
                }
                for launch in self.launches
            ],
        }


def _extent_json(extent: Extent | str) -> int | str:
    """A constant as it is; a call-time extent as its TVMScript text (``"(n + 15) // 16"``)."""
    return extent.text if isinstance(extent, SymbolicExtent) else extent


def _buffer_json(spec: BufferSpec) -> dict:
    return {
        "name": spec.name,
        "dtype": spec.dtype,
        "shape": [_extent_json(dim) for dim in spec.shape],
        "written": spec.written,
        "scalar": spec.scalar,
        **({"shape_of": list(spec.shape_of)} if spec.shape_of is not None else {}),
    }
