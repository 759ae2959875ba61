"""Tensor expressions: the objects ``te.placeholder`` and ``te.compute`` make.

A ``Tensor`` is a named, shaped, typed value: a placeholder (an input) or one output of a
``ComputeOp``, whose bodies are ``PrimExpr``s over the op's axis variables (one per output
dimension) or ``Reduction``s (tir/te/reduction.py: ``te.sum``/``max``/``min`` or a
``te.comm_reducer`` of an expression over reduction axes, optionally only ``where`` a
condition holds). A compute of several expressions (``lambda i: (A[i] + 1, A[i] * 2)``) or of
a reducer of several values (argmax) has one output per value, named ``<name>.v0``,
``<name>.v1`` as in TVM. Indexing a tensor (``A[i, k]``) gives a ``BufferLoad`` of the tensor's buffer, so
bodies are ordinary IR expressions; tir/te/create_prim_func.py turns the ops into blocks.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .. import dtype as _dt
from ..buffer import Buffer
from ..expr import BufferLoad, PrimExpr, Range, Var, const
from ..functor import post_order_visit
from .axis import Axis
from .reduction import Reduction


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
        parts = (*body.sources, body.condition) if isinstance(body, Reduction) else (body,)
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
    if several and len(result) == 1:
        result, several = result[0], False
    bodies = tuple(_body(body, name) for body in (result if several else (result,)))
    if not bodies:
        raise TypeError(f"te.compute {name}: the function returned no expression")
    _check_reductions(bodies, name)
    compute_op = ComputeOp(name, axes, bodies, dict(attrs or {}), _read_tensors(bodies))
    for index, body in enumerate(bodies):
        output_name = f"{name}.v{index}" if several else name
        compute_op.outputs.append(_tensor(output_name, dims, body.dtype, compute_op, index))
    return tuple(compute_op.outputs) if several else compute_op.outputs[0]


def _check_reductions(bodies: tuple[PrimExpr | Reduction, ...], name: str) -> None:
    """A reduction is the whole body, as in TVM: one reducer call, or the outputs of one call of a
    reducer of several values (``argmax((idx[i, k], val[i, k]), axis=k)``)."""
    reductions = [body for body in bodies if isinstance(body, Reduction)]
    if not reductions or len(bodies) == 1:
        return
    first = reductions[0]
    if len(reductions) != len(bodies) or not all(r.same_call(first) for r in reductions):
        raise TypeError(
            f"te.compute {name}: several outputs that reduce must be the outputs of one reducer call "
            "(a te.comm_reducer of several values, such as argmax), not separate reductions or a mix "
            "with plain expressions; compute each in its own te.compute"
        )
    if [r.value_index for r in reductions] != list(range(len(reductions))):
        raise TypeError(f"te.compute {name}: return the reducer's outputs in their order, all of them")


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
