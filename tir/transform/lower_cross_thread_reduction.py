"""lower_cross_thread_reduction: a reduction loop bound to threadIdx becomes an all-reduce (TVM's pass).

First pass of the GPU pipelines, on block-form IR. A reduction block with a
reduction loop bound to ``threadIdx.x/y/z`` (``sch.bind(k, "threadIdx.x")``,
directly or after ``rfactor``) means: the threads of that axis each reduce part
of the range and then combine their parts. The block becomes, inside the
thread-bound reduction loops (moved outermost of its reduction loops)::

    C_in_thread_init    in_thread_C[0] = identity           (0, 1, the lowest or highest value)
    C_in_thread         the serial reduction loops, accumulating into in_thread_C[0]
    C_cross_thread      cross_thread_C[0] = T.tir_thread_allreduce(in_thread_C[0], "sum", threadIdx_x)
    C_write_back        C[i] = init combined with cross_thread_C[0]

``tir.thread_allreduce`` leaves every thread of the reduction holding the result;
lower_thread_allreduce (after flattening, with the target's warp size) expands it
into warp shuffles and shared memory. Every thread writes the result back, not
only thread 0 as in TVM: all hold the same value, and a consumer in the same
kernel (softmax's exp reading the row max) then reads its own write, needing no
barrier whatever the buffer's scope. The in-thread and cross-thread buffers are
``local`` buffers of the enclosing block; plan_buffer_allocation places them.

Requirements (TVM's, each a clear ValueError naming the block): the block has an
init and a body that are single stores to one element, the update is a sum,
product, max or min (tir/analysis/reducer.py) and the init a constant; the
reduction-related loops are the innermost loops around the block and are bound
only to threadIdx axes; the block is the last one under them; no loop carries
both a spatial and a reduction iterator.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..analysis.reducer import REDUCER_NAMES, combine, identity_of, match_reducer
from ..buffer import Buffer, BufferRegion
from ..expr import And, BufferLoad, Call, FloatImm, IntImm, IterKind, IterVar, PrimExpr, Range, StringImm, Var
from ..function import PrimFunc
from ..functor import Mutator, collect_vars, substitute, uses_var
from ..stmt import Block, BlockRealize, BufferStore, For, ForKind, SeqStmt, Stmt, seq
from ..structural import structural_equal

ALLREDUCE = "tir.thread_allreduce"


@dataclass
class _Plan:
    """How one cross-thread reduction block is rewritten: the statement replacing ``loops[0]``."""

    realize: BlockRealize
    loops: list[For]  # the reduction-related loops, outermost first
    scope: Block  # the block whose alloc_buffers receive the scratch buffers
    buffers: list[Buffer] = field(default_factory=list)


def _is_thread_idx(loop: For) -> bool:
    return loop.kind is ForKind.THREAD_BINDING and (loop.thread_tag or "").startswith("threadIdx.")


def _fail(block: Block, reason: str) -> None:
    raise ValueError(
        f"block {block.name!r} reduces across threads (a reduction loop is bound to a thread axis), "
        f"but {reason}"
    )


def _plans(body: Stmt, root: Block) -> dict[For, _Plan]:
    plans: dict[For, _Plan] = {}

    def walk(stmt: Stmt, loops: list[For], path: list[Stmt], scope: Block) -> None:
        if isinstance(stmt, For):
            walk(stmt.body, [*loops, stmt], [*path, stmt], scope)
        elif isinstance(stmt, BlockRealize):
            plan = _plan_for(stmt, loops, path, scope)
            if plan is not None:
                if plan.loops[0] in plans:
                    _fail(stmt.block, "another cross-thread reduction shares its reduction loops")
                plans[plan.loops[0]] = plan
            walk(stmt.block.body, [], [], stmt.block)
        elif isinstance(stmt, SeqStmt):
            for child in stmt.seq:
                walk(child, loops, [*path, stmt], scope)
        else:
            for name in ("body", "then_case", "else_case"):
                child = getattr(stmt, name, None)
                if isinstance(child, Stmt):
                    walk(child, loops, [*path, stmt], scope)

    walk(body, [], [], root)
    return plans


def _plan_for(realize: BlockRealize, loops: list[For], path: list[Stmt], scope: Block) -> _Plan | None:
    block = realize.block
    reduce_vars: set[Var] = set()
    spatial_vars: set[Var] = set()
    for iv, value in zip(block.iter_vars, realize.iter_values):
        (spatial_vars if iv.kind is IterKind.SPATIAL else reduce_vars).update(collect_vars(value))
    related = [loop for loop in loops if loop.loop_var in reduce_vars]
    bound = [loop for loop in related if loop.kind is ForKind.THREAD_BINDING]
    if not bound:
        return None
    for loop in bound:
        if not _is_thread_idx(loop):
            _fail(
                block, f"loop {loop.loop_var.name} is bound to {loop.thread_tag}; only threadIdx.x/y/z can be"
            )
    _check_block(block, related, spatial_vars)
    tail = path[path.index(related[0]) :]
    if any(not (isinstance(s, SeqStmt) or s in related) for s in tail):
        _fail(
            block,
            "its reduction loops are not the innermost loops around it; reorder so that every loop "
            "between the first reduction loop and the block is a reduction loop",
        )
    last = _top_level_realizes(related[0])[-1]
    if last is not realize:
        _fail(block, f"block {last.block.name!r} follows it under its reduction loops; it must be the last")
    return _Plan(realize, related, scope)


def _check_block(block: Block, related: list[For], spatial_vars: set[Var]) -> None:
    update, init = block.body, block.init
    if not isinstance(update, BufferStore) or not isinstance(init, BufferStore):
        _fail(block, "it has no T.init() or its init or body is not a single store (decompose_reduction?)")
    kind, _ = match_reducer(update)
    same = init.buffer is update.buffer and all(
        structural_equal(a, b) for a, b in zip(init.indices, update.indices)
    )
    if kind is None or not same:
        _fail(block, "its update is not a sum, product, max or min of the element its init writes")
    if not isinstance(init.value, (IntImm, FloatImm)):
        _fail(block, f"its init value {init.value!r} is not a constant")
    for loop in related:
        if loop.loop_var in spatial_vars:
            _fail(block, f"loop {loop.loop_var.name} carries both a spatial and a reduction iterator")


def _top_level_realizes(stmt: Stmt) -> list[BlockRealize]:
    found: list[BlockRealize] = []

    def walk(node: Stmt) -> None:
        if isinstance(node, BlockRealize):
            found.append(node)
        elif isinstance(node, SeqStmt):
            for child in node.seq:
                walk(child)
        else:
            for name in ("body", "then_case", "else_case"):
                child = getattr(node, name, None)
                if isinstance(child, Stmt):
                    walk(child)

    walk(stmt)
    return found


def _rewrite(plan: _Plan) -> Stmt:
    realize, block = plan.realize, plan.realize.block
    update = block.body
    kind, rhs = match_reducer(update)
    dtype = update.buffer.dtype
    zero = IntImm(0, "int32")
    in_thread = Buffer(f"in_thread_{update.buffer.name}", (IntImm(1, "int32"),), dtype, "local")
    cross = Buffer(f"cross_thread_{update.buffer.name}", (IntImm(1, "int32"),), dtype, "local")
    plan.buffers += [in_thread, cross]
    in_region, cross_region = _unit_region(in_thread), _unit_region(cross)
    in_load = BufferLoad(in_thread, (zero,))
    reads = tuple(r for r in block.reads if r.buffer is not update.buffer)
    in_block = replace(
        block,
        name=f"{block.name}_in_thread",
        init=None,
        body=BufferStore(in_thread, combine(kind, in_load, rhs), (zero,)),
        reads=(*reads, in_region),
        writes=(in_region,),
        alloc_buffers=(),
    )
    bound = [loop for loop in plan.loops if loop.kind is ForKind.THREAD_BINDING]
    stripped = _InThreadMaker(realize, replace(realize, block=in_block), set(bound)).visit(plan.loops[0])
    allreduce = Call(
        dtype, ALLREDUCE, (in_load, StringImm(REDUCER_NAMES[kind]), *(lp.loop_var for lp in bound))
    )
    body = seq(
        _simple_block(
            f"{block.name}_in_thread_init",
            (),
            in_region,
            BufferStore(in_thread, identity_of(kind, dtype), (zero,)),
        ),
        stripped,
        _simple_block(
            f"{block.name}_cross_thread", (in_region,), cross_region, BufferStore(cross, allreduce, (zero,))
        ),
        _write_back(plan, kind, cross, cross_region),
    )
    for loop in reversed(bound):
        body = replace(loop, body=body)
    return body


def _unit_region(buffer: Buffer) -> BufferRegion:
    return BufferRegion(buffer, (Range(IntImm(0, "int32"), IntImm(1, "int32")),))


def _simple_block(name: str, reads, write: BufferRegion, body: Stmt) -> BlockRealize:
    return BlockRealize((), IntImm(1, "bool"), Block(name, (), tuple(reads), (write,), body))


def _write_back(plan: _Plan, kind: type, cross: Buffer, cross_region: BufferRegion) -> BlockRealize:
    realize, block = plan.realize, plan.realize.block
    update, init = block.body, block.init
    iter_vars, values, var_map = [], [], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.kind is IterKind.SPATIAL:
            new_var = Var(iv.var.name, iv.var.dtype)
            var_map[iv.var] = new_var
            iter_vars.append(IterVar(new_var, iv.dom, IterKind.SPATIAL))
            values.append(value)
    indices = tuple(substitute(i, var_map) for i in update.indices)
    result = BufferLoad(cross, (IntImm(0, "int32"),))
    if not structural_equal(init.value, identity_of(kind, init.value.dtype)):
        result = combine(kind, init.value, result)
    loop_vars = {loop.loop_var for loop in plan.loops}
    clauses = [c for c in _clauses(realize.predicate) if not uses_var(c, lambda v: v in loop_vars)]
    predicate = IntImm(1, "bool")
    for clause in clauses:
        predicate = clause if _is_true(predicate) else And(predicate, clause)
    region = BufferRegion(update.buffer, tuple(Range(i, IntImm(1, i.dtype)) for i in indices))
    wb_block = Block(
        f"{block.name}_write_back",
        tuple(iter_vars),
        (cross_region,),
        (region,),
        BufferStore(update.buffer, result, indices),
    )
    return BlockRealize(tuple(values), predicate, wb_block)


def _clauses(predicate: PrimExpr) -> list[PrimExpr]:
    if isinstance(predicate, And):
        return _clauses(predicate.a) + _clauses(predicate.b)
    return [] if _is_true(predicate) else [predicate]


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and bool(expr.value)


class _InThreadMaker(Mutator):
    """The reduction loops with the thread-bound ones removed and the block accumulating in-thread."""

    def __init__(self, source: BlockRealize, target: BlockRealize, bound: set[For]):
        self.source, self.target, self.bound = source, target, bound

    def visit_BlockRealize(self, realize: BlockRealize) -> Stmt:
        return self.target if realize is self.source else realize

    def visit_For(self, loop: For) -> Stmt:
        new = self.generic_visit(loop)
        return new.body if loop in self.bound else new


class _Lowerer(Mutator):
    def __init__(self, plans: dict[For, _Plan]):
        self.plans = plans

    def visit_For(self, loop: For) -> Stmt:
        plan = self.plans.get(loop)
        return _rewrite(plan) if plan is not None else self.generic_visit(loop)

    def visit_Block(self, block: Block) -> Stmt:
        new = self.generic_visit(block)
        extra = [b for plan in self.plans.values() if plan.scope is block for b in plan.buffers]
        return replace(new, alloc_buffers=(*new.alloc_buffers, *extra)) if extra else new


def lower_cross_thread_reduction(func: PrimFunc) -> PrimFunc:
    """Rewrite every reduction bound to threadIdx into in-thread, cross-thread and write-back blocks."""
    body = func.body
    if not isinstance(body, BlockRealize):
        return func
    plans = _plans(body.block.body, body.block)
    if not plans:
        return func
    return func.with_body(_Lowerer(plans).visit(body))
