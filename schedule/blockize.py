"""blockize: wrap the loops below a loop, and the block they drive, in a new outer block.

TVM's ``blockize`` (blockize_tensorize.cc). The block under ``loop`` is cut in two
along its iterators: each binding ``e`` is split into the part driven by loops
outside ``loop`` and the part driven by ``loop`` and the loops inside it,
``e = outer * extent + inner``. The new outer block ``<name>_o`` gets one iterator
per split (``vi_o``, bound to ``outer``, over ``dom / extent``), the inner block
keeps one per iterator that varies inside (``vi_i``, over ``extent``) and reads
``vi_o * extent + vi_i`` where it read ``vi``. An iterator driven only from outside
moves to the outer block; one driven only from inside gets a unit iterator outside
(kept bound to the unit loops when ``preserve_unit_iters``). A reduction block's
init moves to the outer block as a nest over the inner spatial loops (block
``<name>_init``), since the outer block now decides when the reduction starts.
The outer block's regions are the inner block's relaxed over the inner loops. This
is the first half of ``tensorize`` (tensorize.py), which then replaces the outer
block's body by a tensor intrinsic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tir import Block, BlockRealize, For, IntImm, IterKind, IterVar, PrimExpr, Range, Var
from tir.analysis.block_access import infer_access_regions
from tir.arith import Analyzer
from tir.arith.modular import is_multiple_of
from tir.functor import collect_vars, substitute
from tir.stmt import Stmt

from .blockize_blocks import blockize_blocks
from .errors import ScheduleError
from .instruction import primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotSingleBlockError(ScheduleError):
    """blockize needs the loop's body to be a chain of loops around exactly one block."""


class NonSeparableBindingError(ScheduleError):
    """A block binding that is not ``outer * extent + inner`` for the loops inside and outside."""


# ---------------------------------------------------------------- the split of one iterator


@dataclass
class _SplitIter:
    """How one block iterator is cut: outer iterator (or None), inner iterator (or None), and
    the expression that replaces the old iterator in the inner block."""

    outer: IterVar | None
    outer_value: PrimExpr | None
    inner: IterVar | None
    inner_value: PrimExpr | None
    replacement: PrimExpr


def _loop_chain(loop: For) -> tuple[list[For], BlockRealize]:
    """The loops from ``loop`` down (outermost first) and the one block realize at the bottom."""
    loops = [loop]
    body: Stmt = loop.body
    while isinstance(body, For):
        loops.append(body)
        body = body.body
    if not isinstance(body, BlockRealize):
        raise NotSingleBlockError(
            f"can't blockize loop {loop.loop_var.name}: its body must be loops around exactly one block, "
            f"found {type(body).__name__} below loop {loops[-1].loop_var.name}. Split the nest (or "
            "blockize a loop further in) so that one block is left",
            loop,
        )
    return loops, body


def _split_iter(
    iv: IterVar, value: PrimExpr, inner_vars: set[Var], analyzer: Analyzer, preserve_unit_iters: bool
) -> _SplitIter:
    name, dtype = iv.var.name, iv.var.dtype
    used = collect_vars(value)
    if not used & inner_vars:
        outer = IterVar(Var(name, dtype), iv.dom, iv.kind)
        return _SplitIter(outer, value, None, None, outer.var)
    zero = {v: IntImm(0, v.dtype) for v in inner_vars}
    outer_part = substitute(value, zero)
    if not preserve_unit_iters:
        outer_part = analyzer.simplify(outer_part)
    inner_part = analyzer.simplify(value - outer_part)
    if collect_vars(inner_part) - inner_vars:
        raise NonSeparableBindingError(
            f"can't blockize block iterator {name} = {value!r}: it is not a sum of a part driven by the "
            f"loops outside and a part driven by the loops inside (inner part {inner_part!r})"
        )
    bound = analyzer.const_int_bound(inner_part)
    extent = bound.max_value + 1
    if bound.min_value != 0 or not isinstance(iv.dom.extent, IntImm):
        raise NonSeparableBindingError(
            f"can't blockize block iterator {name} = {value!r}: the inner part {inner_part!r} must start "
            "at 0 and the iterator's domain must be constant"
        )
    inner = IterVar(Var(name + "_i", dtype), Range(IntImm(0, dtype), IntImm(extent, dtype)), iv.kind)
    unit = Range(IntImm(0, dtype), IntImm(1, dtype))
    if isinstance(outer_part, IntImm) and outer_part.value == 0:
        outer = IterVar(Var(name + "_o", dtype), unit, iv.kind)
        inner = IterVar(Var(name, dtype), iv.dom, iv.kind) if extent == iv.dom.extent.value else inner
        return _SplitIter(outer, IntImm(0, dtype), inner, inner_part, inner.var)
    if not is_multiple_of(outer_part, extent, analyzer) or iv.dom.extent.value % extent:
        raise NonSeparableBindingError(
            f"can't blockize block iterator {name} = {value!r}: the outer part {outer_part!r} is not a "
            f"multiple of the inner extent {extent}, or the domain {iv.dom.extent!r} is not"
        )
    outer_dom = Range(IntImm(0, dtype), IntImm(iv.dom.extent.value // extent, dtype))
    outer = IterVar(Var(name + "_o", dtype), outer_dom, iv.kind)
    outer_value = analyzer.simplify(outer_part // extent) if extent != 1 else outer_part
    # an outer iterator of one value is 0 in the inner block, as in TVM
    replacement = inner.var if outer_dom.extent.value == 1 else outer.var * extent + inner.var
    return _SplitIter(outer, outer_value, inner, inner_part, replacement)


# ---------------------------------------------------------------- the rewrite


def _rebuild_loops(loops: list[For], body: Stmt) -> Stmt:
    for loop in reversed(loops):
        body = replace(loop, body=body)
    return body


def _init_nest(
    block: Block, splits: list[_SplitIter], loops: list[For], vmap: dict[Var, PrimExpr]
) -> Stmt | None:
    """The outer block's init: the inner init over the loops that drive only spatial iterators."""
    if block.init is None:
        return None
    spatial = [s for s in splits if s.inner is not None and s.inner.kind is IterKind.SPATIAL]
    reduce_vars = set()
    for s in splits:
        if s.inner is not None and s.inner.kind is not IterKind.SPATIAL:
            reduce_vars |= collect_vars(s.inner_value)
    for s in spatial:
        if collect_vars(s.inner_value) & reduce_vars:
            raise NonSeparableBindingError(
                f"a loop inside drives both the spatial iterator {s.inner.var.name} and a reduction "
                "iterator, so the init cannot run over the spatial loops alone; split that loop first"
            )
    kept = [loop for loop in loops if loop.loop_var not in reduce_vars]
    fresh = {loop.loop_var: Var(loop.loop_var.name + "_init", loop.loop_var.dtype) for loop in kept}
    iters = [replace(s.inner, var=Var(s.inner.var.name + "_init", s.inner.var.dtype)) for s in spatial]
    renamed = {s.inner.var: iv.var for s, iv in zip(spatial, iters)}
    init_body = substitute(substitute(block.init, vmap), renamed)
    init_block = Block(block.name + "_init", tuple(iters), (), (), init_body)
    reads, writes = infer_access_regions(init_block)
    init_block = replace(init_block, reads=reads, writes=writes)
    values = tuple(substitute(s.inner_value, fresh) for s in spatial)
    body: Stmt = BlockRealize(values, IntImm(1, "bool"), init_block)
    for loop in reversed(kept):
        body = For(
            fresh[loop.loop_var], loop.min, loop.extent, loop.kind, body, loop.thread_tag, loop.annotations
        )
    return body


def blockize_loop(state: ScheduleState, loop: For, preserve_unit_iters: bool) -> Block:
    """Blockize ``loop`` in ``state``; returns the new outer block (used by tensorize too)."""
    loops, realize = _loop_chain(loop)
    block = realize.block
    inner_vars = {lp.loop_var for lp in loops}
    analyzer = Analyzer()
    for lp in state.loops_of(block):
        dom = Range(lp.min, lp.extent)
        if lp.loop_var in inner_vars or preserve_unit_iters:
            analyzer.update_range(lp.loop_var, dom)
        else:  # unit loops outside fold to their start, so their iterators become unit iterators
            analyzer.bind(lp.loop_var, dom)
    splits = [
        _split_iter(iv, value, inner_vars, analyzer, preserve_unit_iters)
        for iv, value in zip(block.iter_vars, realize.iter_values)
    ]
    if block.init is not None and realize.predicate is not None and not _is_true(realize.predicate):
        raise NotSingleBlockError(
            f"can't blockize block {block.name!r}: it has both an init and a predicate (T.where)", block
        )
    vmap = {iv.var: s.replacement for iv, s in zip(block.iter_vars, splits)}
    inner_iters = [s for s in splits if s.inner is not None]
    inner_block = Block(
        block.name,
        tuple(s.inner for s in inner_iters),
        tuple(substitute(r, vmap) for r in block.reads),
        tuple(substitute(r, vmap) for r in block.writes),
        substitute(block.body, vmap),
        None,
        block.alloc_buffers,
        block.annotations,
    )
    if block.init is not None:  # without its init the block reads what it accumulates into
        reads, writes = infer_access_regions(inner_block)
        inner_block = replace(inner_block, reads=reads, writes=writes)
    inner_realize = BlockRealize(tuple(s.inner_value for s in inner_iters), realize.predicate, inner_block)
    outer_body = _rebuild_loops(loops, inner_realize)
    outer_block = Block(
        state.unique_name(block.name + "_o"),
        tuple(s.outer for s in splits),
        (),
        (),
        outer_body,
        _init_nest(block, splits, loops, vmap),
    )
    reads, writes = infer_access_regions(outer_block)
    outer_block = replace(outer_block, reads=reads, writes=writes)
    outer_realize = BlockRealize(tuple(s.outer_value for s in splits), IntImm(1, "bool"), outer_block)
    state.replace({loop: outer_realize})
    return outer_block


def _is_true(predicate: PrimExpr) -> bool:
    return isinstance(predicate, IntImm) and predicate.value == 1


@primitive()
def blockize(state: ScheduleState, target: For | list[Block], preserve_unit_iters: bool = True) -> Block:
    if isinstance(target, list):
        return blockize_blocks(state, target, preserve_unit_iters)
    return blockize_loop(state, target, preserve_unit_iters)


# ---------------------------------------------------------------- public methods


class BlockizeMethods:
    def blockize(self, target, preserve_unit_iters: bool = True):
        """Make the loops from ``target`` down, and the block they drive, one new outer block.

        ``blockize`` in TVM. Each block iterator ``vi = outer * n + inner`` (``inner`` driven by
        ``target`` and the loops inside it, ranging over ``n`` values) becomes ``vi_o`` of the
        new block ``<name>_o`` and ``vi_i`` of the inner block, which reads ``vi_o * n + vi_i``.
        Returns the new block. ``tensorize`` builds on it.

        Requirements: below ``target`` are only loops and exactly one block; every binding
        splits into a part from outside and a part from inside, the outer part a multiple of
        the inner extent.

        ``target`` may instead be a list of blocks (TVM's ``blockize(blocks)``,
        schedule/blockize_blocks.py): the consecutive statements of their common loop
        that hold them become one block ``outer_<B>_<C>_``, with an iterator per loop
        above that they use; every block among those statements must be listed.

        >>> sch = Schedule(tir.parse(_TWO_STAGES_PER_ROW))
        >>> outer = sch.blockize([sch.get_block("B"), sch.get_block("C")])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((4, 8))
            for i in range(4):
                with T.block("outer_B_C_"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[vi, 0:8], B[vi, 0:8])
                    T.writes(B[vi, 0:8], C[vi, 0:8])
                    for j in range(8):
                        with T.block("B"):
                            vi_i = T.axis.spatial(4, vi)
                            vj_i = T.axis.spatial(8, j)
                            T.reads(A[vi_i, vj_i])
                            T.writes(B[vi_i, vj_i])
                            B[vi_i, vj_i] = A[vi_i, vj_i] * T.float32(2.0)
                    for j_1 in range(8):
                        with T.block("C"):
                            vi_i_1 = T.axis.spatial(4, vi)
                            vj_i_1 = T.axis.spatial(8, j_1)
                            T.reads(B[vi_i_1, vj_i_1])
                            T.writes(C[vi_i_1, vj_i_1])
                            C[vi_i_1, vj_i_1] = B[vi_i_1, vj_i_1] + T.float32(1.0)

        Example
        -------
        >>> sch = Schedule(tir.parse(_TILED_SCALE))
        >>> _, i1 = sch.get_loops(sch.get_block("B"))
        >>> outer = sch.blockize(i1)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            # with T.block("root"):
            for i0 in range(8):
                with T.block("B_o"):
                    vi_o = T.axis.spatial(8, i0)
                    T.reads(A[vi_o * 8:vi_o * 8 + 8])
                    T.writes(B[vi_o * 8:vi_o * 8 + 8])
                    for i1 in range(8):
                        with T.block("B"):
                            vi_i = T.axis.spatial(8, i1)
                            T.reads(A[vi_o * 8 + vi_i])
                            T.writes(B[vi_o * 8 + vi_i])
                            B[vi_o * 8 + vi_i] = A[vi_o * 8 + vi_i] * T.float32(2.0)
        """
        return self._run("blockize", target=target, preserve_unit_iters=preserve_unit_iters)


# The programs the examples above schedule (doctest globals: tir, Schedule).
_TILED_SCALE = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i0, i1 in T.grid(8, 8):
        with T.block("B"):
            vi = T.axis.spatial(64, i0 * 8 + i1)
            B[vi] = A[vi] * T.float32(2.0)
"""

_TWO_STAGES_PER_ROW = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8))
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""
