"""inject_software_pipeline: TVM's software pipelining of a loop annotated ``software_pipeline_stage``.

On block-form IR after plan/compact buffer allocation and before inject_thread_sync
(codegen/pipeline.py). The annotated loop's body is a sequence of statements
(typically: copy a tile of A to shared memory, copy B, compute); statement ``j`` runs
in stage ``software_pipeline_stage[j]``, and within one pipeline iteration the
statements run sorted by ``software_pipeline_order`` (default: as written). In
pipeline iteration ``i`` the statement of stage ``s`` works on the loop's iteration
``i - s``, so with stages ``[0, 0, 2]`` the copies of tile ``k + 2`` are in flight while
tile ``k`` is computed. Each buffer written in one stage and read in a later one gets
``versions = read stage - write stage + 1`` copies (a new leading axis indexed by
``iteration % versions``). The result is a prologue (iterations ``0 .. S-1``, ``S`` the
last stage), a steady-state loop and an epilogue (``N .. N+S-1``), prologue and
epilogue unrolled with the statements whose iteration is out of range left out, so no
predicate is evaluated at run time (TVM's other form guards every statement instead;
with the constant extents we require, unrolling costs nothing and keeps the steady
loop branch-free). Barriers: when every shared buffer the loop touches is versioned
and read only in later stages than it is written (the usual copy-then-compute
pipeline), one barrier at the top of each pipeline iteration is enough (a version is
rewritten only in an iteration after its last reader, and read only in an iteration
after its writer); the pass places it (after the iteration's wait for async copies)
and names the buffers in the ``software_pipeline_synchronized`` attribute, so
inject_thread_sync leaves them alone. Otherwise inject_thread_sync places barriers,
seeing the versions of a buffer as one buffer (a barrier before the reads and one
before the next writes).

Stages in ``software_pipeline_async_stages`` copy asynchronously where the target can
(``async_copies``; CUDA sm_80+): their stores ``shared[...] = global[...]`` become
``shared[...] = async_copy(global[...])`` (cp.async after vectorize_loop and the
printer), every pipeline iteration commits one group per async stage after the
stage's last copy (empty groups in the epilogue keep the count uniform), and the
copies read in an iteration are waited for (``n`` newer groups may stay pending, ``n``
counted from the schedule of commits) at the top of the iteration, before its
barrier, or, without the one-barrier form, just before the statement that reads
them. Without ``async_copies`` the same pipeline runs with ordinary stores.
``remove_software_pipeline`` (the C target) checks the annotations the same way and
keeps the plain loop. The blocks this pass rewrites use the loop variable (the
version index), which TensorIR's parser refuses in blocks with iterators: a dump
after this pass prints but does not parse back.

Malformed annotations raise ``SoftwarePipelineError`` naming the loop: lengths that
differ from the body's statements, an order that is not a permutation or runs a
reader before its writer, stages that decrease along a dependence, a non-constant
extent, a buffer carried between iterations through the pipeline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..buffer import Buffer, BufferRegion
from ..expr import BufferLoad, Call, IntImm, PrimExpr, Range, Var, const
from ..function import PrimFunc
from ..functor import Mutator, StmtMutator, Visitor, stmts_pre_order, substitute
from ..matrix_ops import matrix_op_of, read_arguments, written_buffers
from ..stmt import Block, BlockRealize, BufferStore, Evaluate, For, ForKind, SeqStmt, Stmt, seq
from .inject_thread_sync import ASYNC_COMMIT, ASYNC_COPY, ASYNC_WAIT, SYNCHRONIZED_ATTR, storage_sync

STAGE_KEY = "software_pipeline_stage"
ORDER_KEY = "software_pipeline_order"
ASYNC_STAGES_KEY = "software_pipeline_async_stages"
PIPELINE_KEYS = (STAGE_KEY, ORDER_KEY, ASYNC_STAGES_KEY)


class SoftwarePipelineError(ValueError):
    """A malformed software pipeline annotation (the message names the loop and the rule)."""


def inject_software_pipeline(func: PrimFunc, async_copies: bool = False) -> PrimFunc:
    """Pipeline every loop annotated ``software_pipeline_stage``; ``async_copies``: the target
    copies global to shared memory asynchronously (the async stages use it)."""
    return _rewrite(func, pipeline=True, async_copies=async_copies)


def remove_software_pipeline(func: PrimFunc) -> PrimFunc:
    """Check every pipeline annotation and drop it, keeping the plain loop (targets without
    a memory hierarchy to hide, such as C)."""
    return _rewrite(func, pipeline=False, async_copies=False)


def software_pipeline_versions(func: PrimFunc) -> dict[Buffer, int]:
    """How many versions the pipelines of ``func`` give each buffer they multi-version (the
    buffers of the IR as it is before this pass: the tuner's shared-memory limit check)."""
    found: dict[Buffer, int] = {}
    for stmt in stmts_pre_order(func.body):
        if isinstance(stmt, For):
            found.update(loop_pipeline_versions(stmt))
    return found


def loop_pipeline_versions(loop: For) -> dict[Buffer, int]:
    """``software_pipeline_versions`` of one loop: empty unless the loop is annotated for a
    pipeline (then checked like the pass checks it: ``SoftwarePipelineError``)."""
    if not any(key in loop.annotations for key in PIPELINE_KEYS):
        return {}
    return _versions(_read_pipeline(loop))


def _rewrite(func: PrimFunc, pipeline: bool, async_copies: bool) -> PrimFunc:
    rewriter = _PipelineRewriter(pipeline, async_copies, _unique_names(func))
    body = rewriter.visit(func.body)
    if rewriter.pending:
        names = ", ".join(b.name for b in rewriter.pending)
        raise SoftwarePipelineError(
            f"software pipelining versions {names}, but no block allocates it (a function parameter "
            "can't be multi-versioned); copy it to a cache (cache_read) and pipeline that"
        )
    if body is func.body:
        return func
    if rewriter.synchronized:
        names = sorted({*func.attrs.get(SYNCHRONIZED_ATTR, ()), *rewriter.synchronized})
        func = replace(func, attrs={**func.attrs, SYNCHRONIZED_ATTR: names})
    return func.with_body(body)


def _unique_names(func: PrimFunc) -> set[str]:
    """Names that exactly one buffer of ``func`` has (parameters and allocations)."""
    buffers = set(func.buffer_params)
    for stmt in stmts_pre_order(func.body):
        if isinstance(stmt, Block):
            buffers.update(stmt.alloc_buffers)
    counts: dict[str, int] = {}
    for buffer in buffers:
        counts[buffer.name] = counts.get(buffer.name, 0) + 1
    return {name for name, count in counts.items() if count == 1}


# ---------------------------------------------------------------- reading the annotations


@dataclass
class _Pipeline:
    """One annotated loop: its statements, their stages and order, and what they access."""

    loop: For
    stmts: tuple[Stmt, ...]
    stages: list[int]
    order: list[int]
    async_stages: set[int]
    reads: list[set[Buffer]] = field(default_factory=list)
    writes: list[set[Buffer]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"loop {self.loop.loop_var.name}"

    def describe(self, index: int) -> str:
        names = _block_names(self.stmts[index])
        return f"statement {index} ({', '.join(names) or type(self.stmts[index]).__name__})"


def _int_list(loop: For, key: str, value, length: int | None) -> list[int]:
    name = f"loop {loop.loop_var.name}"
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise SoftwarePipelineError(f"{name}: {key} must be a list of integers, got {value!r}")
    if length is not None and len(value) != length:
        raise SoftwarePipelineError(
            f"{name}: {key} has {len(value)} entries but the loop body has {length} statements "
            "(one entry per statement of the body, in order)"
        )
    return list(value)


def _read_pipeline(loop: For) -> _Pipeline:
    name = f"loop {loop.loop_var.name}"
    annotations = loop.annotations
    if STAGE_KEY not in annotations:
        given = ", ".join(k for k in PIPELINE_KEYS if k in annotations)
        raise SoftwarePipelineError(f"{name}: {given} needs {STAGE_KEY} on the same loop")
    if loop.kind is not ForKind.SERIAL:
        raise SoftwarePipelineError(
            f"{name}: only a serial loop can be pipelined, this one is {loop.kind.value}"
        )
    if not isinstance(loop.extent, IntImm):
        raise SoftwarePipelineError(
            f"{name}: software pipelining needs a constant extent, got {loop.extent!r} "
            "(split the loop by a constant factor and pipeline the outer part)"
        )
    body = _allocating_block(loop).body if _allocating_block(loop) is not None else loop.body
    stmts = body.seq if isinstance(body, SeqStmt) else (body,)
    count = len(stmts)
    stages = _int_list(loop, STAGE_KEY, annotations[STAGE_KEY], count)
    order = _int_list(loop, ORDER_KEY, annotations.get(ORDER_KEY, list(range(count))), count)
    async_stages = _int_list(loop, ASYNC_STAGES_KEY, annotations.get(ASYNC_STAGES_KEY, []), None)
    if any(s < 0 for s in stages):
        raise SoftwarePipelineError(f"{name}: {STAGE_KEY} {stages} has a negative stage")
    if sorted(order) != list(range(count)):
        raise SoftwarePipelineError(
            f"{name}: {ORDER_KEY} {order} must be a permutation of 0..{count - 1} (the position of each "
            "statement in the pipelined body)"
        )
    unknown = [s for s in async_stages if s not in stages]
    if unknown:
        raise SoftwarePipelineError(f"{name}: {ASYNC_STAGES_KEY} lists {unknown}, not stages of {stages}")
    pipeline = _Pipeline(loop, stmts, stages, order, set(async_stages))
    for stmt in stmts:
        reads, writes = _accesses(stmt)
        pipeline.reads.append(reads)
        pipeline.writes.append(writes)
    return pipeline


def _allocating_block(loop: For) -> Block | None:
    """The iterator-free block that allocates buffers around the loop's statements (where
    plan_buffer_allocation put a buffer used only inside the loop, a register cache), or None."""
    body = loop.body
    if isinstance(body, BlockRealize) and not body.block.iter_vars and body.block.alloc_buffers:
        return body.block
    return None


def _accesses(stmt: Stmt) -> tuple[set[Buffer], set[Buffer]]:
    """Buffers a statement loads and stores, leaving out those it allocates itself."""
    reads: set[Buffer] = set()
    writes: set[Buffer] = set()
    private: set[Buffer] = set()

    class _Collect(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            reads.add(load.buffer)
            self.generic_visit(load)

        def visit_BufferStore(self, store: BufferStore) -> None:
            writes.add(store.buffer)
            self.generic_visit(store)

        def visit_Call(self, call: Call) -> None:
            if matrix_op_of(call) is None:
                self.generic_visit(call)
                return
            writes.update(written_buffers(call))  # a matrix operation stores through its tiles
            for arg in read_arguments(call):
                self.visit(arg)

        def visit_Block(self, block: Block) -> None:
            private.update(block.alloc_buffers)
            if block.init is not None:
                self.visit(block.init)
            self.visit(block.body)

    _Collect().visit(stmt)
    return reads - private, writes - private


def _block_names(stmt: Stmt) -> list[str]:
    return [s.name for s in stmts_pre_order(stmt) if isinstance(s, Block) and s.name]


# ---------------------------------------------------------------- checking the dependences


def _versions(pipeline: _Pipeline) -> dict[Buffer, int]:
    """Check that the pipeline keeps every dependence; the buffers to multi-version and how many
    versions each needs (those written in one stage and read in a later one)."""
    stages, order, name = pipeline.stages, pipeline.order, pipeline.name
    versions: dict[Buffer, int] = {}
    count = len(pipeline.stmts)
    for p in range(count):
        for q in range(p + 1, count):
            shared = (pipeline.writes[p] & (pipeline.reads[q] | pipeline.writes[q])) | (
                pipeline.reads[p] & pipeline.writes[q]
            )
            for buffer in shared:
                what = f"{pipeline.describe(q)} and {pipeline.describe(p)} both access {buffer.name}"
                if stages[p] > stages[q]:
                    raise SoftwarePipelineError(
                        f"{name}: {what}, but the later statement has the earlier stage "
                        f"({stages[q]} < {stages[p]}); stages must not decrease along a dependence"
                    )
                if stages[p] == stages[q] and order[p] > order[q]:
                    raise SoftwarePipelineError(
                        f"{name}: {what}, and {ORDER_KEY} runs {pipeline.describe(q)} first in the same "
                        f"stage ({order[q]} < {order[p]}): it would read {buffer.name} before it is written"
                    )
                if buffer in pipeline.writes[p] and buffer in pipeline.reads[q] and stages[q] > stages[p]:
                    versions[buffer] = max(versions.get(buffer, 1), stages[q] - stages[p] + 1)
    for buffer in versions:
        writers = [j for j in range(count) if buffer in pipeline.writes[j]]
        first_reader = min(j for j in range(count) if buffer in pipeline.reads[j])
        if len(writers) > 1 or first_reader < writers[0]:
            raise SoftwarePipelineError(
                f"{name}: {buffer.name} passes between stages, so it must be written by one statement "
                "and read only after it in the loop body (a value carried to the next iteration can't "
                "be pipelined)"
            )
    _check_carried(pipeline, versions)
    return versions


def _check_carried(pipeline: _Pipeline, versions: dict[Buffer, int]) -> None:
    """A buffer not multi-versioned that a later statement writes and an earlier one uses carries
    values to the next iteration: its next-iteration access must still come after."""
    stages, order = pipeline.stages, pipeline.order
    count = len(pipeline.stmts)
    for p in range(count):
        for q in range(p + 1, count):
            carried = (pipeline.writes[q] & (pipeline.reads[p] | pipeline.writes[p])) - set(versions)
            for buffer in carried:
                later = stages[q] < stages[p] + 1 or (stages[q] == stages[p] + 1 and order[q] < order[p])
                if not later:
                    raise SoftwarePipelineError(
                        f"{pipeline.name}: {pipeline.describe(q)} writes {buffer.name}, which "
                        f"{pipeline.describe(p)} uses in the next iteration; stages "
                        f"{stages[p]} and {stages[q]} would run that use too late"
                    )


# ---------------------------------------------------------------- async copies


def _async_copy_stores(stmt: Stmt) -> tuple[Stmt, set[Buffer]]:
    """``stmt`` with its plain global-to-shared copies made asynchronous, and the buffers they fill."""
    filled: set[Buffer] = set()

    class _MakeAsync(Mutator):
        def visit_BufferStore(self, store: BufferStore) -> Stmt:
            value = store.value
            if (
                store.buffer.scope == "shared"
                and isinstance(value, BufferLoad)
                and value.buffer.scope == "global"
                and value.dtype == store.buffer.dtype
            ):
                filled.add(store.buffer)
                return BufferStore(store.buffer, Call(value.dtype, ASYNC_COPY, (value,)), store.indices)
            return store

    return _MakeAsync().visit(stmt), filled


def _commit() -> Evaluate:
    return Evaluate(Call("int32", ASYNC_COMMIT, ()))


def _wait(pending: int) -> Evaluate:
    return Evaluate(Call("int32", ASYNC_WAIT, (IntImm(pending, "int32"),)))


@dataclass
class _AsyncPlan:
    """Where each async stage commits (after which position of the emitted order) and how many
    newer groups each reader of a copied buffer may leave pending."""

    commits: dict[int, int]
    waits: dict[int, int]
    top_wait: int | None = None


def _plan_async(pipeline: _Pipeline, emitted: list[int], filled: list[set[Buffer]]) -> _AsyncPlan:
    stages = pipeline.stages
    position = {j: pos for pos, j in enumerate(emitted)}
    commits: dict[int, int] = {}
    for j in emitted:
        if filled[j]:
            commits[stages[j]] = position[j]
    groups = len(commits)
    waits: dict[int, int] = {}
    top: list[int] = []
    for consumer in emitted:
        for producer, buffers in enumerate(filled):
            if producer == consumer or not buffers & pipeline.reads[consumer]:
                continue
            commit, at = commits[stages[producer]], position[consumer]
            distance = stages[consumer] - stages[producer]
            if distance == 0:
                if commit >= at:
                    raise SoftwarePipelineError(
                        f"{pipeline.name}: {pipeline.describe(consumer)} reads what the async stage "
                        f"{stages[producer]} copies before that stage's copies are committed; put it in "
                        "a later stage or after the stage's last copy"
                    )
                newer = sum(1 for c in commits.values() if commit < c < at)
            else:
                # Groups committed after the one needed, up to the top of the consumer's iteration.
                before_top = sum(1 for c in commits.values() if c > commit) + groups * (distance - 1)
                top.append(before_top)
                newer = before_top + sum(1 for c in commits.values() if c < at)
            waits[consumer] = min(waits.get(consumer, newer), newer)
    return _AsyncPlan(commits, waits, min(top) if top else None)


def _synchronizes_itself(pipeline: _Pipeline, versions: dict[Buffer, int], unique: set[str]) -> bool:
    """Whether one barrier per pipeline iteration protects every shared buffer of the loop: each
    is multi-versioned, read only in stages after its writer's, and named uniquely in the
    function (inject_thread_sync recognizes it by name)."""
    shared = {b for accessed in (*pipeline.reads, *pipeline.writes) for b in accessed if b.scope == "shared"}
    if not shared or not shared <= set(versions) or not all(b.name in unique for b in shared):
        return False
    for writer, written in enumerate(pipeline.writes):
        for reader, read in enumerate(pipeline.reads):
            if (
                reader != writer
                and written & read & shared
                and pipeline.stages[reader] <= pipeline.stages[writer]
            ):
                return False
    return True


# ---------------------------------------------------------------- emitting the pipeline


class _Versioner(Mutator):
    """Accesses to multi-versioned buffers gain the version index as their first index; the
    blocks of an unrolled copy get the copy's suffix (block names stay unique)."""

    def __init__(self, new_buffers: dict[Buffer, Buffer], version: dict[Buffer, PrimExpr], copy: str):
        self.new_buffers = new_buffers
        self.version = version
        self.copy = copy

    def visit_Block(self, block: Block) -> Stmt:
        new = self.generic_visit(block)
        if not self.copy or not new.name:
            return new
        return replace(new, name=new.name + self.copy)

    def visit_BufferLoad(self, load: BufferLoad) -> PrimExpr:
        load = self.generic_visit(load)
        new = self.new_buffers.get(load.buffer)
        return load if new is None else BufferLoad(new, (self.version[load.buffer], *load.indices))

    def visit_BufferStore(self, store: BufferStore) -> Stmt:
        store = self.generic_visit(store)
        new = self.new_buffers.get(store.buffer)
        if new is None:
            return store
        return BufferStore(new, store.value, (self.version[store.buffer], *store.indices))

    def visit_BufferRegion(self, region: BufferRegion) -> BufferRegion:
        new = self.new_buffers.get(region.buffer)
        if new is None:
            return region
        version = self.version[region.buffer]
        return BufferRegion(new, (Range(version, const(1, version.dtype)), *region.region))


def _emit(
    pipeline: _Pipeline,
    versions: dict[Buffer, int],
    new_buffers: dict[Buffer, Buffer],
    async_copies: bool,
    synchronize: bool,
) -> Stmt:
    """The prologue, steady loop and epilogue; with ``synchronize``, a barrier (after the wait for
    the async copies read in the iteration) at the top of every pipeline iteration."""
    loop, stages = pipeline.loop, pipeline.stages
    extent, last = loop.extent.value, max(stages)
    emitted = sorted(range(len(pipeline.stmts)), key=lambda j: pipeline.order[j])
    stmts = list(pipeline.stmts)
    filled: list[set[Buffer]] = [set() for _ in stmts]
    if async_copies:
        for j, stmt in enumerate(stmts):
            if stages[j] in pipeline.async_stages:
                stmts[j], filled[j] = _async_copy_stores(stmt)
    plan = _plan_async(pipeline, emitted, filled)
    commit_after = set(plan.commits.values())
    dtype = loop.loop_var.dtype
    unroll = _register_unroll(versions)

    def instance(stmt: Stmt, k: PrimExpr, copy: str, residue: int | None) -> Stmt:
        """Statement ``stmt`` on loop iteration ``k``; ``residue``: ``k`` modulo ``unroll`` where it is
        known (an unrolled copy of the steady loop), which fixes the versions whose count divides it."""
        version = {
            b: const(residue % v, dtype) if residue is not None and unroll % v == 0 else _version(k, v)
            for b, v in versions.items()
        }
        stmt = substitute(stmt, {loop.loop_var: loop.min + k})
        return _Versioner(new_buffers, version, copy).visit(stmt)

    def runs(j: int, i: PrimExpr | int) -> bool:
        return not isinstance(i, int) or 0 <= i - stages[j] < extent

    def iteration(i: PrimExpr | int, copy: str = "", phase: int | None = None) -> list[Stmt]:
        """Pipeline iteration ``i``: each statement on iteration ``i - stage`` of the loop (left
        out where that is out of range, for a constant ``i``), with the waits and commits;
        ``phase``: ``i`` modulo ``unroll`` for a symbolic ``i`` whose residue is known."""
        out: list[Stmt] = []
        if synchronize:
            if plan.top_wait is not None and any(runs(j, i) for j in plan.waits):
                out.append(_wait(plan.top_wait))
            out.append(storage_sync())
        for pos, j in enumerate(emitted):
            k = i - stages[j]
            if runs(j, i):
                if j in plan.waits and not synchronize:
                    out.append(_wait(plan.waits[j]))
                residue = None if phase is None else phase - stages[j]
                out.append(instance(stmts[j], const(k, dtype) if isinstance(k, int) else k, copy, residue))
            if pos in commit_after:
                out.append(_commit())
        return out

    head = [s for i in range(last) for s in iteration(i, f"_prologue{i}")]
    tail = [
        s for i in range(max(last, extent), extent + last) for s in iteration(i, f"_epilogue{i - extent}")
    ]
    rest = {k: v for k, v in loop.annotations.items() if k not in PIPELINE_KEYS}
    steady: list[Stmt] = []
    count, left = divmod(extent - last, unroll) if extent > last else (0, 0)
    if count:
        var = Var(loop.loop_var.name, dtype)
        if unroll == 1:
            body, start = seq(*iteration(var)), const(last, dtype)
        else:  # each copy's version index is a constant: register arrays stay in registers
            first = const(last, dtype) + var * unroll
            copies = [iteration(first + u if u else first, f"_unroll{u}", last + u) for u in range(unroll)]
            body, start = seq(*(s for copy in copies for s in copy)), const(0, dtype)
        steady = [For(var, start, const(count, dtype), ForKind.SERIAL, body, annotations=rest)]
    steady += [s for i in range(extent - left, extent) for s in iteration(i, f"_remainder{i}")]
    return seq(*head, *steady, *tail)


# The most pipeline iterations one steady-loop body holds for register versions (lcm of their counts).
MAX_REGISTER_UNROLL = 4
# Scopes whose buffers a C-family compiler keeps in registers only when every index is a constant.
REGISTER_SCOPES = ("local", "warp", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator", "metal.simdgroup")


def _register_unroll(versions: dict[Buffer, int]) -> int:
    """How many pipeline iterations the steady loop's body holds: the least common multiple of the
    versions of register-resident buffers (1 if none), so that each copy indexes a fixed version
    (``k % 2`` with ``k`` a loop variable would put a fragment array in local memory); 1 above
    ``MAX_REGISTER_UNROLL``."""
    unroll = 1
    for buffer, count in versions.items():
        if buffer.scope in REGISTER_SCOPES:
            unroll = unroll * count // math.gcd(unroll, count)
    return unroll if unroll <= MAX_REGISTER_UNROLL else 1  # past it, code size costs more than local memory


def _version(k: PrimExpr, versions: int) -> PrimExpr:
    if isinstance(k, IntImm):
        return const(k.value % versions, k.dtype)
    return k % versions


class _PipelineRewriter(StmtMutator):
    """Pipelines annotated loops (innermost first) and gives the multi-versioned buffers their
    new shape where a block allocates them; regions between that block and the loop cover all
    versions."""

    def __init__(self, pipeline: bool, async_copies: bool, unique_names: set[str]):
        self.pipeline = pipeline
        self.async_copies = async_copies
        self.unique_names = unique_names
        self.pending: dict[Buffer, Buffer] = {}
        self.synchronized: set[str] = set()

    def visit_For(self, loop: For) -> Stmt:
        loop = self.generic_visit(loop)
        if not any(key in loop.annotations for key in PIPELINE_KEYS):
            return loop
        pipeline = _read_pipeline(loop)
        versions = _versions(pipeline)
        if not self.pipeline:
            rest = {k: v for k, v in loop.annotations.items() if k not in PIPELINE_KEYS}
            return For(loop.loop_var, loop.min, loop.extent, loop.kind, loop.body, loop.thread_tag, rest)
        new_buffers = {b: _versioned(b, v) for b, v in versions.items()}
        synchronize = _synchronizes_itself(pipeline, versions, self.unique_names)
        if synchronize:
            self.synchronized.update(b.name for b in new_buffers.values())
        pipelined = _emit(pipeline, versions, new_buffers, self.async_copies, synchronize)
        wrapper = _allocating_block(loop)
        if wrapper is None:
            self.pending.update(new_buffers)
            return pipelined
        # The loop's own buffers now live across its iterations: allocated once around the pipeline.
        inner = {b: new_buffers[b] for b in wrapper.alloc_buffers if b in new_buffers}
        self.pending.update({b: n for b, n in new_buffers.items() if b not in inner})
        allocs = tuple(inner.get(b, b) for b in wrapper.alloc_buffers)
        return BlockRealize((), const(True), Block("", (), (), (), pipelined, alloc_buffers=allocs))

    def visit_Block(self, block: Block) -> Stmt:
        new = self.generic_visit(block)
        if not self.pending:
            return new
        allocated = [b for b in new.alloc_buffers if b in self.pending]
        regions = _AllVersions(self.pending)
        new = Block(
            new.name,
            new.iter_vars,
            tuple(regions.visit(r) for r in new.reads),
            tuple(regions.visit(r) for r in new.writes),
            new.body,
            new.init,
            tuple(self.pending.get(b, b) for b in new.alloc_buffers),
            new.annotations,
        )
        for buffer in allocated:
            _check_only_versioned(new, buffer)
            del self.pending[buffer]
        return new


def _check_only_versioned(block: Block, buffer: Buffer) -> None:
    """Every access to a multi-versioned buffer must be inside the pipelined loop (the loop's
    accesses already use the new buffer, so any access to the old one is outside)."""
    reads, writes = _accesses(block.body)
    if buffer in reads | writes:
        raise SoftwarePipelineError(
            f"software pipelining versions {buffer.name}, which is also accessed outside the "
            "pipelined loop; only a buffer used inside that loop can be multi-versioned"
        )


class _AllVersions(Mutator):
    def __init__(self, new_buffers: dict[Buffer, Buffer]):
        self.new_buffers = new_buffers

    def visit_BufferRegion(self, region: BufferRegion) -> BufferRegion:
        new = self.new_buffers.get(region.buffer)
        if new is None:
            return region
        return BufferRegion(new, (Range(const(0, "int32"), new.shape[0]), *region.region))


def _versioned(buffer: Buffer, versions: int) -> Buffer:
    """``buffer`` with a leading dimension of ``versions``; padded strides (storage_align) are kept."""
    strides = (buffer.flat_size(), *buffer.strides) if buffer.strides else ()
    separators = tuple(s + 1 for s in buffer.axis_separators)
    shape = (IntImm(versions, "int32"), *buffer.shape)
    return replace(buffer, shape=shape, strides=strides, axis_separators=separators)
