"""bind_default_threads: launch loop nests that the schedule left unbound on a GPU target.

First pass of the GPU pipelines (TVM's DefaultGPUSchedule). A top-level loop nest with no
thread-bound loop cannot run as a GPU kernel as written (one whose loops run zero times is
removed: it launches nothing). Instead of failing with
"did you forget to bind?", this pass binds it the obvious way: the leading
perfectly nested loops that are data parallel (every block under them uses
their variables only in spatial iterator bindings) are fused into one index,
split into ``blockIdx.x`` x ``threadIdx.x`` with a ``T.where`` guard on every
block when the product is not a multiple of the thread count. A loop of
symbolic extent (a dynamic shape's ``n``) is fused the same way: ``max_threads``
threads per block, ``(n + 255) // 256`` blocks (read at call time) and the
guard always. A nest with no such loop (a reduction at the top) runs on a single thread. Nests with any
thread binding are the user's schedule and stay as they are.

Before (unscheduled elementwise, 1000 elements, 256 threads)::

    for i in range(1000):
        with T.block("B"): vi = T.axis.spatial(1000, i); ...

After::

    for i_fused_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_fused_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(1000, i_fused_0 * 256 + i_fused_1)
                T.where(i_fused_0 * 256 + i_fused_1 < 1000)
"""

from __future__ import annotations

from dataclasses import replace

from .. import op as _op
from ..expr import IntImm, IterKind, PrimExpr, Var
from ..function import PrimFunc
from ..functor import Mutator, post_order_visit, substitute
from ..stmt import Block, BlockRealize, Evaluate, For, ForKind, SeqStmt, Stmt


def bind_default_threads(func: PrimFunc, max_threads: int = 256) -> PrimFunc:
    """Bind every top-level loop nest that has no thread binding (see the module docstring)."""
    root = func.body
    if not (isinstance(root, BlockRealize) and not root.block.iter_vars):
        return func
    body = root.block.body
    nests = body.seq if isinstance(body, SeqStmt) else (body,)
    bound = tuple(_bind_nest(nest, max_threads) for nest in nests)
    if all(new is old for new, old in zip(bound, nests)):
        return func
    new_body = SeqStmt(bound) if isinstance(body, SeqStmt) else bound[0]
    return func.with_body(replace(root, block=replace(root.block, body=new_body)))


def _bind_nest(nest: Stmt, max_threads: int) -> Stmt:
    if _has_thread_binding(nest) or not _contains_block(nest):
        return nest
    loops = _parallel_prefix(nest)
    if not loops:
        return _thread_loops(nest, Var("blockIdx_x"), 1, Var("threadIdx_x"), 1)
    total: PrimExpr = IntImm(1)
    for loop in loops:
        total = total * loop.extent
    if isinstance(total, IntImm) and total.value <= 0:  # a nest that runs nothing launches nothing
        return Evaluate(IntImm(0))
    threads = min(max_threads, total.value) if isinstance(total, IntImm) else max_threads
    groups = _op.floordiv(total + (threads - 1), threads)
    name = "_".join(loop.loop_var.name for loop in loops) + ("_fused" if len(loops) > 1 else "")
    block_var, thread_var = Var(f"{name}_0"), Var(f"{name}_1")
    fused = block_var * threads + thread_var
    bindings: dict[Var, PrimExpr] = {}
    remaining = fused
    for loop in reversed(loops):
        bindings[loop.loop_var] = remaining if loop is loops[0] else _op.floormod(remaining, loop.extent)
        remaining = _op.floordiv(remaining, loop.extent)
    inner = substitute(loops[-1].body, bindings)
    if not (isinstance(total, IntImm) and total.value % threads == 0):
        inner = _Guard(fused < total).visit(inner)
    return _thread_loops(inner, block_var, groups, thread_var, threads)


def _thread_loops(body: Stmt, block_var: Var, groups: PrimExpr | int, thread_var: Var, threads: int) -> For:
    def thread_loop(var: Var, extent: PrimExpr | int, tag: str, inner: Stmt) -> For:
        extent = IntImm(extent) if isinstance(extent, int) else extent
        return For(var, IntImm(0), extent, ForKind.THREAD_BINDING, inner, tag)

    return thread_loop(block_var, groups, "blockIdx.x", thread_loop(thread_var, threads, "threadIdx.x", body))


def _parallel_prefix(nest: Stmt) -> list[For]:
    """The leading perfectly nested serial loops starting at 0 that only feed spatial iterators."""
    loops: list[For] = []
    stmt = nest
    while (
        isinstance(stmt, For)
        and stmt.kind in (ForKind.SERIAL, ForKind.PARALLEL)
        and isinstance(stmt.min, IntImm)
        and stmt.min.value == 0
        and _only_spatial_uses(stmt)
    ):
        loops.append(stmt)
        stmt = stmt.body
    return loops


def _only_spatial_uses(loop: For) -> bool:
    ok = True

    def visit(node) -> None:
        nonlocal ok
        if isinstance(node, BlockRealize):
            for iter_var, value in zip(node.block.iter_vars, node.iter_values):
                if iter_var.kind is not IterKind.SPATIAL and _uses(value, loop.loop_var):
                    ok = False

    post_order_visit(loop.body, visit)
    return ok


def _uses(expr: PrimExpr, var: Var) -> bool:
    found = False

    def visit(node) -> None:
        nonlocal found
        found = found or node is var

    post_order_visit(expr, visit)
    return found


def _has_thread_binding(stmt: Stmt) -> bool:
    found = False

    def visit(node) -> None:
        nonlocal found
        found = found or (isinstance(node, For) and node.kind is ForKind.THREAD_BINDING)

    post_order_visit(stmt, visit)
    return found


def _contains_block(stmt: Stmt) -> bool:
    found = False

    def visit(node) -> None:
        nonlocal found
        found = found or isinstance(node, Block)

    post_order_visit(stmt, visit)
    return found


class _Guard(Mutator):
    """Add ``condition`` to the predicate of every outermost block realize."""

    def __init__(self, condition: PrimExpr):
        self.condition = condition

    def visit_BlockRealize(self, realize: BlockRealize) -> BlockRealize:
        predicate = realize.predicate
        is_true = isinstance(predicate, IntImm) and predicate.value == 1
        return replace(
            realize, predicate=self.condition if is_true else _op.logical_and(predicate, self.condition)
        )
