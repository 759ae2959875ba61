"""``te.create_prim_func``: tensor expressions to a TensorIR PrimFunc, block for block as TVM makes it.

Every ComputeOp becomes one block named after the op inside a loop nest named after its axes
(spatial axes, then reduction axes), with iterators ``v_<axis>`` bound one to one
(``T.axis.remap``), its reads and writes inferred as the parser infers them, and for a
reduction a ``T.init()`` storing the reduction's identity. The tensors in ``args`` are the
parameters, in that order (scalar Vars may be parameters too); every other computed tensor is
a ``T.alloc_buffer`` of the root block; ops appear in an order where producers come first.
The function has ``{"tir.noalias": True}``, as TVM's has.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.block_access import infer_access_regions
from ..expr import BufferLoad, IntImm, IterKind, IterVar, Var
from ..function import PrimFunc
from ..functor import substitute
from ..stmt import Block, BlockRealize, BufferStore, For, ForKind, Stmt, seq
from .tensor import ComputeOp, Reduction, Tensor


def create_prim_func(args: Sequence[Tensor | Var], name: str = "main") -> PrimFunc:
    """The PrimFunc computing the tensors of ``args`` from the placeholders among them.

    Example: ``A = te.placeholder((8, 4), name="A")``, ``k = te.reduce_axis((0, 4), name="k")``,
    ``B = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="B")``;
    ``te.create_prim_func([A, B])`` is the function below (as ``.script()`` prints it)::

        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
            T.func_attr({"tir.noalias": True})
            # with T.block("root"):
            for i, k in T.grid(8, 4):
                with T.block("B"):
                    v_i, v_k = T.axis.remap("SR", [i, k])
                    T.reads(A[v_i, v_k])
                    T.writes(B[v_i])
                    with T.init():
                        B[v_i] = T.float32(0.0)
                    B[v_i] = B[v_i] + A[v_i, v_k]
    """
    tensors = [a for a in args if isinstance(a, Tensor)]
    unknown = [a for a in args if not isinstance(a, (Tensor, Var))]
    if unknown:
        raise TypeError(f"create_prim_func takes tensors and scalar Vars, not {unknown[0]!r}")
    computed = _computed_in_order(tensors)
    params = {t.buffer for t in tensors}
    for tensor in computed:
        for source in tensor.op.inputs:
            if source.op is None and source.buffer not in params:
                raise ValueError(
                    f"placeholder {source.name} is read by {tensor.name} but is not among the arguments; "
                    "pass it to create_prim_func"
                )
    allocations = tuple(t.buffer for t in computed if t.buffer not in params)
    body = seq(*[_loop_nest(t.op, t) for t in computed])
    root = Block("root", (), (), (), body, alloc_buffers=allocations)
    func_params = tuple(a.buffer if isinstance(a, Tensor) else a for a in args)
    return PrimFunc(func_params, BlockRealize((), IntImm(1, "bool"), root), {"tir.noalias": True}, name)


def _computed_in_order(tensors: list[Tensor]) -> list[Tensor]:
    """Every computed tensor the given ones depend on, each after those it reads (depth-first)."""
    order: list[Tensor] = []
    seen: set[int] = set()

    def visit(tensor: Tensor) -> None:
        if tensor.op is None or id(tensor) in seen:
            return
        seen.add(id(tensor))
        for source in tensor.op.inputs:
            visit(source)
        order.append(tensor)

    for tensor in tensors:
        visit(tensor)
    return order


def _loop_nest(op: ComputeOp, output: Tensor) -> Stmt:
    axes = (*op.axes, *op.reduce_axes)
    block_vars = [Var(f"v_{axis.var.name}", axis.var.dtype) for axis in axes]
    loop_vars = [Var(axis.var.name, axis.var.dtype) for axis in axes]
    to_block = {axis.var: var for axis, var in zip(axes, block_vars)}
    indices = tuple(block_vars[: len(op.axes)])
    if isinstance(op.body, Reduction):
        target = BufferLoad(output.buffer, indices)
        init = BufferStore(output.buffer, op.body.identity(), indices)
        update = substitute(op.body.combine(target), to_block)
        body, init_stmt = BufferStore(output.buffer, update, indices), init
    else:
        body, init_stmt = BufferStore(output.buffer, substitute(op.body, to_block), indices), None
    iter_vars = tuple(
        IterVar(var, axis.dom, IterKind.REDUCE if axis.reduce else IterKind.SPATIAL)
        for var, axis in zip(block_vars, axes)
    )
    block = Block(op.name, iter_vars, (), (), body, init=init_stmt, annotations=dict(op.attrs))
    reads, writes = infer_access_regions(block)
    block = Block(op.name, iter_vars, reads, writes, body, init=init_stmt, annotations=dict(op.attrs))
    stmt: Stmt = BlockRealize(tuple(loop_vars), IntImm(1, "bool"), block)
    for var, axis in zip(reversed(loop_vars), reversed(axes)):
        stmt = For(var, axis.dom.min, axis.dom.extent, ForKind.SERIAL, stmt)
    return stmt
