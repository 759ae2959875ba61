"""loop_partition: cut a loop's range into consecutive loops, each with its own copy of the body
(TVM's loop_partition).

``loop_partition(i, [2, 1, 64])`` on ``for i in range(128)`` gives ``for i0 in
range(0, 2)``, ``for i1 in range(2, 3)``, ``for i2 in range(3, 67)`` and, for the
rest, ``for i3 in range(67, 128)``; one factor may be None, inferred so that the
parts add up to the extent. Each part is a copy of the body with fresh loop and
iterator variables; its blocks are renamed ``<block>_<loop><k>`` (block names are
unique), and an iterator bound to the loop itself gets the part's range as its
domain. As in TVM, each part sits in an opaque block ``<block>_<loop><k>_partition``
and the parts in one ``<block>_<loop>_common`` (``<block>``: the first block under
the loop), and each copied block's regions are what its iterators cover over their
(now narrower) domains, ``A[0:2, 0:128]`` for the part ``range(0, 2)``. Unlike TVM,
the opaque blocks list the regions their parts touch (TVM's are empty, which hides
the parts from the dependence analysis). Peeling a
boundary part this way is what lets its copy specialize (an unpredicated main part
and a short tail).
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, BlockRealize, For, IntImm, Mutator, Range, Var, const
from tir.analysis.block_access import infer_access_regions, region_of
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import stmts_pre_order
from tir.stmt import seq

from .analysis import check_constant_extent, check_factor_list, check_serial, plain_factor
from .errors import ArgumentError, ScheduleError
from .instruction import ExprRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class PartitionFactorError(ScheduleError):
    """The partition sizes add up past the loop's extent (or to it, leaving nothing for None)."""


# ---------------------------------------------------------------- loop_partition


def _sizes(loop: For, factors, extent: int) -> list[int]:
    """The parts' sizes: split's factor check, then sizes that add up to at most the extent, the
    None one (if any) taking what the others leave and a last part the rest when there is none."""
    factors = check_factor_list(loop, factors, "loop_partition")
    known = sum(f for f in factors if f is not None)
    rest = extent - known
    if rest < 0 or (rest == 0 and None in factors):
        raise PartitionFactorError(
            f"can't partition loop {loop.loop_var.name} of extent {extent} by {factors}: the parts add up "
            f"to {known}{' and leave nothing for None' if rest == 0 else ''}; they must fit in the extent",
            loop,
        )
    sizes = [rest if f is None else f for f in factors]
    return sizes + ([rest] if rest > 0 and None not in factors else [])


class _PartCopy(Mutator):
    """A copy of a loop body with fresh loop and iterator variables and renamed blocks."""

    def __init__(self, vmap: dict[Var, object], suffix: str, taken: set[str], part_var: Var, part: Range):
        self.vmap = vmap
        self.suffix = suffix
        self.taken = taken
        self.part_var = part_var
        self.part = part

    def visit_Var(self, var: Var):
        return self.vmap.get(var, var)

    def visit_For(self, loop: For):
        self.vmap[loop.loop_var] = Var(loop.loop_var.name, loop.loop_var.dtype)
        return self.generic_visit(loop)

    def visit_Block(self, block: Block):
        for iv in block.iter_vars:
            self.vmap[iv.var] = Var(iv.var.name, iv.var.dtype)
        new = self.generic_visit(block)
        return replace(new, name=_unique(f"{block.name}_{self.suffix}", self.taken))

    def visit_BlockRealize(self, realize: BlockRealize):
        new = self.generic_visit(realize)
        iter_vars = tuple(
            replace(iv, dom=self.part) if value is self.part_var else iv
            for iv, value in zip(new.block.iter_vars, new.iter_values)
        )
        return replace(new, block=_covered_regions(replace(new.block, iter_vars=iter_vars)))


def _unique(name: str, taken: set[str]) -> str:
    found, n = name, 0
    while found in taken:
        n += 1
        found = f"{name}_{n}"
    taken.add(found)
    return found


def _covered_regions(block: Block) -> Block:
    """The block with its regions inferred from its body, each relaxed over its iterators' domains
    (a declared region of a buffer the body only reaches opaquely, ``B.data``, is kept)."""
    reads, writes = infer_access_regions(block)
    reads, writes = (
        (*found, *(r for r in declared if all(f.buffer is not r.buffer for f in found)))
        for found, declared in ((reads, block.reads), (writes, block.writes))
    )
    if block.iter_vars:
        dom = {iv.var: iv.dom for iv in block.iter_vars}
        analyzer = Analyzer()
        reads, writes = ([_relaxed(r, dom, analyzer) for r in regions] for regions in (reads, writes))
    return replace(block, reads=tuple(reads), writes=tuple(writes))


def _relaxed(region: BufferRegion, dom: dict, analyzer: Analyzer) -> BufferRegion:
    ranges = []
    for r in region.region:
        low = region_of([r.min], dom, analyzer)[0].min
        high = region_of([r.min + r.extent], dom, analyzer)[0]
        ranges.append(Range(low, analyzer.simplify(high.min + high.extent - 1 - low)))
    return BufferRegion(region.buffer, tuple(ranges))


def _opaque(name: str, body) -> BlockRealize:
    """An opaque block around ``body`` with the regions its body touches. TVM leaves them empty,
    which hides the parts' accesses from the dependence analysis: a later cache_read of their
    output then copies it before the parts write it (wrong numbers)."""
    block = Block(name, (), (), (), body)
    reads, writes = infer_access_regions(block)
    return BlockRealize((), IntImm(1, "bool"), replace(block, reads=reads, writes=writes))


@primitive()
def loop_partition(
    state: ScheduleState, loop: For, factors: list, preserve_unit_iters: bool = True
) -> list[For]:
    # Step 1. a serial loop from 0 with a constant extent, and sizes that fit it
    fix = "Partition the loop before binding, parallelizing or vectorizing it"
    check_serial(loop, "loop_partition", fix)
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        raise ArgumentError(f"can't partition loop {loop.loop_var.name}: it must start at 0", loop)
    if loop.annotations:
        raise ArgumentError(
            f"can't partition loop {loop.loop_var.name}: it has annotations {sorted(loop.annotations)} "
            "that each part would have to carry (TVM refuses this too); partition before annotating",
            loop,
        )
    extent = check_constant_extent(loop, "loop_partition")
    sizes = _sizes(loop, factors, extent)

    # Step 2. one copy of the body per part, each over its own range
    dtype = loop.loop_var.dtype
    inside = [s.name for s in stmts_pre_order(loop) if isinstance(s, Block)]
    taken = set(state.index.blocks) - set(inside)
    prefix = inside[0] if inside else loop.loop_var.name
    parts, new_vars, offset = [], [], 0
    for k, size in enumerate(sizes):
        var = Var(f"{loop.loop_var.name}{k}", dtype)
        part = Range(const(offset, dtype), const(size, dtype))
        vmap: dict[Var, object] = {loop.loop_var: var}
        if size == 1 and not preserve_unit_iters:
            vmap[loop.loop_var] = const(offset, dtype)
        body = _PartCopy(vmap, var.name, taken, var, part).visit(loop.body)
        if not (size == 1 and not preserve_unit_iters):
            body = For(var, part.min, part.extent, loop.kind, body, loop.thread_tag)
            new_vars.append(var)
        parts.append(_opaque(_unique(f"{prefix}_{var.name}_partition", taken), body))
        offset += size
    common = _unique(f"{prefix}_{loop.loop_var.name}_common", taken)
    state.replace({loop: _opaque(common, seq(*parts))})
    return [state.index.loops[var] for var in new_vars]


# ---------------------------------------------------------------- public methods


class LoopPartitionMethods:
    def loop_partition(
        self, loop: LoopRV, factors: list[int | ExprRV | None], preserve_unit_iters: bool = True
    ) -> list[LoopRV]:
        """Cut ``loop``'s range into consecutive loops of the sizes ``factors``, each running its own
        copy of the body; return the new loops.

        ``loop_partition`` in TVM (Halide's ``partition`` peels loop boundaries the same
        way). Sizes are taken in order from 0; one may be None or -1 (what is left); without
        it, a last loop takes what the sizes leave. Blocks in part ``k`` are renamed
        ``<block>_<loop><k>``, so earlier block handles under the loop become stale.

        Requirements: the loop is serial, starts at 0 and has a constant extent; sizes
        are checked as split's factors (positive ints or sampled values, one None) and
        add up to at most the extent.

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_SCALE))
        >>> head, tail = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [12])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            # with T.block("root"):
            with T.block("B_i_common"):
                T.reads(A[0:16])
                T.writes(B[0:16])
                with T.block("B_i0_partition"):
                    T.reads(A[0:12])
                    T.writes(B[0:12])
                    for i0 in range(12):
                        with T.block("B_i0"):
                            vi = T.axis.spatial(12, i0)
                            T.reads(A[0:12])
                            T.writes(B[0:12])
                            B[vi] = A[vi] * T.float32(2.0)
                with T.block("B_i1_partition"):
                    T.reads(A[12:16])
                    T.writes(B[12:16])
                    for i1 in range(12, 16):
                        with T.block("B_i1"):
                            vi_1 = T.axis.spatial((12, 16), i1)
                            T.reads(A[12:16])
                            T.writes(B[12:16])
                            B[vi_1] = A[vi_1] * T.float32(2.0)
        """
        factors = [plain_factor(f) for f in factors] if isinstance(factors, (list, tuple)) else factors
        return self._run(
            "loop_partition", loop=loop, factors=factors, preserve_unit_iters=preserve_unit_iters
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_VECTOR_SCALE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
"""
