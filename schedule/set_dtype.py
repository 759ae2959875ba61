"""unsafe_set_dtype: store an intermediate buffer in another element type (TVM's unsafe_set_dtype).

The buffer a block writes at ``buffer_index`` gets ``dtype``; every store into it
casts the value to ``dtype`` and every load casts back to the old type, so the
expressions around keep their types. It is "unsafe" because the conversion may
lose precision or range (float32 -> float16): the program computes something
close to, not the same as, the original, which is the point (a smaller staging
buffer) and the caller's responsibility.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, Buffer, BufferLoad, BufferStore, Cast, Mutator
from tir import dtype as dtypes
from tir.functor import substitute_buffers

from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods, access_region
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class SetDtypeBufferError(ScheduleError):
    """The index names no written buffer, or the buffer is a parameter of the function."""


# ---------------------------------------------------------------- unsafe_set_dtype


class _CastAccesses(Mutator):
    """Casts stores into ``new`` to its type, and loads from it back to ``old_dtype``."""

    def __init__(self, new: Buffer, old_dtype: str):
        self.new = new
        self.old_dtype = old_dtype

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        return Cast(self.old_dtype, load) if load.buffer is self.new else load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        if store.buffer is not self.new:
            return store
        value = store.value
        if isinstance(value, Cast) and isinstance(value.value, BufferLoad) and value.value.buffer is self.new:
            value = value.value  # a load of the buffer itself, cast back above: no conversion needed
        return replace(store, value=value if value.dtype == self.new.dtype else Cast(self.new.dtype, value))


@primitive()
def unsafe_set_dtype(state: ScheduleState, block: Block, buffer_index: int, dtype: str) -> None:
    # Step 1. a written buffer the function allocates, and a known dtype
    old = access_region(block, "write", buffer_index).buffer
    try:
        dtypes.check(dtype)
    except (ValueError, TypeError) as err:
        raise ArgumentError(f"unsafe_set_dtype: {err}", block) from None
    if any(p is old for p in state.func.params):
        raise SetDtypeBufferError(
            f"can't change the dtype of buffer {old.name}: it is a parameter of the function, whose type "
            "the caller decides; change an intermediate buffer (cache_write makes one)",
            block,
        )
    if dtype == old.dtype:
        return

    # Step 2. the buffer in the new type; stores convert to it, loads convert back
    new = replace(old, dtype=dtype)
    body = _CastAccesses(new, old.dtype).visit(substitute_buffers(state.func.body, {old: new}))
    state.set_func(replace(state.func, body=body))


# ---------------------------------------------------------------- public methods


class SetDtypeMethods(BlockArgumentMethods):
    def unsafe_set_dtype(self, block: BlockRV | str, buffer_index: int, dtype: str) -> None:
        """Store the buffer ``block`` writes at ``buffer_index`` as ``dtype``, converting on every
        store and load.

        ``unsafe_set_dtype`` in TVM. The conversions may lose precision (float32 ->
        float16): the numbers change within the new type's rounding.

        Requirements: ``buffer_index`` indexes the block's writes; the buffer is allocated
        by the function (not a parameter); ``dtype`` is a known type.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TWO_STAGES))
        >>> sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((8,), "float16")
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = T.Cast("float16", A[vi] * T.float32(2.0))
            for j in range(8):
                with T.block("C"):
                    vj = T.axis.spatial(8, j)
                    T.reads(B[vj])
                    T.writes(C[vj])
                    C[vj] = T.Cast("float32", B[vj]) + T.float32(1.0)
        """
        block = self._block_argument(block)
        return self._run("unsafe_set_dtype", block=block, buffer_index=buffer_index, dtype=dtype)


# The program the example above schedules (doctest globals: tir, Schedule).
_TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = B[vj] + T.float32(1)
"""
