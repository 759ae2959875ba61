"""Loop-kind primitives: bind, parallel, vectorize, unroll (TVM's for_kind family).

They change what kind a serial loop is (``T.thread_binding``, ``T.parallel``,
``T.vectorized``, ``T.unroll``) and nothing else: the loop keeps its variable,
extent and body, so every handle stays valid. What they check is whether the
new kind can compute the same thing: a loop a block uses for a reduction can't
run its iterations at the same time, a vectorized loop must write consecutive
elements, and a thread tag may be used once along a loop nest. The lowering
passes and code generators in codegen/ are what give the kinds their meaning.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    PrimExpr,
    Range,
    Var,
    Visitor,
)
from tir.arith import Analyzer
from tir.functor import stmts_pre_order, substitute, uses_var
from tir.stmt import THREAD_TAGS

from .analysis import check_constant_extent, check_serial, realizes_under, verb
from .block_properties import check_blocks_affine, check_compact_data_flow
from .errors import ScheduleError
from .instruction import LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class UnknownThreadTagError(ScheduleError):
    """bind got a thread axis name that is not blockIdx.x/y/z, threadIdx.x/y/z or vthread(.x/y/z)."""


class ThreadTagConflictError(ScheduleError):
    """A nested loop is bound to the same thread axis and the blocks under the inner one use the outer one."""


class WrongBlockIterTypeError(ScheduleError):
    """A block binds a reduction (or opaque) iterator to the loop, so its iterations depend on each other."""

    tvm_phrase = "cannot be fulfilled with regard to some of its underlying block"


class ParallelReductionError(WrongBlockIterTypeError):
    """parallel on a loop that carries a reduction."""


class VectorizeReductionError(WrongBlockIterTypeError):
    """vectorize on a loop that carries a reduction."""


class BindReductionError(WrongBlockIterTypeError):
    """bind on a loop that carries a reduction."""


class NonUnitStrideVectorizeError(ScheduleError):
    """A store under the vectorized loop does not write consecutive elements of its buffer's last axis."""


# ---------------------------------------------------------------- checks


def _check_no_reduction(
    loop: For, primitive_name: str, error_cls: type, fix: str, allow_reduction: bool = False
) -> None:
    """No block under ``loop`` binds a non-spatial iterator to an expression of the loop's variable.

    ``allow_reduction``: reduction iterators are allowed (a cross-thread reduction), opaque ones not.
    """
    var = loop.loop_var
    allowed = (IterKind.SPATIAL, IterKind.REDUCE) if allow_reduction else (IterKind.SPATIAL,)
    for realize in realizes_under(loop.body):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.kind in allowed or not uses_var(value, lambda v: v is var):
                continue
            role = "reduction" if iv.kind is IterKind.REDUCE else "opaque"
            raise error_cls(
                f"can't {verb(primitive_name)} loop {var.name}: in block {realize.block.name!r}, "
                f"{role} iterator {iv.var.name} is bound to {value!r}, so the loop's iterations "
                f"depend on each other. {fix}",
                loop,
                realize.block,
            )


def _check_parallelizable(
    state: ScheduleState,
    loop: For,
    primitive_name: str,
    error_cls: type,
    fix: str,
    allow_reduction: bool = False,
) -> None:
    """TVM's checks before a loop's iterations may run at once: compact data flow below the loop,
    affine bindings in every block under it, and no non-spatial iterator bound to it (reduction
    iterators allowed with ``allow_reduction``: bind to threadIdx)."""
    check_compact_data_flow(state, loop, primitive_name)
    check_blocks_affine(state, loop, primitive_name)
    _check_no_reduction(loop, primitive_name, error_cls, fix, allow_reduction)


# ---------------------------------------------------------------- vectorize: unit-stride stores


class _StoreIndexCollector(Visitor):
    """Store indices under a loop, rewritten from block iterators to loop variables."""

    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer
        self.bindings: dict[Var, PrimExpr] = {}
        self.stores: list[tuple[Block, BufferStore, tuple[PrimExpr, ...]]] = []
        self.block: Block | None = None

    def visit_For(self, loop: For) -> None:
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        self.generic_visit(loop)

    def visit_BlockRealize(self, realize: BlockRealize) -> None:
        saved_bindings, saved_block = dict(self.bindings), self.block
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            self.bindings[iv.var] = substitute(value, saved_bindings)
        self.block = realize.block
        self.generic_visit(realize.block)
        self.bindings, self.block = saved_bindings, saved_block

    def visit_BufferStore(self, store: BufferStore) -> None:
        indices = tuple(self.analyzer.simplify(substitute(i, self.bindings)) for i in store.indices)
        self.stores.append((self.block, store, indices))
        self.generic_visit(store)


def _check_unit_stride(state: ScheduleState, loop: For) -> None:
    var = loop.loop_var
    analyzer = Analyzer()
    for outer in state.ancestors(loop):
        if isinstance(outer, For):
            analyzer.bind(outer.loop_var, Range(outer.min, outer.extent))
    analyzer.bind(var, Range(loop.min, loop.extent))
    collector = _StoreIndexCollector(analyzer)
    collector.visit(loop.body)
    for block, store, indices in collector.stores:
        where = f"block {block.name!r}" if block is not None else "the loop body"
        name = store.buffer.name
        for axis, index in enumerate(indices[:-1]):
            if uses_var(index, lambda v: v is var):
                raise NonUnitStrideVectorizeError(
                    f"can't vectorize loop {var.name}: in {where}, the store to {name} moves along "
                    f"axis {axis} ({index!r}) as {var.name} advances, so the lanes are not consecutive "
                    f"in memory. Vectorize a loop that only moves the last index of {name} (reorder or "
                    "split so that it is innermost)",
                    loop,
                    store,
                )
        last = indices[-1] if indices else None
        step = (
            None if last is None else analyzer.simplify(last - substitute(last, {var: IntImm(0, var.dtype)}))
        )
        if step is not var:
            reason = (
                f"every lane would write the same element of {name}"
                if last is None or not uses_var(last, lambda v: v is var)
                else f"its last index {last!r} does not advance by 1 with {var.name}"
            )
            raise NonUnitStrideVectorizeError(
                f"can't vectorize loop {var.name}: in {where}, {reason}. Vectorize the loop that "
                f"walks the last axis of {name} with stride 1",
                loop,
                store,
            )


# ---------------------------------------------------------------- primitives


def _check_thread_tag(thread_axis, loop: For) -> str:
    if not isinstance(thread_axis, str) or thread_axis not in THREAD_TAGS:
        raise UnknownThreadTagError(
            f"can't bind loop {loop.loop_var.name}: unknown thread axis {thread_axis!r}; expected one of "
            f"{', '.join(THREAD_TAGS)}",
            loop,
        )
    return thread_axis


def _uses_in_blocks(stmt, var: Var) -> Block | None:
    """The first block under ``stmt`` whose bindings or predicate use ``var``."""
    for realize in realizes_under(stmt):
        if any(uses_var(e, lambda v: v is var) for e in (*realize.iter_values, realize.predicate)):
            return realize.block
    return None


def _check_thread_nesting(state: ScheduleState, loop: For, tag: str) -> None:
    """Nested loops bound to one thread axis become one thread index, so the blocks under the inner
    loop must not use the outer one (a cooperative fetch inside a thread loop does not). Unequal
    extents are left to the lowering, as in TVM (unify_thread_binding)."""
    around = [s for s in state.ancestors(loop) if isinstance(s, For)]
    inside = [s for s in stmts_pre_order(loop.body) if isinstance(s, For)]
    name = loop.loop_var.name
    for other in around + inside:
        if other.kind is not ForKind.THREAD_BINDING or other.thread_tag != tag:
            continue
        outer, inner = (other, loop) if other in around else (loop, other)
        user = _uses_in_blocks(inner.body, outer.loop_var)
        if user is not None:
            raise ThreadTagConflictError(
                f"can't bind loop {name} to {tag}: loop {other.loop_var.name} is already bound to {tag}, "
                f"so both would be the same thread index, but block {user.name!r} under loop "
                f"{inner.loop_var.name} depends on loop {outer.loop_var.name}. Bind this loop to another "
                "thread axis (threadIdx.y, ...)",
                loop,
                other,
            )


@primitive()
def bind(state: ScheduleState, loop: For, thread_axis: str) -> None:
    tag = _check_thread_tag(thread_axis, loop)
    if loop.kind is not ForKind.THREAD_BINDING:  # a bound loop may be bound again, as in TVM
        check_serial(loop, "bind", "Bind a serial loop (split it first to bind a part)")
    # A reduction loop may be bound to threadIdx.x/y/z (a cross-thread reduction, lowered by
    # tir/transform/lower_cross_thread_reduction.py), never to blockIdx or vthread: as TVM.
    cross_thread = tag.startswith("threadIdx.")
    _check_parallelizable(
        state,
        loop,
        "bind",
        BindReductionError,
        "Only threadIdx.x/y/z can carry a reduction (a cross-thread reduction); bind the spatial "
        "loops to blockIdx/vthread, or rfactor the reduction and bind the factored loop",
        allow_reduction=cross_thread,
    )
    _check_thread_nesting(state, loop, tag)
    state.replace({loop: replace(loop, kind=ForKind.THREAD_BINDING, thread_tag=tag)})


@primitive()
def parallel(state: ScheduleState, loop: For) -> None:
    check_serial(loop, "parallel", "Split the loop and parallelize its outer part instead")
    _check_parallelizable(
        state,
        loop,
        "parallel",
        ParallelReductionError,
        "Parallelize a spatial loop instead (reorder it outside the reduction loops)",
    )
    state.replace({loop: replace(loop, kind=ForKind.PARALLEL)})


@primitive()
def vectorize(state: ScheduleState, loop: For) -> None:
    check_serial(loop, "vectorize", "Vectorize a serial loop (split it first to vectorize a part)")
    check_constant_extent(loop, "vectorize")
    # One lane is a plain iteration: any loop of extent 1 may be vectorized, as in TVM (a tiling
    # whose vector level came out as 1 still replays).
    if not (isinstance(loop.extent, IntImm) and loop.extent.value == 1):
        _check_parallelizable(
            state,
            loop,
            "vectorize",
            VectorizeReductionError,
            "Vectorize the innermost spatial loop instead",
        )
        _check_unit_stride(state, loop)
    state.replace({loop: replace(loop, kind=ForKind.VECTORIZED)})


@primitive()
def unroll(state: ScheduleState, loop: For) -> None:
    # Any loop may be unrolled, as in TVM: a bound, parallel or vectorized loop becomes a plain
    # unrolled one (its thread binding dropped).
    state.replace({loop: replace(loop, kind=ForKind.UNROLLED, thread_tag=None)})


# ---------------------------------------------------------------- public methods


class ForKindMethods:
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis: its iterations run on that many threads.

        ``bind`` in TVM; ``gpu_blocks``/``gpu_threads`` in Halide; a grid axis in Triton.

        Requirements: the loop is serial or already bound (binding it again replaces
        the axis, as in TVM); its extent may be symbolic (a dynamic shape: the GPU
        builds read a blockIdx extent at each call and need threadIdx extents to be
        constants); the blocks under it have affine
        bindings and compact data flow, and none uses it for an opaque iterator, nor for
        a reduction iterator unless the axis is threadIdx.x/y/z: a reduction loop bound
        to threads is a cross-thread reduction (TVM's rule), which the GPU targets lower
        to warp shuffles (Metal: simdgroup operations) combined through shared memory,
        and C to a loop. A loop around or inside it may be
        bound to the same axis (a cooperative fetch inside a thread loop) when the blocks
        under the inner one do not use the outer one.

        Parameters
        ----------
        loop : the loop to bind.
        thread_axis : one of "blockIdx.x/y/z", "threadIdx.x/y/z", "vthread", "vthread.x/y/z".

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_ADD))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 32])
        >>> sch.bind(i_0, "blockIdx.x")
        >>> sch.bind(i_1, "threadIdx.x")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i_0 in T.thread_binding(4, thread="blockIdx.x"):
                for i_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i_0 * 32 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2.0)
        """
        return self._run("bind", loop=loop, thread_axis=thread_axis)

    def parallel(self, loop: LoopRV) -> None:
        """Run a loop's iterations on CPU threads (an OpenMP ``parallel for`` in the C target).

        ``parallel`` in TVM and Halide.

        Requirements: the loop is serial; no block under it uses it for a reduction
        (or opaque) iterator.

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_ADD))
        >>> sch.parallel(sch.get_loops(sch.get_block("B"))[0])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i in T.parallel(128):
                with T.block("B"):
                    vi = T.axis.spatial(128, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi] * T.float32(2.0)
        """
        return self._run("parallel", loop=loop)

    def vectorize(self, loop: LoopRV) -> None:
        """Turn a loop into vector operations, one lane per iteration.

        ``vectorize`` in TVM and Halide.

        Requirements: the loop is serial with a constant extent; no block under it
        uses it for a reduction iterator; every store under it writes consecutive
        elements of its buffer's last axis as the loop advances (stride 1) and does
        not move along the other axes.

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_ADD))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
        >>> sch.vectorize(i_1)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i_0 in range(32):
                for i_1 in T.vectorized(4):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i_0 * 4 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2.0)
        """
        return self._run("vectorize", loop=loop)

    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop: the code generator repeats its body once per iteration.

        ``unroll`` in TVM and Halide.

        Requirements: none. A bound, parallel or vectorized loop becomes a plain
        unrolled loop (its thread binding dropped), as in TVM.

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_ADD))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
        >>> sch.unroll(i_1)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i_0 in range(32):
                for i_1 in T.unroll(4):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i_0 * 4 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2.0)
        """
        return self._run("unroll", loop=loop)


# The program the examples above schedule (doctest globals: tir, Schedule).
_VECTOR_ADD = """
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi] * T.float32(2.0)
"""
