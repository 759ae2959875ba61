"""merge: run sibling loop nests of the same shape as one nest (TVM's merge).

``merge(i, j)`` on ``for i in range(8): C...`` and, later in the same sequence,
``for j in range(8): D...`` gives ``for i_m in range(8): C...; D...``: the nests'
loops from their tops down to the loops given become one nest, and the bodies
below follow each other in it. Every given loop must sit at the same depth, on a
chain of loops that each hold only the next one, starting at 0 with the same
extent level by level, plain serial loops. Merging reorders work: after it, D's
iteration ``i`` runs before C's iteration ``i + 1``. We refuse it when a nest
writes a buffer another merged nest (or a statement between them) reads or
writes, where TVM checks nothing; that keeps every merge exact.
"""

from __future__ import annotations

from tir import Block, For, ForKind, IntImm, SeqStmt, Var
from tir.functor import stmts_pre_order, substitute
from tir.stmt import seq

from .errors import ArgumentError, ScheduleError
from .instruction import LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class MergeShapeError(ScheduleError):
    """The nests are not siblings of the same depth, extents and plain serial loops from 0, or a loop
    on the way holds more than the next loop."""


class MergeDependenceError(ScheduleError):
    """A merged nest writes a buffer another merged nest, or a statement between them, touches."""


# ---------------------------------------------------------------- merge


def _chain(state: ScheduleState, loop: For, holder) -> list[For]:
    """The loops from ``holder``'s child down to ``loop``, outermost first."""
    chain = [loop]
    node = state.parent(loop)
    while node is not holder:
        if not isinstance(node, For):
            raise MergeShapeError(
                f"can't merge loop {loop.loop_var.name}: it is not in a loop nest under the others", loop
            )
        chain.append(node)
        node = state.parent(node)
    return chain[::-1]


def _touches(stmt) -> tuple[set, set]:
    """The buffers the blocks under ``stmt`` write, and those they read or write."""
    writes, touched = set(), set()
    for s in stmts_pre_order(stmt):
        if isinstance(s, Block):
            writes |= {r.buffer for r in s.writes}
            touched |= {r.buffer for r in (*s.reads, *s.writes)}
    return writes, touched


@primitive(varargs="loops")
def merge(state: ScheduleState, loops: list[For]) -> For:
    # Step 1. sibling nests of the same shape
    if len(loops) < 2:
        raise ArgumentError("merge needs at least two loops")
    holder = state.parent(loops[0])
    while holder is not None and not isinstance(holder, SeqStmt):
        holder = state.parent(holder)
    if holder is None:
        raise MergeShapeError(f"can't merge loop {loops[0].loop_var.name}: it has no sibling nests", loops[0])
    chains = [_chain(state, loop, holder) for loop in loops]
    tops = [chain[0] for chain in chains]
    positions = [next((n for n, s in enumerate(holder.seq) if s is top), None) for top in tops]
    if None in positions or len(set(positions)) != len(positions):
        raise MergeShapeError(
            "can't merge: the loops must sit in different nests of one sequence of statements", *loops
        )
    for chain in chains:
        for level, (loop, first) in enumerate(zip(chain, chains[0])):
            plain = loop.kind is ForKind.SERIAL and not loop.annotations and isinstance(loop.min, IntImm)
            same = isinstance(loop.extent, IntImm) and isinstance(first.extent, IntImm)
            if (
                len(chain) != len(chains[0])
                or not plain
                or loop.min.value != 0
                or not same
                or loop.extent.value != first.extent.value
            ):
                raise MergeShapeError(
                    f"can't merge loop {chain[-1].loop_var.name} with {chains[0][-1].loop_var.name}: their "
                    "nests must have the same depth and, level by level, plain serial loops from 0 of the "
                    f"same extent (level {level}: {loop.loop_var.name} from {loop.min}, extent "
                    f"{loop.extent}; {first.loop_var.name} from {first.min}, extent {first.extent})",
                    loop,
                    first,
                )
            if loop is not chain[-1] and loop.body is not chain[level + 1]:
                raise MergeShapeError(
                    f"can't merge: loop {loop.loop_var.name} holds more than loop "
                    f"{chain[level + 1].loop_var.name}",
                    loop,
                )

    # Step 2. no nest depends on another, nor on what runs between them
    order = sorted(range(len(loops)), key=lambda k: positions[k])
    first = positions[order[0]]
    for k in order[1:]:
        writes, touched = _touches(tops[k])
        for other in [*holder.seq[first : positions[k]]]:
            other_writes, other_touched = _touches(other)
            clash = (writes & other_touched) | (other_writes & touched)
            if clash:
                raise MergeDependenceError(
                    f"can't merge loop {chains[k][-1].loop_var.name}: its nest and an earlier statement both "
                    f"touch {sorted(b.name for b in clash)} and one writes it, so running them interleaved "
                    "would change what is read",
                    loops[k],
                )

    # Step 3. one nest over the first chain's extents, the bodies in program order
    merged = [Var(f"{loop.loop_var.name}_m", loop.loop_var.dtype) for loop in chains[order[0]]]
    bodies = []
    for k in order:
        mapping = {loop.loop_var: var for loop, var in zip(chains[k], merged)}
        bodies.append(substitute(chains[k][-1].body, mapping))
    stmt = seq(*bodies)
    for loop, var in reversed(list(zip(chains[order[0]], merged))):
        stmt = For(var, loop.min, loop.extent, ForKind.SERIAL, stmt)
    state.replace({tops[order[0]]: stmt, **{tops[k]: None for k in order[1:]}})
    return state.index.loops[merged[-1]]


# ---------------------------------------------------------------- public methods


class MergeMethods:
    def merge(self, *loops: LoopRV) -> LoopRV:
        """Run the loop nests holding ``loops`` as one nest; return the merged loop at their level.

        ``merge`` in TVM (loop fusion of sibling nests, "compute_with" in Halide). The
        nests' loops from the top down to the given ones become one nest named after the
        first's (``i_m``); the bodies follow each other inside, in program order.

        Requirements: the loops are in different nests of one sequence, at the same depth
        below it; level by level, the loops are plain serial loops from 0 of the same
        extent, each holding only the next; no nest writes a buffer another merged nest or
        a statement between them touches.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TWO_NESTS))
        >>> i_m = sch.merge(sch.get_loops(sch.get_block("C"))[0], sch.get_loops(sch.get_block("D"))[0])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
            # with T.block("root"):
            for i_m in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i_m)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] + T.float32(1.0)
                with T.block("D"):
                    vj = T.axis.spatial(8, i_m)
                    T.reads(A[vj])
                    T.writes(D[vj])
                    D[vj] = A[vj] * T.float32(2.0)
        """
        return self._run("merge", loops=list(loops))


# The program the example above schedules (doctest globals: tir, Schedule).
_TWO_NESTS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + T.float32(1)
    for j in range(8):
        with T.block("D"):
            vj = T.axis.spatial(8, j)
            D[vj] = A[vj] * T.float32(2)
"""
