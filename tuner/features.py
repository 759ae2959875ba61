"""Fixed-length feature vectors of tuning candidates, the input of the cost model.

The search (tuner/search.py) asks the cost model (tuner/cost_model.py) to rank
thousands of sampled schedules before any is built; this module turns one candidate
into ``FEATURE_LENGTH`` float32 numbers, named in ``FEATURE_NAMES``. A candidate in
TensorIR form is first lowered through the target's pipeline up to, not including,
the code generators' vectorize and unroll passes (``lower_for_features``): the IR is
flat and block-free, thread loops are unified, shared/local caches are allocated and
barriers placed, while vectorized and unrolled loops are still loops whose kind says
what they will become. One walk over that IR then counts, with each statement
weighted by the trip counts of the loops around it: FLOPs, the launch shape, loop
structure, bytes moved per memory scope, allocations, barriers, and how well the
global accesses of a warp (GPU) or an inner loop (CPU) fall into memory
transactions (the index arithmetic for that is in feature_indices.py). Quantities
that span orders of magnitude are ``log2(1 + x)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from codegen.pipeline import FEATURE_STAGE, lower_for_target
from codegen.target import Target
from tir import dtype as _dt
from tir.analysis.flops import expr_flops
from tir.arith import Analyzer
from tir.arith.canonical import Simplifier
from tir.arith.const_bound import ConstIntBound
from tir.buffer import Buffer, storage_class
from tir.expr import (
    EQ,
    And,
    Call,
    IntImm,
    PrimExpr,
    Ramp,
    Range,
    Var,
)
from tir.function import IRModule, PrimFunc, resolve_function
from tir.functor import collect_vars, post_order_visit
from tir.stmt import (
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)

from .feature_indices import flat_address, loads_of, working_set

# Levels of the main store's loop nest described one by one, innermost first.
NEST_LEVELS = 6
NEST_FIELDS = (
    "log_extent",
    "kind",  # NEST_KIND_CODES
    "is_reduction",  # 1 when the loop does not move the store (it accumulates)
    "log_working_set",  # bytes the store's accesses touch in this loop and the loops inside it
    "log_intensity",  # FLOPs per byte of that working set
)
FEATURE_NAMES: tuple[str, ...] = (
    "is_gpu",  # 1 for CUDA/Metal targets
    "log_flops",  # floating-point operations of one call
    "log_grid_size",  # product of the blockIdx extents (largest kernel)
    "log_threads_per_group",  # product of the threadIdx extents (largest kernel)
    "warp_utilization",  # threads / threads rounded up to whole warps
    "threads_limit_fraction",  # threads / target.max_threads_per_group
    "log_vthreads",  # product of the vthread extents
    "log_parallel_extent",  # product of nested parallel loop extents (CPU)
    "num_kernels",  # GPU kernels launched (the host code counts as one when it stores)
    "max_loop_depth",  # deepest loop nest around a store
    "log_innermost_extent",  # innermost loop extent around the main store
    "log_work_per_thread",  # executions of the main store by one thread or CPU parallel iteration
    "vector_lanes",  # widest access: dtype lanes times enclosing vectorized extents
    "vectorized_fraction",  # share of global and shared bytes moved by vector accesses
    "log_unrolled_extent",  # largest product of unroll loop extents around a store
    "log_auto_unroll_max_step",  # largest auto-unroll annotation
    "log_global_load_bytes",
    "log_global_store_bytes",
    "log_shared_load_bytes",
    "log_shared_store_bytes",
    "log_local_load_bytes",
    "log_local_store_bytes",
    "log_shared_bytes_per_group",  # shared memory allocated by one thread group
    "shared_limit_fraction",  # of target.max_shared_memory_bytes
    "log_local_bytes_per_thread",  # local (register) buffers of one thread
    "log_arithmetic_intensity",  # FLOPs per global byte moved
    "log_barriers_per_group",  # barriers one thread group executes
    "global_contiguous_fraction",  # share of global bytes with stride 1 in the innermost varying loop
    "global_transaction_efficiency",  # bytes used / bytes transferred for a warp (GPU) or inner loop (CPU)
    "shared_bank_conflict_ways",  # average serialization of shared accesses by bank conflicts (GPU)
    "log_global_reuse",  # global bytes loaded / bytes of the global buffers read
    "log_shared_reuse",  # shared bytes loaded / shared bytes stored
    "log_local_reuse",  # local bytes loaded / local bytes stored
    "predicated_fraction",  # share of store executions under an `if`
) + tuple(
    # The loop nest of the main store, innermost level first (see _FeatureWalker._nest).
    f"level{level}_{name}"
    for level in range(NEST_LEVELS)
    for name in NEST_FIELDS
)
FEATURE_LENGTH = len(FEATURE_NAMES)

# Loop or block annotations whose value is the largest loop body to unroll automatically.
UNROLL_ANNOTATION_KEYS = (
    "pragma_auto_unroll_max_step",
    "meta_schedule.unroll_explicit",
    "meta_schedule.unroll_implicit",
)
# How a loop runs, as one number per level of the main store's nest; 0 is a level that does not exist.
NEST_KIND_CODES = {
    "serial": 1,
    "unrolled": 2,
    "vectorized": 3,
    "parallel": 4,
    "thread": 5,
    "block": 6,
    "vthread": 7,
}
_CPU_INNER_LANES = 16
_GPU_SECTOR_BYTES = 32
_CPU_LINE_BYTES = 64
_SHARED_BANKS = 32


def extract_features(
    func: PrimFunc | IRModule, target: Target | str, flops: float | None = None
) -> np.ndarray:
    """The feature vector (float32, ``FEATURE_LENGTH``) of one candidate for ``target``.

    ``func`` is a scheduled function (TensorIR form, lowered here) or already lowered,
    block-free IR; an IRModule stands for its "main". ``flops`` is
    ``tir.flop_count`` of the workload when the caller has it; otherwise the FLOPs are
    counted from the lowered IR.
    """
    target = Target.parse(target)
    func = resolve_function(func)
    unroll_step = _annotated_unroll_step(func.body)
    if isinstance(func.body, BlockRealize):
        func = lower_for_features(func, target)
    walker = _FeatureWalker(target, unroll_step)
    walker.stmt(func.body)
    return walker.vector(flops)


def extract_batch(
    funcs: Sequence[PrimFunc | IRModule], target: Target | str, flops: float | None = None
) -> np.ndarray:
    """Features of candidates of one workload, one row each: shape ``(len(funcs), FEATURE_LENGTH)``."""
    target = Target.parse(target)
    rows = np.zeros((len(funcs), FEATURE_LENGTH), dtype=np.float32)
    for row, func in enumerate(funcs):
        rows[row] = extract_features(func, target, flops)
    return rows


def lower_for_features(func: PrimFunc, target: Target | str) -> PrimFunc:
    """``func`` through ``target``'s lowering pipeline up to its ``FEATURE_STAGE``."""
    return lower_for_target(func, target, stop_before=FEATURE_STAGE, verify=False)


def _annotated_unroll_step(stmt: Stmt) -> int:
    """The largest auto-unroll annotation on a loop or block, read before lowering because
    lowering drops block annotations."""
    steps = [0]

    def note(node) -> None:
        if isinstance(node, (For, Block)):
            steps.extend(_unroll_value(node.annotations.get(key)) for key in UNROLL_ANNOTATION_KEYS)

    post_order_visit(stmt, note)
    return max(steps)


def _unroll_value(value: object) -> int:
    if isinstance(value, IntImm):
        return value.value
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _log(x: float) -> float:
    return math.log2(1.0 + max(x, 0.0))


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def _int_extent(extent: PrimExpr, analyzer: Analyzer) -> int:
    if isinstance(extent, IntImm):
        return extent.value
    bound = analyzer.const_int_bound(extent)
    return bound.max_value if bound.is_finite and bound.max_value > 0 else 1


# ---------------------------------------------------------------- the walk


def _nest_kind(frame: _Loop) -> float:
    if frame.tag is None:
        return float(NEST_KIND_CODES.get(frame.kind.name.lower(), NEST_KIND_CODES["serial"]))
    if frame.tag.startswith("blockIdx"):
        return float(NEST_KIND_CODES["block"])
    return float(NEST_KIND_CODES["thread" if frame.tag.startswith("threadIdx") else "vthread"])


def _runs_serially(tag: str | None, kind: ForKind) -> bool:
    """Whether one thread (one parallel worker on the CPU) runs every iteration of the loop."""
    return kind is not ForKind.PARALLEL if tag is None else tag.startswith("vthread")


@dataclass
class _Loop:
    var: Var
    extent: int
    kind: ForKind
    tag: str | None
    # What a warp or inner loop spans at this depth (_FeatureWalker._lane_env), computed once.
    lane_env: tuple[dict[Var, np.ndarray], tuple[int, int, int]] | None = None


@dataclass
class _Kernel:
    grid: dict[str, int] = field(default_factory=dict)
    threads: dict[str, int] = field(default_factory=dict)
    vthreads: int = 1
    shared_bytes: int = 0
    local_bytes: int = 0
    barriers: float = 0.0
    stores: int = 0

    @property
    def grid_size(self) -> int:
        return math.prod(self.grid.values())

    @property
    def thread_count(self) -> int:
        return math.prod(self.threads.values())


@dataclass
class _WeightedMean:
    total: float = 0.0
    weight: float = 0.0

    def add(self, value: float, weight: float) -> None:
        self.total += value * weight
        self.weight += weight

    @property
    def mean(self) -> float:
        return _ratio(self.total, self.weight)


class _FeatureWalker:
    """One pass over lowered IR, keeping the loop stack and the trip counts it implies."""

    def __init__(self, target: Target, unroll_step: int):
        self.target = target
        self.unroll_step = unroll_step
        self.analyzer = Analyzer()
        self.loops: list[_Loop] = []
        self.active_tags: dict[str, int] = {}
        self.trips = 1.0  # executions of the current statement in the whole launch
        self.thread_trips = 1.0  # ... by one GPU thread or one iteration of the CPU's parallel loops
        self.predicated = 0
        self.host = _Kernel()
        self.kernel = self.host
        self.kernels = [self.host]
        self.flops = 0.0
        self.bytes = {(scope, kind): 0.0 for scope in ("global", "shared", "local") for kind in "LS"}
        self.vector_bytes = 0.0
        self.max_lanes = 1
        self.max_depth = 0
        self.max_unrolled = 1
        self.parallel_extent = 1
        self.main_store: tuple[float, float] = (-1.0, -1.0)
        self.innermost_extent = 1
        self.work_per_thread = 0.0
        self.nest = np.zeros(NEST_LEVELS * len(NEST_FIELDS), dtype=np.float32)
        self.store_trips = 0.0
        self.predicated_trips = 0.0
        self.global_buffers_read: set[Buffer] = set()
        self.contiguous = _WeightedMean()
        self.efficiency = _WeightedMean()
        self.bank_ways = _WeightedMean()
        self._dispatch = {
            SeqStmt: self._seq,
            For: self._for,
            Allocate: self._allocate,
            IfThenElse: self._if,
            LetStmt: self._let,
            BufferStore: self._store,
            Evaluate: self._evaluate,
        }

    def stmt(self, node: Stmt) -> None:
        handler = self._dispatch.get(type(node))
        if handler is None:
            raise ValueError(
                f"extract_features expects lowered, block-free IR but met a {type(node).__name__}; "
                "pass the scheduled function itself (it is lowered for you) or the output of "
                "tuner.features.lower_for_features"
            )
        handler(node)

    # ------------------------------------------------------------ statements

    def _seq(self, node: SeqStmt) -> None:
        for child in node.seq:
            self.stmt(child)

    def _for(self, loop: For) -> None:
        extent = _int_extent(loop.extent, self.analyzer)
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        tag = loop.thread_tag if loop.kind is ForKind.THREAD_BINDING else None
        saved = (self.trips, self.thread_trips, self.kernel)
        opens_kernel = tag is not None and not tag.startswith("vthread") and self.kernel is self.host
        if opens_kernel:
            self.kernel = _Kernel()
            self.kernels.append(self.kernel)
        # A loop nested in one of its own tag is the same hardware index: no new trips.
        if tag is None or tag not in self.active_tags:
            self._enter_trips(tag, extent, loop.kind)
        if tag is not None:
            self.active_tags[tag] = self.active_tags.get(tag, 0) + 1
        self.loops.append(_Loop(loop.loop_var, extent, loop.kind, tag))
        self.stmt(loop.body)
        self.loops.pop()
        if tag is not None:
            self.active_tags[tag] -= 1
            if not self.active_tags[tag]:
                del self.active_tags[tag]
        self.trips, self.thread_trips, self.kernel = saved

    def _enter_trips(self, tag: str | None, extent: int, kind: ForKind) -> None:
        self.trips *= extent
        if _runs_serially(tag, kind):
            self.thread_trips *= extent
        if tag is None:
            if kind is ForKind.PARALLEL:
                nested = math.prod(f.extent for f in self.loops if f.kind is ForKind.PARALLEL)
                self.parallel_extent = max(self.parallel_extent, nested * extent)
        elif tag.startswith("blockIdx"):
            self.kernel.grid[tag] = extent
        elif tag.startswith("threadIdx"):
            self.kernel.threads[tag] = extent
        else:
            self.kernel.vthreads *= extent

    def _allocate(self, node: Allocate) -> None:
        if node.buffer.scope == "shared":
            self.kernel.shared_bytes += node.buffer.static_nbytes() or 0
        elif storage_class(node.buffer.scope) == "local":
            self.kernel.local_bytes += node.buffer.static_nbytes() or 0
        self.stmt(node.body)

    def _if(self, node: IfThenElse) -> None:
        self._loads_in(node.condition)
        saved = (self.trips, self.thread_trips)
        self._narrow_to_condition(node.condition)
        self.predicated += 1
        self.stmt(node.then_case)
        self.trips, self.thread_trips = saved
        if node.else_case is not None:
            self.stmt(node.else_case)
        self.predicated -= 1

    def _narrow_to_condition(self, condition: PrimExpr) -> None:
        """An equality on loop variables (the reduction init's ``k == 0``) holds on one
        point of those loops; a bound check is taken to hold almost always."""
        variables: set[Var] = set()
        pending = [condition]
        while pending:
            term = pending.pop()
            if isinstance(term, And):
                pending += [term.a, term.b]
            elif isinstance(term, EQ):
                variables |= collect_vars(term)
        for frame in self.loops:
            if frame.var in variables and frame.extent > 1:
                self.trips /= frame.extent
                if _runs_serially(frame.tag, frame.kind):
                    self.thread_trips /= frame.extent

    def _let(self, node: LetStmt) -> None:
        self._loads_in(node.value)
        self.analyzer.bind(node.var, node.value)
        self.stmt(node.body)

    def _evaluate(self, node: Evaluate) -> None:
        value = node.value
        if isinstance(value, Call) and value.op == "tvm_storage_sync":
            self.kernel.barriers += self.thread_trips
        else:
            self._loads_in(value)

    def _store(self, store: BufferStore) -> None:
        operations = expr_flops(store.value)
        self.flops += operations * self.trips
        for index in store.indices:
            self._loads_in(index)
        self._loads_in(store.value)
        self._access(store.buffer, store.indices, store.value.dtype, "S")
        self.kernel.stores += 1
        self.store_trips += self.trips
        if self.predicated:
            self.predicated_trips += self.trips
        self.max_depth = max(self.max_depth, len(self.loops))
        unrolled = math.prod(f.extent for f in self.loops if f.kind is ForKind.UNROLLED)
        self.max_unrolled = max(self.max_unrolled, unrolled)
        weight = (operations * self.trips, self.trips)
        if weight > self.main_store:
            self.main_store = weight
            self.innermost_extent = self.loops[-1].extent if self.loops else 1
            self.work_per_thread = self.thread_trips
            self.nest = self._nest(store, operations)

    def _nest(self, store: BufferStore, operations: int) -> np.ndarray:
        """Per level of the loops around ``store``, innermost first: extent, kind, whether it
        accumulates, and the bytes the store's accesses touch inside it, the working set that
        decides which cache (or registers) serves the level."""
        loads = loads_of(store.value)
        accesses = [(store.buffer, store.indices)] + [(load.buffer, load.indices) for load in loads]
        moved: set[Var] = set()
        for index in store.indices:
            moved |= collect_vars(index)
        nest = np.zeros((NEST_LEVELS, len(NEST_FIELDS)), dtype=np.float32)
        # Bounds where only the levels entered so far vary; the loops outside them sit at 0.
        scoped = self.analyzer.copy()
        for frame in self.loops:
            scoped.update_bound(frame.var, ConstIntBound(0, 0))
        inner_trips = 1
        inner: dict[Var, int] = {}
        for level, frame in enumerate(reversed(self.loops[-NEST_LEVELS:])):
            scoped.update_bound(frame.var, ConstIntBound(0, frame.extent - 1))
            inner[frame.var] = frame.extent
            inner_trips *= frame.extent
            touched = working_set(accesses, scoped, inner)
            nest[level] = (
                _log(frame.extent),
                _nest_kind(frame),
                float(frame.var not in moved),
                _log(touched),
                _log(_ratio(operations * inner_trips, touched)),
            )
        return nest.reshape(-1)

    # ------------------------------------------------------------ accesses

    def _loads_in(self, expr: PrimExpr) -> None:
        for load in loads_of(expr):
            self._access(load.buffer, load.indices, load.dtype, "L")

    def _access(self, buffer: Buffer, indices: tuple[PrimExpr, ...], dtype: str, kind: str) -> None:
        scope = storage_class(buffer.scope)  # a fragment (a matrix operation's tile) counts as registers
        nbytes = _dt.bytes_of(dtype) * self.trips
        self.bytes[scope, kind] += nbytes
        lanes = _dt.lanes_of(dtype) * math.prod(f.extent for f in self.loops if f.kind is ForKind.VECTORIZED)
        self.max_lanes = max(self.max_lanes, lanes)
        if scope == "local":
            return
        if lanes > 1:
            self.vector_bytes += nbytes
        if scope == "global":
            if kind == "L":
                self.global_buffers_read.add(buffer)
            self.contiguous.add(float(self._is_contiguous(indices)), nbytes)
            self._transactions(buffer, indices, dtype, nbytes)
        elif self.target.is_gpu:
            self._bank_conflicts(buffer, indices, dtype, nbytes)

    def _is_contiguous(self, indices: tuple[PrimExpr, ...]) -> bool:
        """Whether the innermost loop that moves the access moves it by one element."""
        last = indices[-1]
        if isinstance(last, Ramp):
            return isinstance(last.stride, IntImm) and last.stride.value == 1
        used: set[Var] = set()
        for index in indices:
            used |= collect_vars(index)
        for frame in reversed(self.loops):
            if frame.extent <= 1 or frame.var not in used:
                continue
            outer: set[Var] = set()
            for index in indices[:-1]:
                outer |= collect_vars(index)
            if frame.var in outer:
                return False
            return abs(self._linear_stride(last, frame.var)) == 1
        return True

    def _linear_stride(self, index: PrimExpr, var: Var) -> int:
        """How far ``index`` moves when ``var`` steps by one, from its canonical sum; 0 when the
        step is not one constant (``var`` under a division or inside an opaque term)."""
        stride = 0
        for term in Simplifier(self.analyzer).to_sum(index).terms:
            if term.index is var and term.lower == 1:
                stride += term.scale
            elif term.index is var or var in collect_vars(term.index):
                return 0
        return stride

    def _lane_env(self) -> tuple[dict[Var, np.ndarray], tuple[int, int, int]]:
        """Values of the loop variables that one warp (GPU) or one inner loop (CPU) spans at
        once: axis 0 are the threads or inner iterations, axis 1 an enclosing vectorized loop."""
        env: dict[Var, np.ndarray] = {}
        width = 1
        if self.target.is_gpu:
            innermost = {f.tag: f for f in self.loops if f.tag is not None and f.tag.startswith("threadIdx")}
            frames = [innermost[t] for t in ("threadIdx.x", "threadIdx.y", "threadIdx.z") if t in innermost]
            width = min(self.target.warp_size, math.prod(f.extent for f in frames)) if frames else 1
            lane, span = np.arange(width).reshape(width, 1, 1), 1
            for frame in frames:
                env[frame.var] = (lane // span) % frame.extent
                span *= frame.extent
        elif self.loops and self.loops[-1].kind is not ForKind.VECTORIZED:
            frame = self.loops[-1]
            width = min(frame.extent, _CPU_INNER_LANES)
            env[frame.var] = np.arange(width).reshape(width, 1, 1)
        vectorized = [f for f in self.loops if f.kind is ForKind.VECTORIZED]
        lanes = vectorized[-1].extent if vectorized else 1
        if vectorized:
            env[vectorized[-1].var] = np.arange(lanes).reshape(1, lanes, 1)
        return env, (width, lanes, 1)

    def _addresses(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> np.ndarray | None:
        frame = self.loops[-1] if self.loops else None
        if frame is None or frame.lane_env is None:
            lane_env = self._lane_env()
            if frame is not None:
                frame.lane_env = lane_env
        else:
            lane_env = frame.lane_env
        env, shape = lane_env
        address = flat_address(buffer, indices, env)
        if address is None:
            return None
        address = np.asarray(address)
        return np.broadcast_to(address, np.broadcast_shapes(address.shape, shape))

    def _transactions(self, buffer: Buffer, indices: tuple[PrimExpr, ...], dtype: str, nbytes: float) -> None:
        address = self._addresses(buffer, indices)
        if address is None:
            return
        element = _dt.bytes_of(_dt.element_of(dtype))
        sector = _GPU_SECTOR_BYTES if self.target.is_gpu else _CPU_LINE_BYTES
        sectors = np.unique(address * element // sector).size
        self.efficiency.add(min(1.0, address.size * element / (sectors * sector)), nbytes)

    def _bank_conflicts(
        self, buffer: Buffer, indices: tuple[PrimExpr, ...], dtype: str, nbytes: float
    ) -> None:
        """Distinct words that one bank must serve at once; a vector access of W words per
        thread is served a 32/W-thread phase at a time."""
        address = self._addresses(buffer, indices)
        if address is None:
            return
        element = _dt.bytes_of(_dt.element_of(dtype))
        threads = address.shape[0]
        words = (address.reshape(threads, -1) * element // 4).astype(np.int64)
        words_per_thread = min(4, max(1, words.shape[1] * element // 4))
        phase = np.arange(threads).reshape(threads, 1) * words_per_thread // _SHARED_BANKS
        low, span = int(words.min()), int(words.max() - words.min()) + 1
        phase, word = np.divmod(np.unique(phase * span + (words - low)), span)
        ways = np.bincount(phase * _SHARED_BANKS + (word + low) % _SHARED_BANKS).max()
        self.bank_ways.add(float(ways), nbytes)

    # ------------------------------------------------------------ the vector

    def vector(self, flops: float | None) -> np.ndarray:
        target = self.target
        kernels = [k for k in self.kernels if k.stores] or [self.host]
        grid = max(k.grid_size for k in kernels)
        threads = max(k.thread_count for k in kernels)
        warps = math.ceil(threads / target.warp_size) * target.warp_size
        shared = max(k.shared_bytes for k in kernels)
        flops = self.flops if flops is None else float(flops)
        b = self.bytes
        global_bytes = b["global", "L"] + b["global", "S"]
        global_footprint = sum(buffer.static_nbytes() or 0 for buffer in self.global_buffers_read)
        moved = global_bytes + b["shared", "L"] + b["shared", "S"]
        values = {
            "is_gpu": float(target.is_gpu),
            "log_flops": _log(flops),
            "log_grid_size": _log(grid),
            "log_threads_per_group": _log(threads),
            "warp_utilization": _ratio(threads, warps),
            "threads_limit_fraction": threads / target.max_threads_per_group,
            "log_vthreads": _log(max(k.vthreads for k in kernels)),
            "log_parallel_extent": _log(self.parallel_extent),
            "num_kernels": float(len(kernels)),
            "max_loop_depth": float(self.max_depth),
            "log_innermost_extent": _log(self.innermost_extent),
            "log_work_per_thread": _log(self.work_per_thread),
            "vector_lanes": float(self.max_lanes),
            "vectorized_fraction": _ratio(self.vector_bytes, moved),
            "log_unrolled_extent": _log(self.max_unrolled),
            "log_auto_unroll_max_step": _log(self.unroll_step),
            "log_global_load_bytes": _log(b["global", "L"]),
            "log_global_store_bytes": _log(b["global", "S"]),
            "log_shared_load_bytes": _log(b["shared", "L"]),
            "log_shared_store_bytes": _log(b["shared", "S"]),
            "log_local_load_bytes": _log(b["local", "L"]),
            "log_local_store_bytes": _log(b["local", "S"]),
            "log_shared_bytes_per_group": _log(shared),
            "shared_limit_fraction": shared / target.max_shared_memory_bytes,
            "log_local_bytes_per_thread": _log(max(k.local_bytes for k in kernels)),
            "log_arithmetic_intensity": _log(_ratio(flops, global_bytes)),
            "log_barriers_per_group": _log(max(k.barriers for k in kernels)),
            "global_contiguous_fraction": self.contiguous.mean,
            "global_transaction_efficiency": self.efficiency.mean,
            "shared_bank_conflict_ways": self.bank_ways.mean,
            "log_global_reuse": _log(_ratio(b["global", "L"], global_footprint)),
            "log_shared_reuse": _log(_ratio(b["shared", "L"], b["shared", "S"])),
            "log_local_reuse": _log(_ratio(b["local", "L"], b["local", "S"])),
            "predicated_fraction": _ratio(self.predicated_trips, self.store_trips),
        }
        scalars = np.array([values[name] for name in FEATURE_NAMES[: len(values)]], dtype=np.float32)
        return np.concatenate([scalars, self.nest])
