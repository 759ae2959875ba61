"""Move each intermediate buffer's allocation from the root block down to where it is used.

TVM's PlanAndUpdateBufferAllocationLocation, on TensorIR (block-form) IR, first in the
lowering flow. Each non-parameter buffer the root block allocates goes to the lowest
common ancestor (LCA, a loop or a block) of all its loads and stores, so its lifetime,
and later its compacted size, are as small as the program allows. A "shared" buffer is
per thread block, never per thread: it stops at the lowest ancestor above every
threadIdx-bound loop on the LCA's path (it may sit under blockIdx loops). "local" and
"global" buffers stay at the LCA. An access through an opaque block iterator (one
whose instances share storage across iterations of the loops it is bound to, as
rolling_buffer makes) pins the buffer above the outermost of those loops, as TVM's
LCA detector does: a rolled window must outlive the loop that slides it.

Placement: an allocation lives in a Block. When the place is a block, the buffer joins
that block's ``alloc_buffers``; when it is a loop, the loop body is wrapped in an opaque
block (no iterators, empty name, reads/writes inferred) that allocates it, as TVM does.
``buffer_access_lca`` is shared with compact_buffer_allocation, which relaxes the
accesses below the LCA. ``infer_regions=False`` leaves the opaque blocks' reads and
writes empty: no later pass reads them (they are for printing the IR), and inferring
them over a whole kernel is most of this pass's time; the pipeline skips them when
nobody looks at the IR between passes (codegen/pipeline.py).
"""

from __future__ import annotations

from ..analysis.block_access import infer_access_regions
from ..buffer import Buffer
from ..expr import BufferLoad, IntImm, IterKind, Var
from ..function import PrimFunc
from ..functor import Mutator, Visitor, collect_vars
from ..stmt import Block, BlockRealize, BufferStore, For, Stmt

Scope = For | Block


def buffer_access_lca(root: Stmt) -> dict[Buffer, tuple[Scope, ...]]:
    """For each buffer accessed below ``root``: the path of loops/blocks from the top down to
    the LCA of its loads and stores (the LCA is the last element)."""
    paths: dict[Buffer, tuple[Scope, ...]] = {}
    stack: list[Scope] = []
    pinned: list[dict[Var, int]] = [{}]  # opaque iterator -> depth of the outermost loop it is bound to

    def record(buffer: Buffer, indices) -> None:
        here = stack
        if pinned[-1]:
            used = set().union(*(collect_vars(i) for i in indices))
            depths = [pinned[-1][v] for v in used if v in pinned[-1]]
            here = stack[: min(depths)] if depths else stack
        known = paths.get(buffer)
        if known is None:
            paths[buffer] = tuple(here)
            return
        common = 0
        while common < min(len(known), len(here)) and known[common] is here[common]:
            common += 1
        paths[buffer] = known[:common]

    class _Lca(Visitor):
        def visit_BlockRealize(self, realize: BlockRealize) -> None:
            inner = dict(pinned[-1])
            for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                if iv.kind is IterKind.OPAQUE:
                    used = collect_vars(value)
                    depths = [d for d, s in enumerate(stack) if isinstance(s, For) and s.loop_var in used]
                    if depths:
                        inner[iv.var] = min(depths)
            pinned.append(inner)
            self.generic_visit(realize)
            pinned.pop()

        def visit_For(self, loop: For) -> None:
            stack.append(loop)
            self.generic_visit(loop)
            stack.pop()

        def visit_Block(self, block: Block) -> None:
            stack.append(block)
            # Only the body's accesses count; the signature regions restate them.
            if block.init is not None:
                self.visit(block.init)
            self.visit(block.body)
            stack.pop()

        def visit_BufferLoad(self, load: BufferLoad) -> None:
            record(load.buffer, load.indices)
            self.generic_visit(load)

        def visit_BufferStore(self, store: BufferStore) -> None:
            record(store.buffer, store.indices)
            self.generic_visit(store)

    _Lca().visit(root)
    return paths


def is_thread_idx(scope: Scope) -> bool:
    return isinstance(scope, For) and (scope.thread_tag or "").startswith("threadIdx")


def _placement(buffer: Buffer, path: tuple[Scope, ...]) -> Scope:
    if buffer.scope == "shared":
        for depth, scope in enumerate(path):
            if is_thread_idx(scope):
                path = path[:depth]
                break
    return path[-1]


def opaque_alloc_block(body: Stmt, buffers: tuple[Buffer, ...], infer_regions: bool = True) -> BlockRealize:
    """An iterator-free block around ``body`` that allocates ``buffers`` (with its regions
    inferred, or none when not ``infer_regions``)."""
    block = Block("", (), (), (), body, alloc_buffers=buffers)
    reads, writes = infer_access_regions(block) if infer_regions else ((), ())
    return BlockRealize((), IntImm(1, "bool"), Block("", (), reads, writes, body, alloc_buffers=buffers))


class _Placer(Mutator):
    def __init__(self, root: Block, placements: dict[Scope, list[Buffer]], infer_regions: bool):
        self.root = root
        self.placements = placements
        self.infer_regions = infer_regions

    def visit_For(self, loop: For) -> Stmt:
        buffers = self.placements.get(loop)
        new = self.generic_visit(loop)
        if buffers:
            return For(
                new.loop_var,
                new.min,
                new.extent,
                new.kind,
                opaque_alloc_block(new.body, tuple(buffers), self.infer_regions),
                new.thread_tag,
                new.annotations,
            )
        return new

    def visit_Block(self, block: Block) -> Stmt:
        buffers = self.placements.get(block)
        new = self.generic_visit(block)
        if block is self.root:
            moved = {b for bufs in self.placements.values() for b in bufs}
            kept = tuple(b for b in block.alloc_buffers if b not in moved) + tuple(buffers or ())
            if kept != new.alloc_buffers:
                return _with_allocs(new, kept)
            return new
        if buffers:
            return _with_allocs(new, new.alloc_buffers + tuple(buffers))
        return new


def _with_allocs(block: Block, allocs: tuple[Buffer, ...]) -> Block:
    return Block(
        block.name,
        block.iter_vars,
        block.reads,
        block.writes,
        block.body,
        block.init,
        allocs,
        block.annotations,
    )


def plan_buffer_allocation(func: PrimFunc, infer_regions: bool = True) -> PrimFunc:
    """Allocate each of the root block's intermediate buffers at the LCA of its accesses."""
    realize = func.body
    if not isinstance(realize, BlockRealize):
        raise ValueError(
            f"plan_buffer_allocation needs TensorIR (block-form) IR with a root block; "
            f"{func.name}'s body is a {type(realize).__name__}. Run it before the blocks are lowered."
        )
    root = realize.block
    params = set(func.buffer_params)
    paths = buffer_access_lca(realize)
    placements: dict[Scope, list[Buffer]] = {}
    for buffer in root.alloc_buffers:
        path = paths.get(buffer)
        if buffer in params or not path:
            continue
        place = _placement(buffer, path)
        if place is not root:
            placements.setdefault(place, []).append(buffer)
    if not placements:
        return func
    return func.with_body(_Placer(root, placements, infer_regions).visit(realize))
