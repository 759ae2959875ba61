"""Tensor expressions: the objects ``te.placeholder``, ``te.compute`` and ``te.reduce_axis`` make.

A ``Tensor`` is a named, shaped, typed value: a placeholder (an input) or the result of a
``ComputeOp``, whose body is a ``PrimExpr`` over the op's axis variables (one per output
dimension) or a ``Reduction`` (``te.sum``/``max``/``min`` of an expression over reduction
axes). Indexing a tensor (``A[i, k]``) gives a ``BufferLoad`` of the tensor's buffer, so
bodies are ordinary IR expressions; tir/te/create_prim_func.py turns the ops into blocks.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import dtype as _dt
from .. import op
from ..analysis.reducer import REDUCERS_BY_NAME, combine, identity_of
from ..buffer import Buffer
from ..expr import BufferLoad, PrimExpr, Range, Var, const
from ..functor import post_order_visit


@dataclass(frozen=True, eq=False)
class Axis:
    """An iteration axis: a variable and its range, spatial (from te.compute) or reduction."""

    var: Var
    dom: Range
    reduce: bool = False

    def __repr__(self) -> str:
        kind = "reduce_axis" if self.reduce else "axis"
        return f"{kind}({self.var.name}, [{self.dom.min}, {self.dom.min + self.dom.extent}))"


@dataclass(frozen=True, eq=False)
class Reduction:
    """``te.sum(source, axis=k)``: the body of a reducing ComputeOp (its whole body, as in TVM)."""

    combiner: str  # "sum", "max" or "min": a name in tir/analysis/reducer.py's table
    source: PrimExpr
    axes: tuple[Axis, ...]

    @property
    def dtype(self) -> str:
        return self.source.dtype

    def identity(self) -> PrimExpr:
        """The value the reduction starts from, as rfactor and cross-thread reductions take it."""
        return identity_of(REDUCERS_BY_NAME[self.combiner], self.dtype)

    def combine(self, accumulated: PrimExpr) -> PrimExpr:
        return combine(REDUCERS_BY_NAME[self.combiner], accumulated, self.source)


class Tensor:
    """A placeholder or a computed tensor; ``A[i, j]`` reads one element."""

    def __init__(self, buffer: Buffer, op_: ComputeOp | None):
        self.buffer = buffer
        self.op = op_

    @property
    def name(self) -> str:
        return self.buffer.name

    @property
    def shape(self) -> tuple[PrimExpr, ...]:
        return self.buffer.shape

    @property
    def dtype(self) -> str:
        return self.buffer.dtype

    @property
    def ndim(self) -> int:
        return len(self.buffer.shape)

    def __getitem__(self, indices) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        indices = tuple(axis.var if isinstance(axis, Axis) else axis for axis in indices)
        if len(indices) != self.ndim:
            raise IndexError(f"tensor {self.name} has {self.ndim} dimensions, indexed with {len(indices)}")
        return self.buffer[indices]

    def __repr__(self) -> str:
        kind = "placeholder" if self.op is None else "compute"
        return f"Tensor({self.name}, {tuple(self.shape)}, {self.dtype!r}, {kind})"


@dataclass(frozen=True, eq=False)
class ComputeOp:
    """What ``te.compute`` records: the output axes and the body over their variables."""

    name: str
    axes: tuple[Axis, ...]
    body: PrimExpr | Reduction
    attrs: dict
    inputs: tuple[Tensor, ...]  # the tensors the body reads, in order of first read

    @property
    def reduce_axes(self) -> tuple[Axis, ...]:
        return self.body.axes if isinstance(self.body, Reduction) else ()


# Each live tensor's buffer -> the tensor, so the loads of a body being built lead back to the
# tensors they read; a ComputeOp then holds those tensors itself.
_TENSORS: weakref.WeakValueDictionary[Buffer, Tensor] = weakref.WeakValueDictionary()


def _read_tensors(body: PrimExpr | Reduction) -> tuple[Tensor, ...]:
    found: dict[Buffer, None] = {}
    source = body.source if isinstance(body, Reduction) else body
    post_order_visit(source, lambda n: found.setdefault(n.buffer) if isinstance(n, BufferLoad) else None)
    missing = [buffer.name for buffer in found if buffer not in _TENSORS]
    if missing:
        raise ValueError(f"te.compute reads {', '.join(missing)}, which is not a te tensor")
    return tuple(_TENSORS[buffer] for buffer in found)


def _shape_of(shape) -> tuple[PrimExpr, ...]:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for dim in dims:
        value = const(dim) if isinstance(dim, int) and not isinstance(dim, bool) else dim
        if not isinstance(value, PrimExpr) or not _dt.is_integer(value.dtype):
            raise TypeError(f"a tensor shape holds integers or integer expressions, not {dim!r}")
        out.append(value)
    return tuple(out)


def _tensor(name: str, shape, dtype: str, op_: ComputeOp | None) -> Tensor:
    tensor = Tensor(Buffer(name, _shape_of(shape), dtype), op_)
    _TENSORS[tensor.buffer] = tensor
    return tensor


def placeholder(shape, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor: ``A = te.placeholder((n, k), "float32", name="A")``."""
    return _tensor(name, shape, dtype, None)


def reduce_axis(dom, name: str = "rv") -> Axis:
    """A reduction axis over ``range(extent)`` or ``(min, max)``: ``k = te.reduce_axis((0, n), name="k")``."""
    if isinstance(dom, (tuple, list)):
        lo, hi = dom
    else:
        lo, hi = 0, dom
    lo, hi = const(lo), const(hi)
    dtype = "int64" if "int64" in (lo.dtype, hi.dtype) else "int32"
    lo, hi = op.cast(dtype, lo), op.cast(dtype, hi)
    return Axis(Var(name, dtype), Range(lo, op.sub(hi, lo)), reduce=True)


def _reduction(combiner: str) -> Callable:
    def reduce(expr: PrimExpr, axis: Axis | Sequence[Axis], where: PrimExpr | None = None) -> Reduction:
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        if not axes or not all(isinstance(a, Axis) and a.reduce for a in axes):
            raise TypeError(f"te.{combiner} reduces over te.reduce_axis axes, got {axis!r}")
        if where is not None:
            raise NotImplementedError(f"te.{combiner}(..., where=) is not supported yet; guard the source")
        return Reduction(combiner, const(expr), axes)

    reduce.__name__ = combiner
    reduce.__doc__ = f"``te.{combiner}(expr, axis=k)``: the {combiner} of expr over the reduction axes."
    return reduce


sum = _reduction("sum")  # noqa: A001 - TVM's name
max = _reduction("max")  # noqa: A001 - TVM's name
min = _reduction("min")  # noqa: A001 - TVM's name


def compute(
    shape, fcompute: Callable, name: str = "compute", tag: str = "", attrs: dict | None = None
) -> Tensor:
    """``C = te.compute((n, m), lambda i, j: A[i, j] * 2, name="C")``: a tensor each of whose
    elements is ``fcompute`` of its indices; the axes are named after the lambda's parameters.
    The body is an expression, or one ``te.sum``/``max``/``min`` at its top (as TVM requires)."""
    dims = _shape_of(shape)
    names = _axis_names(fcompute, len(dims))
    axes = tuple(Axis(Var(n, d.dtype), Range(const(0, d.dtype), d)) for n, d in zip(names, dims))
    body = fcompute(*[axis.var for axis in axes])
    if isinstance(body, (list, tuple)):
        raise NotImplementedError("te.compute with several outputs is not supported yet")
    if not isinstance(body, Reduction):
        body = const(body)
        if not isinstance(body, PrimExpr):
            raise TypeError(f"te.compute's function returned {body!r}, not an expression")
    compute_op = ComputeOp(name, axes, body, dict(attrs or {}), _read_tensors(body))
    return _tensor(name, dims, body.dtype, compute_op)


def _axis_names(fcompute: Callable, ndim: int) -> list[str]:
    params = list(inspect.signature(fcompute).parameters.values())
    if len(params) == 1 and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return [f"i{index}" for index in range(ndim)]
    if len(params) != ndim:
        raise TypeError(f"te.compute's function takes {len(params)} indices for a shape of {ndim} dimensions")
    return [param.name for param in params]


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A symbolic scalar, e.g. a dynamic extent: ``n = te.var("n")``."""
    return Var(name, _dt.check(dtype))


def const_value(value, dtype: str | None = None) -> PrimExpr:
    """``te.const(1.5, "float32")``: a constant of a dtype (int32 / float32 by default)."""
    if dtype is None:
        dtype = "float32" if isinstance(value, float) else "int32"
    return const(value, dtype)
