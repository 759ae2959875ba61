"""compute_inline and reverse_compute_inline: fold an elementwise block into its neighbour.

``compute_inline`` substitutes a producer's value expression into every load of
the buffer it writes and removes the producer with its loops (and the buffer's
allocation); ``reverse_compute_inline`` moves a consumer's computation into its
single producer, whose store then writes the consumer's output directly. Both
follow TVM's ``compute_inline.cc``: the inlined block must be a single store
whose indices are distinct block iterators, so that each element is computed
once and the substitution is exact; a consumer may also read at an affine
bijection of its iterators (``B[vi * 16 + vj, vk]``), which is inverted
(``arith.inverse_affine_iter_map``), or at one that is a bijection once its domains are
padded to the divisors it uses (``B[c // 4, c % 4]`` with ``c < 7``): the producer then
writes only where the inverse lies in the consumer's domain. ``plan_compute_inline`` is registered as
compute_inline's legality check, which ``analysis.can_apply`` (the sampling family,
the tuner's auto-inline) asks whether a block could be inlined.
"""

from __future__ import annotations

from dataclasses import replace
from math import lcm

from tir import (
    Add,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    IterKind,
    Mul,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
    op,
)
from tir.analysis.block_access import infer_access_regions
from tir.arith import Analyzer
from tir.arith.iter_map import detect_iter_map, inverse_affine_iter_map
from tir.expr import BufferPointer
from tir.functor import Mutator, collect_vars, post_order_visit, substitute
from tir.stmt import seq
from tir.structural import structural_equal

from .analysis import _conjuncts, child_blocks, loads_of, writers_of
from .errors import ScheduleError
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class ReductionInlineError(ScheduleError):
    """The block to inline (or the producer to inline into) is a reduction block."""


class NotSingleWriteError(ScheduleError):
    """The block to inline writes more than one buffer, or none."""

    tvm_phrase = "The block is only allowed to write a single buffer region"


class NotSingleReadError(ScheduleError):
    """The consumer to reverse-inline reads no buffer produced in its scope, or several."""

    tvm_phrase = "The block is only allowed to read a single buffer region"


class OutputBlockError(ScheduleError):
    """The buffer that inlining would eliminate is a parameter of the function."""

    tvm_phrase = "Cannot operate on an output block"


class InlineBodyError(ScheduleError):
    """The inlined block's body is not one store of the required injective form."""

    tvm_phrase = "its body pattern does not meet the condition for inlining"


class NotSingleProducerError(ScheduleError):
    """The buffer that inlining would eliminate has several writers (or none)."""

    tvm_phrase = "is required to have only a single producer block"


class OtherConsumersError(ScheduleError):
    """reverse_compute_inline: another block also reads the buffer that would be eliminated."""


class InlinePredicateError(ScheduleError):
    """reverse_compute_inline: the consumer has a ``T.where`` predicate."""

    tvm_phrase = "its body pattern does not meet the condition for inlining"


class NotCoveredError(ScheduleError):
    """reverse_compute_inline: the consumer reads elements the producer does not write."""


class OpaqueAccessError(ScheduleError):
    """The buffer is also reached through a pointer (``B.data``, ``B.access_ptr``), which inlining
    can't follow: the pointer would outlive the buffer's allocation."""


class OnlyLeafError(ScheduleError):
    """The block is the only statement of its scope, so removing it would leave the scope empty."""

    tvm_phrase = "Cannot remove the only leaf in the scope"


# ---------------------------------------------------------------- checks


def _reads_buffer(block: Block, buffer: Buffer) -> bool:
    return any(r.buffer is buffer for r in block.reads) or bool(loads_of(block.body, buffer))


def _check_not_reduction(block: Block, refusal: str) -> None:
    """Raise ``refusal`` ("can't inline a reduction block", ...) if ``block`` reduces."""
    reduce_vars = [iv.var.name for iv in block.iter_vars if iv.kind is not IterKind.SPATIAL]
    if block.init is not None or reduce_vars:
        why = (
            "has a T.init() statement"
            if block.init is not None
            else f"has the reduction iterator {reduce_vars[0]}"
        )
        raise ReductionInlineError(
            f"{refusal}: block {block.name} {why}. Only elementwise blocks with spatial iterators take "
            "part in inlining; compute_at or reverse_compute_at can move a reduction instead.",
            block,
        )


def _check_not_output(state: ScheduleState, block: Block, buffer: Buffer, action: str) -> None:
    if buffer in state.func.params:
        raise OutputBlockError(
            f"can't {action}: block {block.name} writes {buffer.name}, a parameter of function "
            f"{state.func_name!r}, so its result must stay in memory. Only blocks that write an "
            "intermediate buffer (T.alloc_buffer) can be inlined.",
            block,
        )


def _check_index_vars(block: Block, indices, role: str) -> list[Var]:
    """The indices as distinct iterators of ``block`` covering every iterator of extent > 1."""
    iter_vars = {iv.var: iv for iv in block.iter_vars}
    seen: list[Var] = []
    for index in indices:
        if not isinstance(index, Var) or index not in iter_vars or index in seen:
            raise InlineBodyError(
                f"block {block.name} {role} {_access(block, indices)} with index {index!r}; inlining "
                "needs every index to be a distinct block iterator (like B[vi, vj]), so that each "
                "element maps to exactly one iteration.",
                block,
            )
        seen.append(index)
    for iv in block.iter_vars:
        if iv.var not in seen and not _is_unit(iv.dom.extent):
            raise InlineBodyError(
                f"block {block.name} {role} {_access(block, indices)}, which does not depend on "
                f"iterator {iv.var.name}: several iterations touch the same element, so the mapping is "
                "not injective and the block can't be inlined.",
                block,
            )
    return seen


def _access(block: Block, indices) -> str:
    return "[" + ", ".join(repr(i) for i in indices) + "]"


def _is_unit(extent: PrimExpr) -> bool:
    return getattr(extent, "value", None) == 1


def _unit_iter_values(block: Block, used: list[Var]) -> dict[Var, PrimExpr]:
    """Iterators of extent one that no index names take their only value."""
    return {iv.var: iv.dom.min for iv in block.iter_vars if iv.var not in used}


def _check_free_vars(state: ScheduleState, block: Block, node, what: str) -> None:
    allowed = {iv.var for iv in block.iter_vars} | {p for p in state.func.params if isinstance(p, Var)}
    stray = sorted(v.name for v in collect_vars(node) if v not in allowed)
    if stray:
        raise InlineBodyError(
            f"the {what} of block {block.name} uses {', '.join(stray)}, which is neither a block "
            "iterator nor a function parameter, so it can't be moved to another block.",
            block,
        )


def _check_no_opaque_access(scope: Block, buffer: Buffer, block: Block, action: str) -> None:
    pointers: list[BufferPointer] = []
    post_order_visit(
        scope.body,
        lambda n: pointers.append(n) if isinstance(n, BufferPointer) and n.buffer is buffer else None,
    )
    if pointers:
        raise OpaqueAccessError(
            f"can't {action}: {buffer.name} has an opaque access (a pointer, {buffer.name}.data or "
            f"{buffer.name}.access_ptr), which inlining can't rewrite; the buffer would be removed "
            "under it. TVM refuses this too.",
            block,
        )


def _removal_target(state: ScheduleState, realize: BlockRealize) -> Stmt:
    """The statement to delete with the block: its realize and the loops that hold only it."""
    node: Stmt = realize
    parent = state.parent(node)
    while isinstance(parent, For):
        node, parent = parent, state.parent(parent)
    if not isinstance(parent, SeqStmt):
        raise OnlyLeafError(
            f"block {realize.block.name} is the only statement in its scope, so it can't be removed; "
            "inline it after adding the block that uses it.",
            realize.block,
        )
    return node


def with_inferred_regions(block: Block) -> Block:
    """``block`` with its reads and writes recomputed from its body."""
    reads, writes = infer_access_regions(block)
    return replace(block, reads=reads, writes=writes)


class _ScopeRewriter(Mutator):
    """Drops one statement, rewrites loads or one realize, and refreshes the changed blocks' regions."""

    def __init__(self, removed: Stmt, buffer: Buffer, load_value=None, realizes=None):
        self.removed = removed
        self.buffer = buffer
        self.load_value = load_value
        self.realizes = realizes or {}

    def visit_SeqStmt(self, node: SeqStmt):
        new = [self.visit(s) for s in node.seq if s is not self.removed]
        if len(new) == len(node.seq) and all(a is b for a, b in zip(new, node.seq)):
            return node
        return seq(*new)

    def visit_BlockRealize(self, realize: BlockRealize):
        if realize in self.realizes:
            return self.realizes[realize]
        return self.generic_visit(realize)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        if self.load_value is None or load.buffer is not self.buffer:
            return load
        return self.load_value(load.indices)

    def visit_Block(self, block: Block):
        new = self.generic_visit(block)
        return new if new is block else with_inferred_regions(new)


def _commit_scope(state: ScheduleState, scope: Block, rewriter: _ScopeRewriter, buffer: Buffer) -> None:
    body = rewriter.visit(scope.body)
    allocs = tuple(b for b in scope.alloc_buffers if b is not buffer)
    state.replace({scope: replace(scope, body=body, alloc_buffers=allocs)})


# ---------------------------------------------------------------- compute_inline


def plan_compute_inline(state: ScheduleState, block: Block):
    """Check that ``block`` can be inlined; return what the rewrite needs (raises if not)."""
    action = f"inline block {block.name}"
    _check_not_reduction(block, "can't inline a reduction block")
    if len(block.writes) != 1:
        raise NotSingleWriteError(
            f"can't {action}: it writes {len(block.writes)} buffers; inlining needs a block that "
            "writes exactly one buffer.",
            block,
        )
    buffer = block.writes[0].buffer
    _check_not_output(state, block, buffer, action)
    store = block.body
    if not isinstance(store, BufferStore) or store.buffer is not buffer:
        raise InlineBodyError(
            f"can't {action}: its body must be a single store B[vi, ...] = f(...) to {buffer.name}, "
            f"but it is a {type(store).__name__}.",
            block,
        )
    index_vars = _check_index_vars(block, store.indices, "stores to " + buffer.name)
    _check_free_vars(state, block, store.value, "value")
    realize = state.realize_of(block)
    scope = state.parent_block(realize)
    others = [w.name for w in writers_of(child_blocks(scope), buffer) if w is not block]
    if others:
        raise NotSingleProducerError(
            f"can't {action}: block {others[0]} also writes {buffer.name}, so loads of "
            f"{buffer.name} can't be replaced by block {block.name}'s value.",
            block,
        )
    if _reads_buffer(block, buffer):
        raise InlineBodyError(f"can't {action}: it reads {buffer.name}, the buffer it writes.", block)
    _check_no_opaque_access(scope, buffer, block, action)
    value = substitute(store.value, _unit_iter_values(block, index_vars))
    return scope, buffer, index_vars, value, _removal_target(state, realize)


@primitive(check=plan_compute_inline)
def compute_inline(state: ScheduleState, block: Block) -> None:
    scope, buffer, index_vars, value, removed = plan_compute_inline(state, block)

    def inlined(indices) -> PrimExpr:
        return substitute(value, dict(zip(index_vars, indices)))

    _commit_scope(state, scope, _ScopeRewriter(removed, buffer, load_value=inlined), buffer)


# ---------------------------------------------------------------- reverse_compute_inline


def _single_scope_read(state: ScheduleState, scope: Block, block: Block) -> Buffer:
    written = {w.buffer for b in child_blocks(scope) if b is not block for w in b.writes}
    produced = []
    for region in block.reads:
        if region.buffer in written and region.buffer not in produced:
            produced.append(region.buffer)
    if len(produced) != 1:
        names = ", ".join(b.name for b in produced) or "none"
        raise NotSingleReadError(
            f"can't reverse-inline block {block.name}: it must read exactly one buffer written by "
            f"another block of its scope, but reads {len(produced)} ({names}).",
            block,
        )
    return produced[0]


def _consumer_iterators(
    block: Block, indices, producer_indices, role: str
) -> tuple[dict, list[Range], list[PrimExpr]]:
    """Each iterator of the consumer ``block`` as an expression of the producer's store indices,
    the box of the buffer the consumer reads (one Range per dimension), and the conditions that
    keep those expressions inside the consumer's domain.

    The read indices are distinct iterators (``B[vi, vj]``), or, as in TVM, an affine bijection
    of them onto a box (``B[vi * 16 + vj, vk]``, ``B[f // 128, f % 128]``), which is inverted."""
    try:
        load_vars = _check_index_vars(block, indices, role)
    except InlineBodyError as plain_refusal:
        found = _inverse_of_affine_read(block, indices, producer_indices)
        if found is None:
            raise plain_refusal from None
        return found
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    mapping = dict(zip(load_vars, producer_indices))
    mapping.update(_unit_iter_values(block, load_vars))
    return mapping, [doms[v] for v in load_vars], []


def _padded_domains(doms: dict[Var, Range], indices) -> dict[Var, Range]:
    """Each domain rounded up to a multiple of the constants its iterator is divided by
    (``cvi // 16`` with ``cvi < 127``: 128), so that a read that is only injective (a producer
    computing more than the consumer reads) becomes a bijection of the padded domains."""
    divisors: dict[Var, int] = {}

    def note(node) -> None:
        if type(node) in (FloorDiv, FloorMod) and node.a in doms and isinstance(node.b, IntImm):
            divisors[node.a] = lcm(divisors.get(node.a, 1), node.b.value)

    for index in indices:
        post_order_visit(index, note)
    padded = {}
    for var, dom in doms.items():
        step = divisors.get(var, 1)
        if isinstance(dom.extent, IntImm) and dom.extent.value % step:
            dom = Range(dom.min, const(-(-dom.extent.value // step) * step, dom.extent.dtype))
        padded[var] = dom
    return padded


def _largest_scale_first(expr: PrimExpr) -> PrimExpr:
    """A sum of terms with its most significant digit first (``vi * 16 + vm``), as TVM prints a
    predicate; the inverse writes the same sum lowest digit first (``vm + vi * 16``)."""
    terms, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Add):
            stack += [e.b, e.a]
        else:
            terms.append(e)

    def scale(term: PrimExpr) -> int:
        return term.b.value if isinstance(term, Mul) and isinstance(term.b, IntImm) else 1

    terms.sort(key=scale, reverse=True)
    result = terms[0]
    for term in terms[1:]:
        result = op.add(result, term)
    return result


def _inverse_of_affine_read(
    block: Block, indices, producer_indices
) -> tuple[dict, list[Range], list[PrimExpr]] | None:
    units = {iv.var: iv.dom.min for iv in block.iter_vars if _is_unit(iv.dom.extent)}
    doms = {iv.var: iv.dom for iv in block.iter_vars if iv.var not in units}
    if not all(isinstance(d.min, IntImm) and d.min.value == 0 for d in doms.values()):
        return None
    indices = [substitute(i, units) for i in indices]
    sums = detect_iter_map(indices, doms, check_bijective=True)
    padded = doms
    if sums is None:  # maybe injective: a bijection once the domains are padded
        padded = _padded_domains(doms, indices)
        sums = detect_iter_map(indices, padded, check_bijective=True) if padded != doms else None
    if sums is None or any(not isinstance(s.base, IntImm) or s.extent is None for s in sums):
        return None
    mapping = inverse_affine_iter_map(sums, producer_indices)
    if set(mapping) != set(doms):
        return None
    inside = [
        op.lt(_largest_scale_first(mapping[v]), doms[v].extent) for v in doms if padded[v] is not doms[v]
    ]
    mapping.update(units)
    return mapping, [Range(s.base, const(s.extent, s.base.dtype)) for s in sums], inside


def _coverage_predicate(
    consumer: Block, producer: Block, producer_store: BufferStore, image: list[Range]
) -> list[PrimExpr]:
    """Conditions that keep the producer's iterations inside the box ``image`` the consumer reads."""
    analyzer = Analyzer()
    for iv in producer.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    conditions = []
    for position, dom in enumerate(image):
        index = producer_store.indices[position]
        written = analyzer.const_int_bound(index)
        low = analyzer.const_int_bound(dom.min).max_value
        high = analyzer.const_int_bound(dom.min + dom.extent - 1).min_value
        if written.min_value > low or written.max_value < high:
            raise NotCoveredError(
                f"can't reverse-inline block {consumer.name}: it reads {producer_store.buffer.name} at "
                f"positions [{low}, {high}] of dimension {position}, but block {producer.name} writes "
                f"only [{written.min_value}, {written.max_value}] there.",
                consumer,
            )
        if written.min_value < low:
            conditions.append(dom.min <= index)
        if written.max_value > high:
            conditions.append(index < dom.min + dom.extent)
    return conditions


def _new_predicate(producer_realize: BlockRealize, conditions: list[PrimExpr]) -> PrimExpr:
    bindings = dict(zip((iv.var for iv in producer_realize.block.iter_vars), producer_realize.iter_values))
    predicate = producer_realize.predicate
    for condition in conditions:
        condition = substitute(condition, bindings)
        if not any(structural_equal(condition, c) for c in _conjuncts(predicate)):
            predicate = predicate & condition
    return Analyzer().simplify(predicate)


def _plan_reverse_inline(state: ScheduleState, block: Block):
    action = f"reverse-inline block {block.name}"
    _check_not_reduction(block, "can't reverse-inline a reduction block")
    realize = state.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise InlinePredicateError(
            f"can't {action}: it has the predicate T.where({realize.predicate!r}); reverse inlining "
            "needs a consumer that runs on every point of its domain.",
            block,
        )
    store = block.body
    if not isinstance(store, BufferStore):
        raise InlineBodyError(
            f"can't {action}: its body must be a single store D[...] = g(B[vi, ...], ...), "
            f"but it is a {type(store).__name__}.",
            block,
        )
    scope = state.parent_block(realize)
    buffer = _single_scope_read(state, scope, block)
    writers = writers_of(child_blocks(scope), buffer)
    if len(writers) != 1:
        raise NotSingleProducerError(
            f"can't {action}: {buffer.name} is written by {len(writers)} blocks "
            f"({', '.join(w.name for w in writers)}); it needs exactly one producer.",
            block,
        )
    producer = writers[0]
    if any(part is not None and loads_of(part, store.buffer) for part in (producer.body, producer.init)):
        raise InlineBodyError(
            f"can't {action}: its producer {producer.name} reads {store.buffer.name}, which block "
            f"{block.name} writes; inlined, the producer would read elements the inlined store has "
            "already overwritten.",
            block,
        )
    copied_init = _is_init_block_copied(producer, store, buffer)
    if not copied_init:
        _check_not_reduction(producer, f"can't reverse-inline block {block.name} into a reduction block")
    _check_not_output(state, producer, buffer, action)
    _check_no_opaque_access(scope, buffer, block, action)
    others = [b for b in child_blocks(scope) if b is not block and not (copied_init and b is producer)]
    readers = [b.name for b in others if _reads_buffer(b, buffer)]
    if readers:
        raise OtherConsumersError(
            f"can't {action}: block {readers[0]} also reads {buffer.name}, which would no longer be "
            f"written after inlining. Inline block {block.name} only when it is the sole consumer.",
            block,
        )
    producer_store = producer.body
    if not isinstance(producer_store, BufferStore) or producer_store.buffer is not buffer:
        raise InlineBodyError(
            f"can't {action}: its producer {producer.name} must be a single store to {buffer.name}.",
            producer,
        )
    loads = loads_of(store, buffer)
    if not loads:
        raise InlineBodyError(
            f"can't {action}: its T.reads names {buffer.name}, but its body never loads it.", block
        )
    if any(len(load.indices) != len(loads[0].indices) for load in loads) or not _same_indices(loads):
        raise InlineBodyError(
            f"can't {action}: it reads {buffer.name} at different indices; reverse inlining needs "
            "one element of the producer per point.",
            block,
        )
    consumer_to_producer, image, inside = _consumer_iterators(
        block, loads[0].indices, producer_store.indices, "reads " + buffer.name
    )
    _check_free_vars(state, block, store, "store")
    conditions = _coverage_predicate(block, producer, producer_store, image) + inside
    return scope, buffer, producer, producer_store, store, consumer_to_producer, conditions, realize


def _is_init_block_copied(producer: Block, consumer_store, buffer: Buffer) -> bool:
    """A producer with ``T.init()`` but only spatial iterators (each instance initializes its
    element, then updates it once) whose consumer copies the element as it is: inlining moves
    both stores, and the update's read of its own element, to the consumer's buffer (TVM's case
    of a batch matmul of reduction extent 1 followed by a transpose)."""
    init, update = producer.init, producer.body
    if not (
        isinstance(init, BufferStore)
        and isinstance(update, BufferStore)
        and init.buffer is buffer
        and update.buffer is buffer
        and all(iv.kind is IterKind.SPATIAL for iv in producer.iter_vars)
        and isinstance(consumer_store, BufferStore)
        and isinstance(consumer_store.value, BufferLoad)
        and consumer_store.value.buffer is buffer
    ):
        return False
    own = update.indices
    return structural_equal(init.indices, own) and all(
        structural_equal(load.indices, own) for load in loads_of(update.value, buffer)
    )


def substitute_buffer_loads(expr: PrimExpr, buffer: Buffer, load: BufferLoad) -> PrimExpr:
    """``expr`` with every load of ``buffer`` replaced by ``load``."""

    class _Replace(Mutator):
        def visit_BufferLoad(self, found: BufferLoad):
            return load if found.buffer is buffer else self.generic_visit(found)

    return _Replace().visit(expr)


def _same_indices(loads: list[BufferLoad]) -> bool:
    first = loads[0].indices
    return all(all(structural_equal(a, b) for a, b in zip(first, load.indices)) for load in loads[1:])


@primitive()
def reverse_compute_inline(state: ScheduleState, block: Block) -> None:
    scope, buffer, producer, producer_store, store, consumer_to_producer, conditions, realize = (
        _plan_reverse_inline(state, block)
    )
    consumer_to_producer = {v: Analyzer().simplify(e) for v, e in consumer_to_producer.items()}

    class _FromProducer(Mutator):
        def visit_BufferLoad(self, load: BufferLoad):
            load = self.generic_visit(load)
            return producer_store.value if load.buffer is buffer else load

    value = _FromProducer().visit(substitute(store.value, consumer_to_producer))
    indices = tuple(substitute(i, consumer_to_producer) for i in store.indices)
    init = None
    if producer.init is not None:  # a copied init block: its element now lives in the consumer's buffer
        target = BufferLoad(store.buffer, indices)
        value = substitute_buffer_loads(value, buffer, target)
        init = BufferStore(store.buffer, producer.init.value, indices)
    new_producer = with_inferred_regions(
        replace(producer, body=BufferStore(store.buffer, value, indices), init=init)
    )
    producer_realize = state.realize_of(producer)
    new_realize = replace(
        producer_realize, block=new_producer, predicate=_new_predicate(producer_realize, conditions)
    )
    removed = _removal_target(state, realize)
    rewriter = _ScopeRewriter(removed, buffer, realizes={producer_realize: new_realize})
    _commit_scope(state, scope, rewriter, buffer)


# ---------------------------------------------------------------- public methods


class ComputeInlineMethods:
    def compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise producer into every block that reads its output.

        Each load ``B[x, y]`` of the buffer the block writes is replaced by the
        block's value with its iterators set to ``x, y``; the block, the loops that
        hold only it and the allocation of ``B`` disappear. ``compute_inline`` in
        TVM, ``compute_inline`` in Halide.

        Requirements
        ------------
        - the block is a single store ``B[vi, vj, ...] = f(...)`` whose indices are
          distinct block iterators (every iterator of extent > 1 among them);
        - it has no ``T.init()`` and no reduction iterator;
        - ``B`` is an intermediate buffer (not a function parameter) that no other
          block writes, and the block does not read it;
        - the block is not the only statement of its scope.

        Parameters
        ----------
        block : the producer to inline.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        ...     B = T.alloc_buffer((8,))
        ...     for i in range(8):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(8, i)
        ...             B[vi] = A[vi] * T.float32(2)
        ...     for i in range(8):
        ...         with T.block("C"):
        ...             vi = T.axis.spatial(8, i)
        ...             C[vi] = B[vi] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func)
        >>> sch.compute_inline(sch.get_block("B"))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            # with T.block("root"):
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] * T.float32(2.0) + T.float32(1.0)
        """
        return self._run("compute_inline", block=block)

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise consumer into the single block that produces its input.

        The producer's store ``B[...] = f(...)`` becomes the consumer's store, with
        the load of ``B`` replaced by ``f(...)``: the producer now writes the
        consumer's output directly, and the consumer, its loops and ``B`` disappear.
        ``reverse_compute_inline`` in TVM (an epilogue fused into its producer).

        Requirements
        ------------
        - the consumer is a single store without ``T.init()``, reduction iterators
          or ``T.where``, and reads exactly one buffer ``B`` that its scope produces,
          at one index tuple of distinct block iterators, or of an affine bijection of
          them onto a box (``B[vg * 6 + vr, vc]``, also one that only covers part of
          the box, ``B[c // 4, c % 4]`` with ``c < 7``), as in TVM;
        - ``B`` has exactly one producer, an elementwise (non-reduction) block whose
          body is one store to ``B`` (or, when the consumer only copies the element, a
          block with ``T.init()`` and spatial iterators only, as TVM allows); ``B`` is
          not a function parameter and no other block reads it;
        - the producer writes every element the consumer reads (where it writes
          more, the producer gets a ``T.where`` predicate).

        Parameters
        ----------
        block : the consumer to inline.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        ...     B = T.alloc_buffer((8,))
        ...     for i in range(8):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(8, i)
        ...             B[vi] = A[vi] * T.float32(2)
        ...     for i in range(8):
        ...         with T.block("C"):
        ...             vi = T.axis.spatial(8, i)
        ...             C[vi] = T.max(B[vi], T.float32(0))
        ... ''')
        >>> sch = Schedule(func)
        >>> sch.reverse_compute_inline(sch.get_block("C"))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            # with T.block("root"):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = T.max(A[vi] * T.float32(2.0), T.float32(0.0))
        """
        return self._run("reverse_compute_inline", block=block)
