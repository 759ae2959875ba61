"""lower_thread_allreduce: expand ``tir.thread_allreduce`` into warp shuffles and shared memory.

GPU pipelines, on flat IR after the generic lowering (TVM's LowerThreadAllreduce).
``cross[0] = T.tir_thread_allreduce(value, "sum", threadIdx_x, ...)`` (made by
lower_cross_thread_reduction) reduces ``value`` over the named thread axes; every
thread of the reduction gets the result. The threads of a block are numbered
linearly (``tid = x + X * (y + Y * z)``), a warp (Metal: a simdgroup) is 32
consecutive ones. The reduction index ``r`` linearizes the reduced axes, the group
index ``g`` the others; each group reduces on its own. Three shapes:

- *One warp segment per group* (the reduced axes are the innermost, and the group
  has at most 32 threads with 32 a multiple of its size, or it is the only group):
  a shuffle-down tree (``__shfl_down_sync`` / ``simd_shuffle_down``) over offsets
  16, 8, ..., 1 below the group's size, then the first lane's value is shuffled to
  every lane. A lane whose partner is past the group's last thread keeps its value
  (the guard for sizes that are not a power of two). Metal with a whole simdgroup
  per group uses ``simd_sum`` / ``simd_max`` / ``simd_min`` / ``simd_product``,
  which leave the result in every lane.
- *Several warps per group* (same layout, more than 32 threads, or a size that is
  a multiple of 32): each warp reduces as above, its first lane writes the warp's
  value to shared memory, a barrier, every thread combines the group's warp values
  in order (so all hold the same bits), a barrier before the buffer is reused.
  A partial last warp (a size that is not a multiple of 32) uses the shuffle mask of
  the lanes that exist.
- *Anything else* (a reduced axis outside a spatial one, or groups that share a
  warp unevenly): a shared-memory tree over ``r`` with a barrier per level.

The statement must be reached by every thread of the block (barriers and shuffles
are collective): under an ``if`` it is a ValueError naming the reduction. (Thread
loops narrower than the launch cannot surround it: unify_thread_binding gives all
loops of a tag in one kernel one extent.)
"""

from __future__ import annotations

import math

from ..analysis.reducer import combine
from ..buffer import Buffer
from ..expr import (
    Add,
    BufferLoad,
    Call,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Select,
    StringImm,
    Var,
    const,
)
from ..function import PrimFunc
from ..functor import Mutator, post_order_visit
from ..stmt import Allocate, BufferStore, For, ForKind, IfThenElse, Stmt, seq
from .inject_thread_sync import storage_sync
from .lower_cross_thread_reduction import ALLREDUCE

SHUFFLE_DOWN = "tir.warp_shuffle_down"  # (mask, value, offset): the value of lane + offset
SHUFFLE = "tir.warp_shuffle"  # (mask, value, lane): the value of lane `lane`
WARP_REDUCE = "tir.warp_reduce"  # (value, kind): the reduction over the whole warp (Metal's simd_sum)
_KINDS = {"sum": Add, "product": Mul, "max": Max, "min": Min}
_AXES = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
_FULL_MASK = 0xFFFFFFFF


class _Kernel:
    """The thread axes of the kernel being rewritten: extent and Var per tag."""

    def __init__(self, nest: For):
        self.extents: dict[str, int] = {}
        self.vars: dict[Var, str] = {}

        def visit(node) -> None:
            if isinstance(node, For) and node.kind is ForKind.THREAD_BINDING:
                extent = int(node.extent.value) if isinstance(node.extent, IntImm) else 0
                self.extents[node.thread_tag] = max(extent, self.extents.get(node.thread_tag, 0))
                self.vars[node.loop_var] = node.thread_tag

        post_order_visit(nest, visit)
        self.index = {tag: var for var, tag in self.vars.items()}

    def extent(self, tag: str) -> int:
        return self.extents.get(tag, 1)

    def idx(self, tag: str) -> PrimExpr:
        return self.index.get(tag, IntImm(0, "int32"))


class _Expander(Mutator):
    def __init__(self, warp_size: int, warp_reduce: bool):
        self.warp_size, self.warp_reduce = warp_size, warp_reduce
        self.kernel: _Kernel | None = None
        self.guard: str | None = None
        self.in_thread_loop = False
        self.scratch: list[Buffer] = []

    def visit_For(self, loop: For) -> Stmt:
        if loop.kind is not ForKind.THREAD_BINDING:
            return self.generic_visit(loop)
        saved = (self.kernel, self.guard, self.in_thread_loop, self.scratch)
        if self.kernel is None:
            self.kernel = _Kernel(loop)
        opens = loop.thread_tag.startswith("threadIdx.") and not self.in_thread_loop
        if opens:
            self.in_thread_loop, self.scratch = True, []
        try:
            new = self.generic_visit(loop)
            if opens:
                body = new.body
                for buffer in reversed(self.scratch):
                    body = Allocate(buffer, body)
                new = (
                    new
                    if body is new.body
                    else For(
                        new.loop_var, new.min, new.extent, new.kind, body, new.thread_tag, new.annotations
                    )
                )
            return new
        finally:
            self.kernel, self.guard, self.in_thread_loop, self.scratch = saved

    def visit_IfThenElse(self, branch: IfThenElse) -> Stmt:
        saved = self.guard
        if self.kernel is not None and self.guard is None:
            self.guard = f"it runs under `if {branch.condition!r}`"
        try:
            return self.generic_visit(branch)
        finally:
            self.guard = saved

    def visit_BufferStore(self, store: BufferStore) -> Stmt:
        value = store.value
        if not (isinstance(value, Call) and value.op == ALLREDUCE):
            return self.generic_visit(store)
        name = store.buffer.name.removeprefix("cross_thread_")
        if self.kernel is None or not self.in_thread_loop:
            raise ValueError(f"the cross-thread reduction into {name} is outside every threadIdx loop")
        if self.guard is not None:
            raise ValueError(
                f"the cross-thread reduction into {name} is not reached by every thread of the block: "
                f"{self.guard}. Every thread must reach its shuffles and barriers; bind the loops around "
                "it to the full thread extents"
            )
        return _Allreduce(self, store, value).lower()


class _Allreduce:
    """One ``tir.thread_allreduce`` and the statements that compute it."""

    def __init__(self, expander: _Expander, store: BufferStore, call: Call):
        self.expander, self.store = expander, store
        kernel, warp = expander.kernel, expander.warp_size
        value, kind, *thread_vars = call.args
        self.kind, self.dtype, self.warp = _KINDS[kind.value], call.dtype, warp
        self.reduced = [tag for tag in _AXES if any(kernel.vars.get(v) == tag for v in thread_vars)]
        self.size = math.prod(kernel.extent(t) for t in self.reduced)
        self.total = math.prod(kernel.extent(t) for t in _AXES)
        self.groups = self.total // self.size
        self.r = _linear(kernel, self.reduced)
        self.g = _linear(kernel, [t for t in _AXES if t not in self.reduced])
        self.tid = _linear(kernel, list(_AXES))
        tag = store.buffer.name.removeprefix("cross_thread_")
        self.value = Buffer(f"red_{tag}", (IntImm(1, "int32"),), self.dtype, "local")
        self.other = Buffer(f"red_{tag}_other", (IntImm(1, "int32"),), self.dtype, "local")
        self.tag, self.input = tag, value
        self.shuffles = False  # whether self.other (a shuffled value) is used

    # ---------------------------------------------------------------- shapes

    def lower(self) -> Stmt:
        inner = [t for t in _AXES if self.expander.kernel.extent(t) > 1]
        reduced = [t for t in self.reduced if self.expander.kernel.extent(t) > 1]
        innermost = inner[: len(reduced)] == reduced
        fits = self.groups == 1 or self.size % self.warp == 0 or self.warp % self.size == 0
        body = self._warps() if innermost and fits else self._shared_tree()
        out = BufferStore(self.store.buffer, self._load(), self.store.indices)
        stmts = Allocate(self.value, seq(self._set(self.input), body, out))
        return Allocate(self.other, stmts) if self.shuffles else stmts

    def _warps(self) -> Stmt:
        whole_warps = self.groups == 1 or self.size % self.warp == 0
        stage = self._warp_stage()
        if self.size <= self.warp:
            if self.expander.warp_reduce and whole_warps:
                return stage
            lane = self.tid % self.warp
            source = lane - (self.r % self.warp)
            return seq(stage, self._set(Call(self.dtype, SHUFFLE, (self._mask(), self._load(), source))))
        warps = -(-self.size // self.warp)
        scratch = self._scratch(self.groups * warps)
        base = self.g * warps
        first_lane = (self.r % self.warp).equal(0)
        write = IfThenElse(first_lane, BufferStore(scratch, self._load(), (base + (self.r // self.warp),)))
        j = Var(f"{self.tag}_warp", "int32")
        gather = For(
            j,
            IntImm(1, "int32"),
            IntImm(warps - 1, "int32"),
            ForKind.SERIAL,
            self._set(combine(self.kind, self._load(), BufferLoad(scratch, (base + j,)))),
        )
        return seq(
            stage, write, storage_sync(), self._set(BufferLoad(scratch, (base,))), gather, storage_sync()
        )

    def _warp_stage(self) -> Stmt:
        """Reduce within each warp (or warp segment); lane 0 of the segment ends with the result."""
        whole_warps = self.groups == 1 or self.size % self.warp == 0
        if self.expander.warp_reduce and whole_warps:
            return self._set(Call(self.dtype, WARP_REDUCE, (self._load(), StringImm(_name(self.kind)))))
        width = min(self.size, self.warp)
        lane = self.r % self.warp
        ragged = self.size % self.warp != 0 and self.size & (self.size - 1) != 0
        active = None
        if ragged:
            last = self.size // self.warp
            partial = IntImm(self.size % self.warp, "int32")
            active = (
                partial if last == 0 else Select((self.r // self.warp).equal(last), partial, const(self.warp))
            )
        stmts = []
        offset = 1 << (width - 1).bit_length() - 1 if width > 1 else 0
        self.shuffles = offset >= 1
        while offset >= 1:
            shuffled = Call(self.dtype, SHUFFLE_DOWN, (self._mask(), self._load(), IntImm(offset, "int32")))
            stmts.append(BufferStore(self.other, shuffled, (IntImm(0, "int32"),)))
            combined = combine(self.kind, self._load(), BufferLoad(self.other, (IntImm(0, "int32"),)))
            if active is not None:
                combined = Select(lane + offset < active, combined, self._load())
            stmts.append(self._set(combined))
            offset //= 2
        return seq(*stmts)

    def _shared_tree(self) -> Stmt:
        scratch = self._scratch(self.groups * self.size)
        base = self.g * self.size
        stmts: list[Stmt] = [BufferStore(scratch, self._load(), (base + self.r,)), storage_sync()]
        offset = 1 << (self.size - 1).bit_length() - 1 if self.size > 1 else 0
        while offset >= 1:
            mine, theirs = (
                BufferLoad(scratch, (base + self.r,)),
                BufferLoad(scratch, (base + self.r + offset,)),
            )
            condition = (self.r < offset) & (self.r + offset < self.size)
            stmts += [
                IfThenElse(
                    condition, BufferStore(scratch, combine(self.kind, mine, theirs), (base + self.r,))
                ),
                storage_sync(),
            ]
            offset //= 2
        stmts += [self._set(BufferLoad(scratch, (base,))), storage_sync()]
        return seq(*stmts)

    # ---------------------------------------------------------------- pieces

    def _mask(self) -> PrimExpr:
        """The lanes that exist in this thread's warp: all 32 but in a partial last warp."""
        full = IntImm(_FULL_MASK, "uint32")
        if self.total % self.warp == 0:
            return full
        partial = IntImm((1 << self.total % self.warp) - 1, "uint32")
        last = self.total // self.warp
        return Select((self.tid // self.warp).equal(last), partial, full)

    def _scratch(self, size: int) -> Buffer:
        buffer = Buffer(f"red_buf_{self.tag}", (IntImm(size, "int32"),), self.dtype, "shared")
        self.expander.scratch.append(buffer)
        return buffer

    def _load(self) -> BufferLoad:
        return BufferLoad(self.value, (IntImm(0, "int32"),))

    def _set(self, value: PrimExpr) -> BufferStore:
        return BufferStore(self.value, value, (IntImm(0, "int32"),))


def _linear(kernel: _Kernel, tags: list[str]) -> PrimExpr:
    index, stride = IntImm(0, "int32"), 1
    for tag in tags:
        if kernel.extent(tag) > 1:
            index = index + kernel.idx(tag) * stride
            stride *= kernel.extent(tag)
    return index


def _name(kind: type) -> str:
    return next(name for name, k in _KINDS.items() if k is kind)


def lower_thread_allreduce(func: PrimFunc, warp_size: int = 32, warp_reduce: bool = False) -> PrimFunc:
    """Expand every ``tir.thread_allreduce``; ``warp_reduce``: the target has whole-warp reductions."""
    return func.with_body(_Expander(warp_size, warp_reduce).visit(func.body))
