"""Tensor expressions: the objects ``te.placeholder``, ``te.compute`` and ``te.reduce_axis`` make.

A ``Tensor`` is a named, shaped, typed value: a placeholder (an input) or one output of a
``ComputeOp``, whose bodies are ``PrimExpr``s over the op's axis variables (one per output
dimension) or a ``Reduction`` (``te.sum``/``max``/``min`` of an expression over reduction
axes, optionally only ``where`` a condition holds). A compute of several expressions (``lambda
i: (A[i] + 1, A[i] * 2)``) has one output per expression, named ``<name>.v0``, ``<name>.v1``
as in TVM. Indexing a tensor (``A[i, k]``) gives a ``BufferLoad`` of the tensor's buffer, so
bodies are ordinary IR expressions; tir/te/create_prim_func.py turns the ops into blocks.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .. import dtype as _dt
from .. import op
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

    def __tir_expr__(self) -> Var:
        """In an expression an axis is its variable, as a TVM IterVar is (``where=k <= i``)."""
        return self.var


def _forward_to_var(operator: str) -> Callable:
    def forwarded(self: Axis, *others):
        return getattr(self.var, operator)(*others)

    forwarded.__name__ = operator
    return forwarded


for _operator in (
    *("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__neg__"),
    *("__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__lt__", "__le__", "__gt__", "__ge__"),
):
    setattr(Axis, _operator, _forward_to_var(_operator))


@dataclass(frozen=True, eq=False)
class Reduction:
    """``te.sum(source, axis=k, where=cond)``: the body of a reducing ComputeOp (its whole body, as
    in TVM); the elements where ``condition`` is false do not take part."""

    combiner: str  # "sum", "max" or "min"
    source: PrimExpr
    axes: tuple[Axis, ...]
    condition: PrimExpr | None = None

    @property
    def dtype(self) -> str:
        return self.source.dtype

    def identity(self) -> PrimExpr:
        """The value the reduction starts from: 0, the lowest or the largest value of the dtype."""
        if self.combiner == "sum":
            return const(0, self.dtype)
        return op.limit_value(self.dtype, largest=self.combiner == "min")

    def combine(self, accumulated: PrimExpr) -> PrimExpr:
        """The update ``accumulated op source``; under ``where``, ``source`` is the identity where the
        condition is false (``T.if_then_else``, so the source is not read there)."""
        source = self.source
        if self.condition is not None:
            source = op.call("if_then_else", self.condition, source, self.identity())
        if self.combiner == "sum":
            return op.add(accumulated, source)
        combine = op.max_value if self.combiner == "max" else op.min_value
        return combine(accumulated, source)


class Tensor:
    """A placeholder or a computed tensor (output ``value_index`` of its op); ``A[i, j]`` reads one
    element."""

    def __init__(self, buffer: Buffer, op_: ComputeOp | None, value_index: int = 0):
        self.buffer = buffer
        self.op = op_
        self.value_index = value_index

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
    """What ``te.compute`` records: the output axes and one body per output over their variables.
    ``outputs`` are its tensors, in body order (filled in by ``compute``)."""

    name: str
    axes: tuple[Axis, ...]
    bodies: tuple[PrimExpr | Reduction, ...]
    attrs: dict
    inputs: tuple[Tensor, ...]  # the tensors the bodies read, in order of first read
    outputs: list[Tensor] = field(default_factory=list)

    @property
    def body(self) -> PrimExpr | Reduction:
        """The first output's body (the only one of most computes)."""
        return self.bodies[0]

    @property
    def reduce_axes(self) -> tuple[Axis, ...]:
        return self.body.axes if isinstance(self.body, Reduction) else ()


# Each live tensor's buffer -> the tensor, so the loads of a body being built lead back to the
# tensors they read; a ComputeOp then holds those tensors itself.
_TENSORS: weakref.WeakValueDictionary[Buffer, Tensor] = weakref.WeakValueDictionary()


def _read_tensors(bodies: Sequence[PrimExpr | Reduction]) -> tuple[Tensor, ...]:
    found: dict[Buffer, None] = {}
    for body in bodies:
        parts = (body.source, body.condition) if isinstance(body, Reduction) else (body,)
        for part in (part for part in parts if part is not None):
            post_order_visit(part, lambda n: isinstance(n, BufferLoad) and found.setdefault(n.buffer))
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


def _tensor(name: str, shape, dtype: str, op_: ComputeOp | None, value_index: int = 0) -> Tensor:
    tensor = Tensor(Buffer(name, _shape_of(shape), dtype), op_, value_index)
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
            where = const(where)
            if not isinstance(where, PrimExpr) or where.dtype != "bool":
                raise TypeError(f"te.{combiner}(..., where=) takes a bool expression, not {where!r}")
        return Reduction(combiner, const(expr), axes, where)

    reduce.__name__ = combiner
    reduce.__doc__ = (
        f"``te.{combiner}(expr, axis=k, where=None)``: the {combiner} of expr over the reduction axes "
        "(only where the condition holds, if one is given)."
    )
    return reduce


sum = _reduction("sum")  # noqa: A001 - TVM's name
max = _reduction("max")  # noqa: A001 - TVM's name
min = _reduction("min")  # noqa: A001 - TVM's name


def compute(
    shape, fcompute: Callable, name: str = "compute", tag: str = "", attrs: dict | None = None
) -> Tensor | tuple[Tensor, ...]:
    """``C = te.compute((n, m), lambda i, j: A[i, j] * 2, name="C")``: a tensor each of whose
    elements is ``fcompute`` of its indices; the axes are named after the lambda's parameters.
    The body is an expression, or one ``te.sum``/``max``/``min`` at its top (as TVM requires).
    A tuple of expressions gives a tuple of tensors computed in one loop nest, as in TVM:
    ``B0, B1 = te.compute((n,), lambda i: (A[i] + 1, A[i] * 2), name="B")`` (named ``B.v0``, ``B.v1``)."""
    dims = _shape_of(shape)
    names = _axis_names(fcompute, len(dims))
    axes = tuple(Axis(Var(n, d.dtype), Range(const(0, d.dtype), d)) for n, d in zip(names, dims))
    result = fcompute(*[axis.var for axis in axes])
    several = isinstance(result, (list, tuple))
    bodies = tuple(_body(body, name) for body in (result if several else (result,)))
    if not bodies:
        raise TypeError(f"te.compute {name}: the function returned no expression")
    if len(bodies) > 1 and any(isinstance(body, Reduction) for body in bodies):
        raise NotImplementedError(
            f"te.compute {name}: several outputs that are reductions need te.comm_reducer (tuple "
            "reducers such as argmax), which is not supported; compute each reduction in its own te.compute"
        )
    compute_op = ComputeOp(name, axes, bodies, dict(attrs or {}), _read_tensors(bodies))
    for index, body in enumerate(bodies):
        output_name = f"{name}.v{index}" if several else name
        compute_op.outputs.append(_tensor(output_name, dims, body.dtype, compute_op, index))
    return tuple(compute_op.outputs) if several else compute_op.outputs[0]


def _body(body, name: str) -> PrimExpr | Reduction:
    if isinstance(body, Reduction):
        return body
    expr = const(body)
    if not isinstance(expr, PrimExpr):
        raise TypeError(f"te.compute {name}: the function returned {body!r}, not an expression")
    return expr


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
