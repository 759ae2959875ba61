"""Insert ``T.evaluate(T.tvm_storage_sync("shared"))`` where threads hand shared memory over.

On block-form IR (blocks still present; the lowering passes carry the Evaluate through),
after unify_thread_binding or before it. Inside a kernel (below a thread-bound loop), each
statement sequence is scanned in order with the shared buffers written and read since
the last barrier: a statement that reads a buffer written since then (read after write:
another thread's data) or writes a buffer read or written since then (the data other
threads may still read) gets a barrier before it. A serial loop's body is scanned a second
time starting from the state at its end, so the write of the next iteration waits for the
reads of this one (the barrier at the top of a shared-memory matmul's k0 loop). The
accesses counted are loads and stores anywhere in a statement, so the check is per buffer,
conservative like TVM's storage-sync planner without its index analysis. Asynchronous
copies (software pipelines, inject_software_pipeline.py) land when a thread waits for
them, so a wait counts as writing every buffer that async copies fill: the statement
that reads after it gets the barrier that makes the other threads' copies visible.
A software pipeline that places its own barriers (one per pipeline iteration, which
its versions make sufficient) names its buffers in the function attribute
``software_pipeline_synchronized``; their accesses are left out here, and the
attribute is dropped.
"""

from __future__ import annotations

from dataclasses import replace

from ..buffer import Buffer
from ..expr import BufferLoad, Call, StringImm
from ..function import PrimFunc
from ..functor import StmtMutator, Visitor
from ..matrix_ops import matrix_op_of, read_arguments, written_buffers
from ..stmt import BufferStore, Evaluate, For, ForKind, SeqStmt, Stmt

# Asynchronous copies (software pipelines, CUDA's cp.async): a store ``shared[i] = async_copy(load)``
# starts a copy, commit closes the group of copies started since the last one, wait(n) returns
# when at most n groups are pending.
ASYNC_COPY = "async_copy"
ASYNC_COMMIT = "async_copy_commit"
ASYNC_WAIT = "async_copy_wait"
# Function attribute: names of the shared buffers whose barriers a software pipeline placed.
SYNCHRONIZED_ATTR = "software_pipeline_synchronized"


def storage_sync() -> Evaluate:
    return Evaluate(Call("int32", "tvm_storage_sync", (StringImm("shared"),)))


class _AsyncFilled(Visitor):
    def __init__(self, synchronized: frozenset[str]):
        self.synchronized = synchronized
        self.found: set[Buffer] = set()

    def visit_BufferStore(self, store: BufferStore) -> None:
        value = store.value
        if isinstance(value, Call) and value.op == ASYNC_COPY and store.buffer.name not in self.synchronized:
            self.found.add(store.buffer)
        self.generic_visit(store)


def _async_filled(stmt: Stmt, synchronized: frozenset[str]) -> set[Buffer]:
    """The shared buffers that asynchronous copies below ``stmt`` fill (those a pipeline
    synchronizes itself left out)."""
    collector = _AsyncFilled(synchronized)
    collector.visit(stmt)
    return collector.found


Accesses = tuple[set, set, set]


class _SharedAccesses(Visitor):
    """What ``_shared_accesses`` collects; a statement already in ``known`` (the same object) adds
    its recorded sets instead of being walked again."""

    def __init__(self, async_filled: set[Buffer], synchronized: frozenset[str], known: dict):
        self.async_filled, self.synchronized, self.known = async_filled, synchronized, known
        self.reads: set[Buffer] = set()
        self.writes: set[Buffer] = set()
        self.landed: set[Buffer] = set()

    def visit(self, node) -> None:
        recorded = self.known.get(id(node)) if isinstance(node, Stmt) else None
        if recorded is not None and recorded[0] is node:
            reads, writes, landed = recorded[1]
            self.reads |= reads
            self.writes |= writes
            self.landed |= landed
            return
        super().visit(node)

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        if load.buffer.scope == "shared" and load.buffer.name not in self.synchronized:
            self.reads.add(load.buffer)
        self.generic_visit(load)

    def visit_BufferStore(self, store: BufferStore) -> None:
        if store.buffer.scope == "shared" and store.buffer.name not in self.synchronized:
            self.writes.add(store.buffer)
        self.generic_visit(store)

    def visit_Call(self, call: Call) -> None:
        if call.op == ASYNC_WAIT:
            self.landed.update(self.async_filled)
        if matrix_op_of(call) is None:
            self.generic_visit(call)
            return
        # A matrix operation stores its destination tile (simdgroup_store to shared memory).
        stored = written_buffers(call)
        self.writes.update(b for b in stored if b.scope == "shared" and b.name not in self.synchronized)
        for arg in read_arguments(call):
            self.visit(arg)


def _shared_accesses(
    stmt: Stmt, async_filled: set[Buffer], synchronized: frozenset[str], known: dict
) -> Accesses:
    """The shared buffers ``stmt`` reads and writes, and those whose async copies land in it;
    remembered in ``known`` (by the statement's id, the statement kept), so that the sequence
    around it reuses them (a kernel is walked once, not once per level of nesting)."""
    collector = _SharedAccesses(async_filled, synchronized, known)
    collector.visit(stmt)
    found = (collector.reads, collector.writes, collector.landed)
    known[id(stmt)] = (stmt, found)
    return found


def _plan(accesses: list[Accesses], pending_reads: set, pending_writes: set) -> tuple[list[int], set, set]:
    """Positions needing a barrier before them, and the pending sets after the last statement."""
    pending_reads, pending_writes = set(pending_reads), set(pending_writes)
    positions = []
    for position, (reads, writes, landed) in enumerate(accesses):
        if reads & pending_writes or writes & (pending_reads | pending_writes):
            positions.append(position)
            pending_reads, pending_writes = set(), set()
        pending_reads |= reads
        pending_writes |= writes | landed
    return positions, pending_reads, pending_writes


class _SyncInjector(StmtMutator):
    def __init__(self, async_filled: set[Buffer], synchronized: frozenset[str]):
        self.async_filled = async_filled
        self.synchronized = synchronized
        self.in_kernel = False
        self.serial_bodies: set[int] = set()
        self.known: dict[int, tuple[Stmt, Accesses]] = {}  # see _shared_accesses

    def visit_For(self, loop: For) -> Stmt:
        if loop.kind is ForKind.THREAD_BINDING and not self.in_kernel:
            self.in_kernel = True
            try:
                return self.generic_visit(loop)
            finally:
                self.in_kernel = False
        if self.in_kernel and loop.kind is not ForKind.THREAD_BINDING and isinstance(loop.body, SeqStmt):
            self.serial_bodies.add(id(loop.body))
        return self.generic_visit(loop)

    def visit_SeqStmt(self, block: SeqStmt) -> Stmt:
        new = self.generic_visit(block)
        if not self.in_kernel:
            return new
        accesses = [_shared_accesses(s, self.async_filled, self.synchronized, self.known) for s in new.seq]
        positions, reads, writes = _plan(accesses, set(), set())
        if id(block) in self.serial_bodies:
            positions, _, _ = _plan(accesses, reads, writes)
        if not positions:
            return new
        out: list[Stmt] = []
        for position, stmt in enumerate(new.seq):
            if position in positions:
                out.append(storage_sync())
            out.append(stmt)
        return SeqStmt(tuple(out))


def inject_thread_sync(func: PrimFunc) -> PrimFunc:
    """Barriers between shared-memory write and read phases of every kernel."""
    synchronized = frozenset(func.attrs.get(SYNCHRONIZED_ATTR, ()))
    body = _SyncInjector(_async_filled(func.body, synchronized), synchronized).visit(func.body)
    if synchronized:
        attrs = {k: v for k, v in func.attrs.items() if k != SYNCHRONIZED_ATTR}
        return replace(func.with_body(body), attrs=attrs)
    return func.with_body(body)
