"""The limits a sampled candidate must respect, and the error that names the one it breaks.

The design-space rules (multi_level_tiling.py, elementwise.py) draw their tiles and
thread counts within the limits, but a mutated decision is replayed without the
rules, and the lowering may allocate a shared tile larger than the rules counted
(it cuts a predicated region only in simple forms), so ``check_limits`` looks at
the finished module: threads per thread group and one extent per thread axis on a
GPU, shared memory per thread group (measured on the compacted buffers, as the
lowering will allocate them, each multiplied by the versions a software pipeline gives
it), and the size of per-thread ("local") arrays, which
the space caps itself. ``SpaceError`` names the broken limit; the generator draws
again on it, and the search counts a candidate that raises it as invalid, before
anything is built or measured.
"""

from __future__ import annotations

from codegen.pipeline import planned_allocations
from codegen.target import Target
from tir import Block, BlockRealize, Buffer, For, ForKind, IntImm, IRModule, PrimFunc, SeqStmt, Stmt
from tir.function import resolve_function
from tir.functor import stmts_pre_order
from tir.transform.inject_software_pipeline import (
    PIPELINE_KEYS,
    SoftwarePipelineError,
    loop_pipeline_versions,
)

# Per-thread arrays (a tile's accumulators) are the space's own limit, not the target's: on
# the CPU they live on the stack of an OpenMP worker thread (often only a few MiB); a GPU
# thread has at most 255 registers, and a larger tile spills to local memory and only wastes
# a trial.
MAX_LOCAL_BYTES = {"c": 64 * 1024, "gpu": 1024}


class SpaceError(Exception):
    """A candidate breaks a limit of the target or of the space (``limit`` names it), or no
    candidate within the limits could be drawn."""

    def __init__(self, message: str, limit: str | None = None):
        super().__init__(message)
        self.limit = limit


def kernels(func: PrimFunc) -> list[Stmt]:
    """The top-level statements under the root block: each loop nest is one kernel on a GPU."""
    body = func.body
    if isinstance(body, BlockRealize) and body.block.name == "root":
        body = body.block.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def check_limits(mod: IRModule | PrimFunc, target: Target, memory: bool = True) -> None:
    """Raise ``SpaceError`` naming the first limit of ``target`` (or of the space) that ``mod`` breaks.

    ``memory=False`` checks the threads only, skipping the buffer compaction that measuring
    shared and local memory needs (most of the cost): for candidates whose tiles were drawn
    within the memory limits, as ``SpaceGenerator.sample`` draws them. Each function is
    walked once, statements only (a candidate is checked thousands of times a run)."""
    func = resolve_function(mod)
    if target.is_gpu:
        for number, kernel in enumerate(kernels(func)):
            _check_threads(kernel, number, target)
    if not memory:
        return
    planned = planned_allocations(func)
    walked = [_Allocations(kernel) for kernel in kernels(planned)]
    if target.is_gpu:
        versions: dict[Buffer, int] = {}
        try:
            for allocations in walked:
                for loop in allocations.pipelined:
                    versions.update(loop_pipeline_versions(loop))
        except SoftwarePipelineError as error:
            raise SpaceError(str(error), limit="software_pipeline") from error
        for number, allocations in enumerate(walked):
            _check_shared_memory(allocations.shared, number, target, versions)
    root = planned.body.block.alloc_buffers if isinstance(planned.body, BlockRealize) else ()
    local = [b for b in root if b.scope == "local"] + [b for a in walked for b in a.local]
    _check_local_arrays(local, target)


class _Allocations:
    """What the memory limits read in one kernel of a planned function, from one walk over its
    statements: the shared and local buffers it allocates and its pipelined loops (in order)."""

    def __init__(self, kernel: Stmt):
        self.shared: list[Buffer] = []
        self.local: list[Buffer] = []
        self.pipelined: list[For] = []
        for stmt in stmts_pre_order(kernel):
            if isinstance(stmt, Block):
                self.shared.extend(b for b in stmt.alloc_buffers if b.scope == "shared")
                self.local.extend(b for b in stmt.alloc_buffers if b.scope == "local")
            elif isinstance(stmt, For) and any(key in stmt.annotations for key in PIPELINE_KEYS):
                self.pipelined.append(stmt)


def _thread_extents(kernel: Stmt) -> dict[str, set[int]]:
    extents: dict[str, set[int]] = {}
    for loop in stmts_pre_order(kernel):
        if isinstance(loop, For) and loop.kind is ForKind.THREAD_BINDING and isinstance(loop.extent, IntImm):
            extents.setdefault(loop.thread_tag, set()).add(loop.extent.value)
    return extents


def _check_threads(kernel, number: int, target: Target) -> None:
    threads = 1
    for tag, extents in _thread_extents(kernel).items():
        if len(extents) > 1:
            raise SpaceError(
                f"kernel {number} binds loops of extents {sorted(extents)} to {tag}; one thread axis "
                "must have one extent per kernel (the cooperative fetch must use the compute's threads)",
                limit="thread_extent",
            )
        if tag.startswith("threadIdx"):
            threads *= next(iter(extents))
    if threads > target.max_threads_per_group:
        raise SpaceError(
            f"kernel {number} uses {threads} threads per group, above the target's "
            f"max_threads_per_group={target.max_threads_per_group} ({target})",
            limit="max_threads_per_group",
        )


def _check_shared_memory(
    shared: list[Buffer], number: int, target: Target, versions: dict[Buffer, int]
) -> None:
    sizes = [(b.static_nbytes(), versions.get(b, 1)) for b in shared]
    total = sum(size * copies for size, copies in sizes if size is not None)
    if total > target.max_shared_memory_bytes:
        raise SpaceError(
            f"kernel {number} needs {total} bytes of shared memory per group, above the target's "
            f"max_shared_memory_bytes={target.max_shared_memory_bytes} ({target})",
            limit="max_shared_memory_bytes",
        )


def _check_local_arrays(local: list[Buffer], target: Target) -> None:
    limit = MAX_LOCAL_BYTES["gpu" if target.is_gpu else "c"]
    for buffer in local:
        size = buffer.static_nbytes()
        if size is not None and size > limit:
            raise SpaceError(
                f"the per-thread array {buffer.name} takes {size} bytes, above the "
                f"space's max_local_bytes={limit} for {target.kind} (a tile too large for registers)",
                limit="max_local_bytes",
            )
