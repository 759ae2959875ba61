"""Kernel extraction for GPU targets: a lowered function becomes kernel launches (TVM's SplitHostDevice).

After ``lower_for_target`` a GPU function's body is a sequence of loop nests
that each start with thread-bound loops, possibly inside ``Allocate``s of
global scratch buffers. Each nest becomes one ``DeviceKernel`` named
``<function>_kernel<i>``: its launch extents per thread tag, the global buffers
it touches (in parameter order) and the threadgroup memory it declares. The
global scratch buffers become workspaces the runtime allocates for the call.

Every limit is checked here, before any compiler runs, and a violation names
the kernel and the limit: threads per threadgroup, threadgroup (shared) memory,
a thread extent that is not a constant, code outside any kernel, a dtype the
target lacks. A blockIdx extent may depend on the function's integer scalars
(a dynamic shape's ``(n + 15) // 16``): it becomes a ``SymbolicExtent`` the
runtime evaluates at call time.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field

from tir import dtype as _dt
from tir.arith import Analyzer
from tir.buffer import Buffer
from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import collect_vars, post_order_visit
from tir.stmt import Allocate, BufferStore, Evaluate, For, ForKind, SeqStmt, Stmt

from .errors import BuildError
from .program import Extent, KernelLaunch, SymbolicExtent
from .target import Target

# Alignment of each buffer in a kernel's dynamic shared memory (bytes).
DYNAMIC_SHARED_ALIGN = 128
TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


@dataclass
class DeviceKernel:
    """One GPU kernel: its body (the thread-bound loop nest), launch extents and buffers."""

    name: str
    body: Stmt
    params: tuple[Buffer | Var, ...]
    thread_vars: dict[str, Var] = field(default_factory=dict)
    extents: dict[str, Extent] = field(default_factory=dict)
    shared_bytes: int = 0
    shared_buffers: tuple[Buffer, ...] = ()
    # Over the static limit: each shared buffer's byte offset in one dynamic allocation of
    # dynamic_shared_bytes, requested at launch (0: the kernel declares its shared memory statically).
    dynamic_shared: dict[Buffer, int] = field(default_factory=dict)
    dynamic_shared_bytes: int = 0

    @property
    def grid(self) -> tuple[Extent, Extent, Extent]:
        return tuple(self.extents.get(f"blockIdx.{axis}", 1) for axis in "xyz")

    @property
    def block(self) -> tuple[int, int, int]:
        return tuple(self.extents.get(f"threadIdx.{axis}", 1) for axis in "xyz")

    def launch(self) -> KernelLaunch:
        names = tuple(p.name for p in self.params)
        return KernelLaunch(
            self.name, self.grid, self.block, names, self.shared_bytes, self.dynamic_shared_bytes
        )


def split_device_kernels(
    func: PrimFunc, target: Target, name: str
) -> tuple[list[DeviceKernel], list[Buffer]]:
    """The kernels of lowered ``func`` in launch order, and the global workspaces the host allocates."""
    workspaces: list[Buffer] = []
    nests: list[Stmt] = []
    _collect_host(func.body, name, workspaces, nests)
    order = {p: i for i, p in enumerate((*func.params, *workspaces))}
    kernels = []
    for index, nest in enumerate(nests):
        kernel = _make_kernel(f"{name}_kernel{index}", nest, order)
        check_kernel_limits(kernel, target)
        kernels.append(kernel)
    return kernels, workspaces


def _collect_host(stmt: Stmt, func_name: str, workspaces: list[Buffer], nests: list[Stmt]) -> None:
    if isinstance(stmt, SeqStmt):
        for child in stmt.seq:
            _collect_host(child, func_name, workspaces, nests)
    elif isinstance(stmt, Allocate) and stmt.buffer.scope == "global":
        workspaces.append(stmt.buffer)
        _collect_host(stmt.body, func_name, workspaces, nests)
    elif isinstance(stmt, For) and stmt.kind is ForKind.THREAD_BINDING:
        nests.append(stmt)
    elif isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm):
        pass  # nothing to run (a loop nest of extent 0)
    else:
        what = f"loop {stmt.loop_var.name}" if isinstance(stmt, For) else type(stmt).__name__
        raise BuildError(
            f"in {func_name}: {what} is outside every thread-bound loop, so it cannot run on the GPU. "
            "A GPU kernel starts at its blockIdx/threadIdx loops: bind this loop (sch.bind) or move it "
            "inside the bound loops (sch.reorder), or build for target 'c'."
        )


def _make_kernel(name: str, nest: Stmt, order: dict[Buffer, int]) -> DeviceKernel:
    kernel = DeviceKernel(name, nest, ())
    used: set[Buffer | Var] = set()
    shared: list[Buffer] = []

    def visit(node) -> None:
        if isinstance(node, For) and node.kind is ForKind.THREAD_BINDING:
            _record_thread_loop(kernel, node, order)
        elif isinstance(node, (BufferLoad, BufferStore)) and node.buffer.scope == "global":
            used.add(node.buffer)
        elif isinstance(node, Var) and node in order:
            used.add(node)
        elif isinstance(node, Allocate):
            if node.buffer.scope == "global":
                raise BuildError(
                    f"kernel {name}: global buffer {node.buffer.name} is allocated inside the kernel; "
                    "allocate it at the function's root (T.alloc_buffer in the root block)"
                )
            if node.buffer.scope == "shared":
                shared.append(node.buffer)

    post_order_visit(nest, visit)
    missing = [b.name for b in used if b not in order]
    if missing:
        raise BuildError(f"kernel {name} uses buffers {missing} that are neither parameters nor workspaces")
    kernel.params = tuple(sorted(used, key=order.__getitem__))
    kernel.shared_bytes = sum(_bytes(b, name) for b in shared)
    kernel.shared_buffers = tuple(shared)
    return kernel


def _record_thread_loop(kernel: DeviceKernel, loop: For, order: dict) -> None:
    tag = loop.thread_tag
    if tag not in TAGS:
        raise BuildError(f"kernel {kernel.name}: thread tag {tag!r} is not one of {', '.join(TAGS)}")
    extent = _launch_extent(kernel, loop, order)
    if isinstance(extent, int) and extent < 1:
        raise BuildError(
            f"kernel {kernel.name}: loop {loop.loop_var.name} bound to {tag} has extent {extent}; "
            "a launch needs at least one thread block and one thread (remove the empty loop)"
        )
    known = kernel.extents.get(tag)
    if known is not None and known != extent and tag.startswith("blockIdx"):
        raise BuildError(
            f"kernel {kernel.name}: {tag} is bound with two extents, {known} and {extent} "
            f"(loop {loop.loop_var.name}); every loop bound to one tag must have the same extent"
        )
    kernel.extents[tag] = extent if known is None or known == extent else max(extent, known)
    kernel.thread_vars.setdefault(tag, loop.loop_var)


def _launch_extent(kernel: DeviceKernel, loop: For, order: dict) -> Extent:
    """The loop's extent as a launch size: a constant, or for blockIdx an expression of the
    function's integer scalars (a dynamic shape), evaluated by the runtime at each call."""
    where = f"kernel {kernel.name}: loop {loop.loop_var.name} bound to {loop.thread_tag} has extent"
    extent = call_time_extent(loop.extent, order, where)
    if isinstance(extent, SymbolicExtent) and loop.thread_tag.startswith("threadIdx"):
        raise BuildError(
            f"{where} {extent}, which is not a constant; the threads of a group must be known at "
            "build time. Split the loop by a constant and bind the inner part to threadIdx "
            "(the outer part may go to blockIdx, whose extent is read at call time)"
        )
    return extent


def call_time_extent(expr: PrimExpr, scalars: Collection, where: str) -> Extent:
    """``expr`` as a constant, or as a ``SymbolicExtent`` when it depends only on ``scalars`` (the
    function's parameters); ``where`` starts the BuildError for anything else."""
    if isinstance(expr, IntImm):  # the common case, on the tuner's path: no analyzer
        return int(expr.value)
    extent = Analyzer().simplify(expr)
    if isinstance(extent, IntImm):
        return int(extent.value)
    unknown = sorted(v.name for v in collect_vars(extent) if v not in scalars or not _dt.is_integer(v.dtype))
    if unknown:
        raise BuildError(
            f"{where} {extent}, which depends on {', '.join(unknown)}; a launch or workspace size may "
            "depend only on the function's integer scalars and the variables of its buffers' shapes"
        )
    return SymbolicExtent(str(extent), extent)


def _bytes(buffer: Buffer, kernel_name: str) -> int:
    size = buffer.static_nbytes()
    if size is None:
        raise BuildError(f"kernel {kernel_name}: {buffer.scope} buffer {buffer.name} has no constant size")
    return size


def check_kernel_limits(kernel: DeviceKernel, target: Target) -> None:
    """Threads per group and threadgroup memory against the target's limits."""
    threads = math.prod(kernel.block)
    label = target.backend.group_word
    if threads > target.max_threads_per_group:
        raise BuildError(
            f"kernel {kernel.name} launches {threads} threads per {label} "
            f"(threadIdx extents {kernel.block}), over the {target.kind} limit of "
            f"{target.max_threads_per_group}; split the thread-bound loops further"
        )
    limit = target.max_opt_in_shared_memory_bytes
    if kernel.shared_bytes > limit:
        memory = target.backend.shared_word
        raise BuildError(
            f"kernel {kernel.name} declares {kernel.shared_bytes} bytes of {memory} memory, over the "
            f"{target.kind} limit of {limit} bytes ({target.arch}); use smaller tiles"
        )
    if kernel.shared_bytes > target.max_shared_memory_bytes:
        # one slot per buffer (a buffer allocated again in an unrolled pipeline iteration is one array)
        unique = tuple(dict.fromkeys(kernel.shared_buffers))
        kernel.dynamic_shared, kernel.dynamic_shared_bytes = dynamic_shared_layout(unique)
        if kernel.dynamic_shared_bytes > limit:  # the 128-byte alignment of each buffer added to it
            raise BuildError(
                f"kernel {kernel.name} needs {kernel.dynamic_shared_bytes} bytes of dynamic "
                f"{target.backend.shared_word} memory with its buffers aligned, over the {target.kind} "
                f"limit of {limit} bytes ({target.arch}); use smaller tiles"
            )


def dynamic_shared_layout(buffers: tuple[Buffer, ...]) -> tuple[dict[Buffer, int], int]:
    """Byte offsets of shared buffers placed one after another in one dynamic shared allocation,
    each at a multiple of ``DYNAMIC_SHARED_ALIGN`` (WMMA tiles need 32 bytes, vectors 16), and
    the allocation's size."""
    offsets, end = {}, 0
    for buffer in buffers:
        offsets[buffer] = end
        end += -(-buffer.static_nbytes() // DYNAMIC_SHARED_ALIGN) * DYNAMIC_SHARED_ALIGN
    return offsets, end


def check_dtypes(func: PrimFunc, target: Target, where: str) -> None:
    """Every buffer and expression dtype must exist on the target."""
    seen: set[str] = set()

    def visit(node) -> None:
        dtype = getattr(node, "dtype", None)
        if isinstance(dtype, str):
            seen.add(_dt.element_of(dtype))

    post_order_visit(func.body, visit)
    for buffer in func.buffer_params:
        seen.add(buffer.dtype)
    for dtype in sorted(seen):
        if dtype not in target.dtypes and dtype != "handle":
            raise BuildError(
                f"{where} uses {dtype}, which the {target.kind} target does not have "
                f"(it has {', '.join(sorted(target.dtypes))}); cast to a supported type"
            )
