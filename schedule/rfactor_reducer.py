"""The reducers rfactor knows: one commutative store, or an argmax/argmin over two buffers.

``Reducer`` describes a reduction block's update as rfactor needs it: the accumulator
buffers (in the order of the block's ``T.writes``), the element they update, their init
values, the value each iteration brings per buffer (``incoming``) and ``combine``, which
merges accumulated values with incoming ones. rfactor (schedule/reduction.py) builds both of
its blocks from it: the rfactor block combines partial results with the incoming values, the
write-back combines the output with the partial results.

The single store is ``C = C + x`` (``*``, ``T.max``, ``T.min``); the two-buffer form is TVM's
argmax/argmin as its printer writes it::

    with T.init():
        idx_out[i] = -1
        val_out[i] = T.min_value("float32")
    v_idx: T.int32 = T.Select(val_out[i] >= val[i, k], idx_out[i], idx[i, k])
    v_val: T.float32 = T.Select(val_out[i] >= val[i, k], val_out[i], val[i, k])
    idx_out[i] = v_idx
    val_out[i] = v_val

(``<=`` and ``T.max_value`` for argmin). On ties the combined partial results keep the
first partial result holding the extreme value, which may not hold the smallest index the
sequential loop keeps: TVM's reducer behaves the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tir import GE, LE, Buffer, BufferLoad, BufferStore, LetStmt, PrimExpr, Select, SeqStmt, Stmt, Var, op
from tir.functor import post_order_visit
from tir.stmt import seq
from tir.structural import structural_equal

from .errors import ScheduleError


class ReducerPatternError(ScheduleError):
    """rfactor: the update is not ``C = C + x``, ``C * x``, ``max(C, x)`` or ``min(C, x)``, nor an
    argmax/argmin over two buffers."""


@dataclass(frozen=True)
class Reducer:
    buffers: tuple[Buffer, ...]
    indices: tuple[PrimExpr, ...]
    inits: tuple[PrimExpr, ...]
    incoming: tuple[PrimExpr, ...]
    combine: Callable[[list[PrimExpr], list[PrimExpr]], list[PrimExpr]]

    def store(self, buffers, indices, values) -> Stmt:
        """``buffers[k][indices] = values[k]``; several values are bound to lets first (TVM's form),
        so every store sees the accumulators as they were before the update."""
        if len(buffers) == 1:
            return BufferStore(buffers[0], values[0], indices)
        lets = [Var(f"v_{b.name}", b.dtype) for b in buffers]
        body: Stmt = seq(*(BufferStore(b, v, indices) for b, v in zip(buffers, lets)))
        for var, value in reversed(list(zip(lets, values))):
            body = LetStmt(var, value, body)
        return body

    def init_stores(self, buffers, indices) -> Stmt:
        return seq(*(BufferStore(b, v, indices) for b, v in zip(buffers, self.inits)))


def single_store_reducer(kind: type, rhs: PrimExpr, update: BufferStore, init: BufferStore) -> Reducer:
    return Reducer(
        (update.buffer,), update.indices, (init.value,), (rhs,), lambda accs, ins: [kind(accs[0], ins[0])]
    )


def _refuse(block, why: str):
    raise ReducerPatternError(
        f"can't rfactor block {block.name}: {why}. rfactor knows C = C + x, C * x, T.max(C, x), "
        "T.min(C, x), and argmax/argmin over two buffers written through lets.",
        block,
    )


def _stores(stmt, block, what: str) -> list[BufferStore]:
    stores = list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]
    if not all(isinstance(s, BufferStore) for s in stores):
        _refuse(block, f"its {what} must be stores only")
    return stores


def _reads_any(expr: PrimExpr, buffers) -> bool:
    found = []
    post_order_visit(
        expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and n.buffer in buffers else None
    )
    return bool(found)


def _is_load_of(expr: PrimExpr, buffer: Buffer, indices) -> bool:
    return (
        isinstance(expr, BufferLoad)
        and expr.buffer is buffer
        and all(structural_equal(a, b) for a, b in zip(expr.indices, indices))
    )


def arg_reducer(block) -> Reducer:
    """The argmax/argmin reducer of ``block`` (see the module docstring), or ReducerPatternError."""
    body, lets = block.body, {}
    while isinstance(body, LetStmt):
        lets[body.var] = body.value
        body = body.body
    updates = _stores(body, block, "update after its lets")
    inits = _stores(block.init, block, "init")
    buffers = [s.buffer for s in updates]
    if len(updates) != 2 or len(lets) != 2 or len(inits) != 2:
        _refuse(block, "an argmax/argmin updates two buffers with two lets and initializes both")
    if len(set(buffers)) != 2 or {s.buffer for s in inits} != set(buffers):
        _refuse(block, "its init and update must store each of the two buffers once")
    indices = updates[0].indices
    if not all(
        all(structural_equal(a, b) for a, b in zip(s.indices, indices)) and len(s.indices) == len(indices)
        for s in (*updates, *inits)
    ) or not structural_equal(buffers[0].shape, buffers[1].shape):
        _refuse(block, "both buffers must have one shape and be stored at the same indices")
    values = {}
    for s in updates:
        if not (isinstance(s.value, Var) and s.value in lets) or s.value in values.values():
            _refuse(block, "each buffer must be stored from its own let variable")
        values[s.buffer] = lets[s.value]
    order = [w.buffer for w in block.writes if w.buffer in values]
    if len(order) != 2:
        order = buffers
    selects = [values[b] for b in order]
    if not all(isinstance(v, Select) for v in selects) or not structural_equal(
        selects[0].condition, selects[1].condition
    ):
        _refuse(block, "an argmax/argmin chooses both values with one T.Select condition")
    condition = selects[0].condition
    value_buffer = next(
        (b for b in order if type(condition) in (GE, LE) and _is_load_of(condition.a, b, indices)), None
    )
    if value_buffer is None:
        _refuse(block, "the condition must compare the value buffer (>= for argmax, <= for argmin)")
    index_buffer = order[1 - order.index(value_buffer)]
    incoming = {}
    for buffer, select in zip(order, selects):
        incoming[buffer] = select.false_value
        if not _is_load_of(select.true_value, buffer, indices) or _reads_any(select.false_value, set(order)):
            _refuse(block, "each T.Select must keep its own accumulator or take a value that reads neither")
    if not structural_equal(incoming[value_buffer], condition.b):
        _refuse(block, "the value compared must be the value taken")
    init_of = {s.buffer: s.value for s in inits}
    largest = type(condition) is LE  # argmin starts from the highest value
    expected = op.limit_value(value_buffer.dtype, largest=largest)
    if (
        not structural_equal(init_of[value_buffer], expected)
        or getattr(init_of[index_buffer], "value", None) != -1
    ):
        _refuse(block, f"an arg{'min' if largest else 'max'} starts from index -1 and value {expected!r}")
    compare = type(condition)
    position = order.index(value_buffer)

    def combine(accs: list[PrimExpr], ins: list[PrimExpr]) -> list[PrimExpr]:
        keep = compare(accs[position], ins[position])
        return [Select(keep, a, b) for a, b in zip(accs, ins)]

    return Reducer(
        tuple(order),
        tuple(indices),
        tuple(init_of[b] for b in order),
        tuple(incoming[b] for b in order),
        combine,
    )
