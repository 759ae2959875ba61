"""decompose_padding: split a padding block into a constant fill and an in-bounds copy (TVM's
decompose_padding).

A block that writes ``B[idx] = T.if_then_else(cond, A[...], pad)`` (``pad`` loads
nothing) becomes two: ``<block>_pad_const`` writes ``pad`` everywhere, in a copy of
the loops from ``loop`` down to the block placed right before ``loop``; the block
itself then copies only the in-bound box, as TVM's does: each iterator's range
shrinks to what the condition's one-iterator comparisons allow (``3 <= v < 228``)
and is rebased to start at 0; a loop that alone drives such an iterator (and covers
its domain, with nothing else in its body) shrinks with it, and the rest of the
condition becomes a ``T.where`` on the loops. The fill can then be hoisted or
vectorized apart from the copy, which no longer evaluates the condition per element.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce

from tir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    Call,
    For,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Select,
    Var,
    const,
    op,
)
from tir import dtype as _dt
from tir.arith import Analyzer
from tir.functor import substitute, uses_var
from tir.stmt import seq

from .analysis import _conjuncts, bindings_of, child_blocks, loads_of
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods
from .instruction import BlockRV, LoopRV, primitive
from .loop_transformation import _simplify_condition
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotPaddingBlockError(ScheduleError):
    """The block is not one spatial store of a choice between a loaded value and a constant pad."""


class LoopNotAboveBlockError(ScheduleError):
    """The loop is not one of the loops around the block."""


# ---------------------------------------------------------------- decompose_padding

_COMPARISONS = {LT: "lt", LE: "le", GT: "gt", GE: "ge", EQ: "eq"}
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}


def _padding_parts(block: Block) -> tuple[BufferStore, PrimExpr, PrimExpr, PrimExpr]:
    """``(store, in_bounds_condition, value, pad)`` of a padding block, or NotPaddingBlockError."""
    store = block.body
    choice = store.value if isinstance(store, BufferStore) else None
    if isinstance(choice, Call) and choice.op == "if_then_else":
        cond, then, other = choice.args
    elif isinstance(choice, Select):
        cond, then, other = choice.condition, choice.true_value, choice.false_value
    else:
        cond = None
    ok = (
        cond is not None
        and block.init is None
        and not child_blocks(block)
        and all(iv.kind is IterKind.SPATIAL for iv in block.iter_vars)
        and bool(loads_of(then)) != bool(loads_of(other))
    )
    if not ok:
        raise NotPaddingBlockError(
            f"can't decompose_padding block {block.name!r}: it must be a spatial block whose body is one "
            "store B[...] = T.if_then_else(condition, value, pad) where one branch (the pad) loads "
            "nothing",
            block,
        )
    if bool(loads_of(then)):
        return store, cond, then, other
    return store, op.logical_not(cond), other, then


def _interval_of(conjunct: PrimExpr, var: Var, analyzer: Analyzer) -> tuple[int | None, int | None]:
    """``[low, high)`` that a comparison of ``+-var + constant`` with a constant allows (None: no bound)."""
    compare = _COMPARISONS.get(type(conjunct))
    if compare is None or not _dt.is_integer(conjunct.a.dtype):
        return None, None
    difference = analyzer.simplify(op.sub(conjunct.a, conjunct.b))  # compare(difference, 0)
    zero = IntImm(0, var.dtype)
    offset = analyzer.simplify(substitute(difference, {var: zero}))
    slope = analyzer.simplify(op.sub(substitute(difference, {var: IntImm(1, var.dtype)}), offset))
    if not (isinstance(offset, IntImm) and isinstance(slope, IntImm) and slope.value in (1, -1)):
        return None, None
    if not analyzer.can_prove_equal(difference, op.add(op.mul(slope, var), offset)):
        return None, None
    if slope.value == -1:  # -var + k cmp 0  <=>  var mirrored cmp k
        compare = _MIRRORED[compare]
        threshold = offset.value
    else:
        threshold = -offset.value
    return {
        "lt": (None, threshold),
        "le": (None, threshold + 1),
        "gt": (threshold + 1, None),
        "ge": (threshold, None),
        "eq": (threshold, threshold + 1),
    }[compare]


def _in_bound_box(block: Block, in_bounds: PrimExpr, analyzer: Analyzer) -> dict[Var, tuple[int, int]]:
    """Per block iterator of constant domain, the ``[low, high)`` its domain and the condition's
    one-iterator comparisons (``3 <= v``, ``v < 228``) allow. Other conditions bound nothing here;
    they stay in the copy's predicate (the box only has to contain every in-bound instance)."""
    box: dict[Var, tuple[int, int]] = {}
    for iv in block.iter_vars:
        if isinstance(iv.dom.min, IntImm) and isinstance(iv.dom.extent, IntImm):
            box[iv.var] = (iv.dom.min.value, iv.dom.min.value + iv.dom.extent.value)
    for conjunct in _conjuncts(in_bounds):
        used = [v for v in box if uses_var(conjunct, lambda x, v=v: x is v)]
        if len(used) != 1:
            continue
        low, high = _interval_of(conjunct, used[0], analyzer)
        old_low, old_high = box[used[0]]
        box[used[0]] = (
            old_low if low is None else max(old_low, low),
            old_high if high is None else min(old_high, high),
        )
    return box


def _narrowable_loops(chain: list[For], realize: BlockRealize) -> dict[Var, IterVar]:
    """Loops of the decomposed nest whose range the copy may shrink instead of predicating: a loop
    bound alone to one iterator, covering that iterator's domain, with only the next loop (or the
    block) in its body and no loop below it depending on its variable."""
    narrowable: dict[Var, IterVar] = {}
    for position, loop in enumerate(chain):
        below = chain[position + 1] if position + 1 < len(chain) else realize
        bound = [
            iv for iv, value in zip(realize.block.iter_vars, realize.iter_values) if value is loop.loop_var
        ]
        inner_uses = any(
            uses_var(inner.min, lambda x, v=loop.loop_var: x is v)
            or uses_var(inner.extent, lambda x, v=loop.loop_var: x is v)
            for inner in chain[position + 1 :]
        )
        if (
            loop.body is below
            and len(bound) == 1
            and not inner_uses
            and Analyzer().can_prove_equal(loop.min, bound[0].dom.min)
            and Analyzer().can_prove_equal(loop.extent, bound[0].dom.extent)
        ):
            narrowable[loop.loop_var] = bound[0]
    return narrowable


def _simplified_predicate(conjuncts: list[PrimExpr], analyzer: Analyzer) -> PrimExpr:
    """The conjunction of the conditions the loop ranges do not already prove, operands simplified."""
    kept = [_simplify_condition(analyzer, c) for c in conjuncts if not analyzer.can_prove(c)]
    return reduce(op.logical_and, kept) if kept else const(True)


@primitive()
def decompose_padding(state: ScheduleState, block: Block, loop: For) -> Block:
    # Step 1. a padding block, and a loop around it
    store, in_bounds, value, pad = _padding_parts(block)
    loops = state.loops_of(block)
    if not any(candidate is loop for candidate in loops):
        raise LoopNotAboveBlockError(
            f"can't decompose_padding block {block.name!r} at loop {loop.loop_var.name}: the loop is not "
            f"one of the loops around the block ({', '.join(x.loop_var.name for x in loops) or 'none'})",
            block,
            loop,
        )
    realize = state.realize_of(block)
    chain = loops[next(i for i, x in enumerate(loops) if x is loop) :]
    domains = Analyzer()
    for iv in block.iter_vars:
        domains.bind(iv.var, iv.dom)
    if domains.can_prove(in_bounds):
        raise NotPaddingBlockError(
            f"can't decompose_padding block {block.name!r}: its condition {in_bounds!r} holds on its whole "
            "domain, so there is no padding to fill (TVM refuses a trivial padding too)",
            block,
        )
    box = _in_bound_box(block, in_bounds, domains)
    if any(low >= high for low, high in box.values()):
        raise NotPaddingBlockError(
            f"can't decompose_padding block {block.name!r}: its condition {in_bounds!r} holds nowhere in "
            "its domain, so there is nothing to copy",
            block,
        )
    outer = Analyzer()
    for x in loops:
        outer.bind(x.loop_var, Range(x.min, x.extent))

    # Step 2. the constant fill: the loops from `loop` down to the block, copied, around a pad store
    fresh = {x.loop_var: Var(x.loop_var.name, x.loop_var.dtype) for x in chain}
    iters = {iv.var: Var(iv.var.name, iv.var.dtype) for iv in block.iter_vars}
    fill_store = BufferStore(
        store.buffer, substitute(pad, iters), tuple(substitute(i, iters) for i in store.indices)
    )
    fill_block = replace(
        block,
        name=state.unique_name(f"{block.name}_pad_const"),
        iter_vars=tuple(replace(iv, var=iters[iv.var]) for iv in block.iter_vars),
        reads=(),
        writes=tuple(substitute(w, iters) for w in block.writes if w.buffer is store.buffer),
        body=fill_store,
    )
    fill: object = BlockRealize(
        tuple(outer.simplify(substitute(v, fresh)) for v in realize.iter_values),
        _simplified_predicate(_conjuncts(substitute(realize.predicate, fresh)), outer),
        fill_block,
    )
    for x in reversed(chain):
        fill = replace(x, loop_var=fresh[x.loop_var], body=fill)

    # Step 3. the block copies the in-bound box only: its iterators are rebased to start at 0;
    # a loop driving one of them alone shrinks to the box, the other bindings are shifted and the
    # condition becomes a predicate on the loops
    narrowable = _narrowable_loops(chain, realize)
    narrowed: dict[Var, PrimExpr] = {}  # loop var -> its old value in terms of the shrunk loop
    shifted: dict[Var, PrimExpr] = {}  # old iterator -> its value in terms of the new one
    new_iters, new_values = [], []
    for iv, binding in zip(block.iter_vars, realize.iter_values):
        new_var = Var(iv.var.name, iv.var.dtype)
        low, high = box.get(iv.var, (None, None))
        if low is None:
            new_iters.append(replace(iv, var=new_var))
            shifted[iv.var] = new_var
            new_values.append(binding)
            continue
        start = IntImm(low, iv.var.dtype)
        new_iters.append(
            replace(iv, var=new_var, dom=Range(IntImm(0, iv.var.dtype), IntImm(high - low, iv.var.dtype)))
        )
        shifted[iv.var] = op.add(new_var, start)
        if isinstance(binding, Var) and narrowable.get(binding) is iv:
            narrowed[binding] = op.add(binding, start)
            outer.bind(binding, Range(IntImm(0, binding.dtype), IntImm(high - low, binding.dtype)))
            new_values.append(None)  # the shrunk loop itself
        else:
            new_values.append(op.sub(binding, start))
    new_values = [
        binding if value is None else outer.simplify(substitute(value, narrowed))
        for value, binding in zip(new_values, realize.iter_values)
    ]

    def rebased(e: PrimExpr) -> PrimExpr:
        return outer.simplify(substitute(e, shifted))

    conditions = _conjuncts(substitute(in_bounds, bindings_of(realize))) + _conjuncts(realize.predicate)
    copy_block = replace(
        block,
        iter_vars=tuple(new_iters),
        reads=tuple(_rebased_region(r, rebased) for r in block.reads),
        writes=tuple(_rebased_region(w, rebased) for w in block.writes),
        body=BufferStore(store.buffer, rebased(value), tuple(rebased(i) for i in store.indices)),
    )
    predicate = _simplified_predicate([substitute(c, narrowed) for c in conditions], outer)
    state.replace({realize: BlockRealize(tuple(new_values), predicate, copy_block)})
    for var, iv in narrowable.items():
        if var in narrowed:
            current = state.index.loops[var]
            low, high = box[iv.var]
            state.replace(
                {current: replace(current, min=IntImm(0, var.dtype), extent=IntImm(high - low, var.dtype))}
            )
    moved = state.index.loops[loop.loop_var]
    state.replace({moved: seq(fill, moved)})
    return state.index.blocks[fill_block.name]


def _rebased_region(region: BufferRegion, rebased) -> BufferRegion:
    return BufferRegion(region.buffer, tuple(Range(rebased(r.min), rebased(r.extent)) for r in region.region))


# ---------------------------------------------------------------- public methods


class DecomposePaddingMethods(BlockArgumentMethods):
    def decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> BlockRV:
        """Split a padding block into a fill of the pad value and a copy of the in-bounds values;
        return the fill block.

        ``decompose_padding`` in TVM. The fill ``<block>_pad_const`` runs over a copy of the
        loops from ``loop`` down to the block, placed right before ``loop``; the block copies
        the in-bound box only: its iterators are rebased to the box, a loop driving one of them
        alone shrinks to it, and what the loops do not bound stays as a ``T.where``.

        Requirements: the block is spatial, holds no other block, and its body is one store
        ``B[...] = T.if_then_else(condition, value, pad)`` (or ``T.Select``) where exactly one
        branch, the pad, loads nothing, and the condition fails somewhere in the block's
        domain (else there is nothing to pad); ``loop`` is one of the loops around it.
        ``can_decompose_padding(block, loop)`` asks without applying.

        Example
        -------
        >>> sch = Schedule(tir.parse(_PAD))
        >>> block = sch.get_block("P")
        >>> fill = sch.decompose_padding(block, sch.get_loops(block)[0])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((6,), "float32"), P: T.Buffer((10,), "float32")):
            # with T.block("root"):
            for i in range(10):
                with T.block("P_pad_const"):
                    vi = T.axis.spatial(10, i)
                    T.reads()
                    T.writes(P[vi])
                    P[vi] = T.float32(0.0)
            for i_1 in range(6):
                with T.block("P"):
                    vi_1 = T.axis.spatial(6, i_1)
                    T.reads(A[vi_1])
                    T.writes(P[vi_1 + 2])
                    P[vi_1 + 2] = A[vi_1]
        """
        block = self._block_argument(block)
        return self._run("decompose_padding", block=block, loop=loop)

    def can_decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> bool:
        """Whether ``decompose_padding(block, loop)`` would apply now; changes and records nothing.
        TVM's name for ``can_apply("decompose_padding", ...)``."""
        block = self.find_block(block) if isinstance(block, str) else block
        return self.can_apply("decompose_padding", block=block, loop=loop)


# The program the example above schedules (doctest globals: tir, Schedule).
_PAD = """
@T.prim_func
def main(A: T.Buffer((6,), "float32"), P: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("P"):
            vi = T.axis.spatial(10, i)
            P[vi] = T.if_then_else(2 <= vi and vi < 8, A[vi - 2], T.float32(0))
"""
