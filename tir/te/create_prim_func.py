"""``te.create_prim_func``: tensor expressions to a TensorIR PrimFunc, block for block as TVM makes it.

Every ComputeOp becomes one block named after the op inside a loop nest named after its axes
(spatial axes, then reduction axes), with iterators ``v_<axis>`` bound one to one
(``T.axis.remap``), its reads and writes inferred as the parser infers them, and for a
reduction a ``T.init()`` storing the reduction's identity. A reduction ``where=cond`` updates
with ``T.if_then_else(cond, source, identity)``, so the elements outside the condition add
nothing and are never read (TVM's TE lowering guards the update the same way; its
``create_prim_func`` today drops the condition). A compute of several outputs is one loop nest
holding one block per output, named after the output (``B.v0``, ``B.v1``), each with its own
iterators, as TVM makes it. Block names are made unique as TVM makes them (``main``,
``main_1``). The tensors in ``args`` are the parameters, in that order (scalar Vars may be
parameters too); every other computed tensor is a ``T.alloc_buffer`` of the root block; ops
appear in an order where producers come first. The function has ``{"tir.noalias": True}``,
as TVM's has.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.block_access import infer_access_regions
from ..expr import BufferLoad, IntImm, IterKind, IterVar, Var
from ..function import PrimFunc
from ..functor import substitute
from ..stmt import Block, BlockRealize, BufferStore, For, ForKind, LetStmt, Stmt, seq
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
    for compute_op in computed:
        for source in compute_op.inputs:
            if source.op is None and source.buffer not in params:
                raise ValueError(
                    f"placeholder {source.name} is read by {compute_op.name} but is not among the "
                    "arguments; pass it to create_prim_func"
                )
    outputs = [output for op in computed for output in op.outputs]
    allocations = tuple(t.buffer for t in outputs if t.buffer not in params)
    names = _BlockNames()
    body = seq(*[_loop_nest(op, names) for op in computed])
    root = Block("root", (), (), (), body, alloc_buffers=allocations)
    func_params = tuple(a.buffer if isinstance(a, Tensor) else a for a in args)
    return PrimFunc(func_params, BlockRealize((), IntImm(1, "bool"), root), {"tir.noalias": True}, name)


def _computed_in_order(tensors: list[Tensor]) -> list[ComputeOp]:
    """Every compute op the given tensors depend on, each after those it reads (depth-first)."""
    order: list[ComputeOp] = []
    seen: set[int] = set()

    def visit(compute_op: ComputeOp | None) -> None:
        if compute_op is None or id(compute_op) in seen:
            return
        seen.add(id(compute_op))
        for source in compute_op.inputs:
            visit(source.op)
        order.append(compute_op)

    for tensor in tensors:
        visit(tensor.op)
    return order


class _BlockNames:
    """Unique block names as TVM's name supply makes them: ``C``, then ``C_1``, ``C_2``."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, name: str) -> str:
        candidate, index = name, 0
        while candidate in self.used:
            index += 1
            candidate = f"{name}_{index}"
        self.used.add(candidate)
        return candidate


def _loop_nest(op: ComputeOp, names: _BlockNames) -> Stmt:
    axes = (*op.axes, *op.reduce_axes)
    loop_vars = [Var(axis.var.name, axis.var.dtype) for axis in axes]
    if isinstance(op.body, Reduction):  # one block updates every output of the reducer
        stmt: Stmt = _block(op, op.outputs, axes, loop_vars, names)
    else:
        stmt = seq(*[_block(op, [output], axes, loop_vars, names) for output in op.outputs])
    for var, axis in zip(reversed(loop_vars), reversed(axes)):
        stmt = For(var, axis.dom.min, axis.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _block(
    op: ComputeOp, outputs: list[Tensor], axes: tuple, loop_vars: list[Var], names: _BlockNames
) -> BlockRealize:
    """The block computing ``outputs`` of ``op`` at the loop variables ``loop_vars``."""
    block_vars = [Var(f"v_{axis.var.name}", axis.var.dtype) for axis in axes]
    to_block = {axis.var: var for axis, var in zip(axes, block_vars)}
    indices = tuple(block_vars[: len(op.axes)])
    if isinstance(op.body, Reduction):
        body, init = _reduction_body(op.body, outputs, indices, to_block)
        name = names.fresh(op.name)
    else:
        (output,) = outputs
        body, init = (
            BufferStore(output.buffer, substitute(op.bodies[output.value_index], to_block), indices),
            None,
        )
        name = names.fresh(output.name)
    iter_vars = tuple(
        IterVar(var, axis.dom, IterKind.REDUCE if axis.reduce else IterKind.SPATIAL)
        for var, axis in zip(block_vars, axes)
    )
    block = Block(name, iter_vars, (), (), body, init=init, annotations=dict(op.attrs))
    reads, writes = infer_access_regions(block)
    block = Block(name, iter_vars, reads, writes, body, init=init, annotations=dict(op.attrs))
    return BlockRealize(tuple(loop_vars), IntImm(1, "bool"), block)


def _reduction_body(
    reduction: Reduction, outputs: list[Tensor], indices: tuple, to_block: dict
) -> tuple[Stmt, Stmt]:
    """The update and the init of a reduction block. One output: ``C = C op x``. Several (argmax):
    each new value is bound to a ``v_<output>`` variable first and stored after, as TVM does, so
    every update reads the outputs' old values."""
    init = seq(
        *[
            BufferStore(output.buffer, substitute(identity, to_block), indices)
            for output, identity in zip(outputs, reduction.identities())
        ]
    )
    current = [BufferLoad(output.buffer, indices) for output in outputs]
    updates = [substitute(update, to_block) for update in reduction.updates(current)]
    if len(outputs) == 1:
        return BufferStore(outputs[0].buffer, updates[0], indices), init
    temps = [Var(f"v_{output.name}", output.dtype) for output in outputs]
    body: Stmt = seq(*[BufferStore(o.buffer, temp, indices) for o, temp in zip(outputs, temps)])
    for temp, update in reversed(list(zip(temps, updates))):
        body = LetStmt(temp, update, body)
    return body, init
