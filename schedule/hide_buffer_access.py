"""unsafe_hide_buffer_access: drop entries from a block's declared reads or writes (TVM's primitive).

A block's ``T.reads``/``T.writes`` drive every dependence analysis of the schedule. An
index buffer read only to compute addresses (``A[IA[vi]]`` reads ``IA``) makes blocks
look dependent where the user knows they are not, and blocks primitives such as
tensorize. This primitive removes the listed entries from the signature; the body is
untouched, so the program computes the same numbers. It is "unsafe" because later
primitives no longer see the hidden accesses: hiding a buffer a block really depends on
lets a later reorder or compute_at break that dependence. That is the caller's call.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block

from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods, access_region
from .instruction import BlockRV, primitive
from .state import ScheduleState


class HideBufferAccessError(ScheduleError):
    """``buf_type`` is not "read" or "write", or an index names no entry of that list."""


@primitive()
def unsafe_hide_buffer_access(
    state: ScheduleState, block: Block, buf_type: str, buf_index_array: list
) -> None:
    # Step 1. "read" or "write", and indices of that list
    if buf_type not in ("read", "write"):
        raise HideBufferAccessError(
            f"buf_type must be 'read' or 'write', got {buf_type!r}: "
            "only declared reads and writes can be hidden",
            block,
        )
    if not isinstance(buf_index_array, (list, tuple)):
        raise ArgumentError(f"buf_index_array must be a list of ints, got {buf_index_array!r}", block)
    for index in buf_index_array:
        try:
            access_region(block, buf_type, index, "buf_index_array")
        except ScheduleError as err:
            raise HideBufferAccessError(err.message, block) from None

    # Step 2. the block without those entries; its body is unchanged
    hidden = set(buf_index_array)
    regions = block.reads if buf_type == "read" else block.writes
    kept = tuple(r for i, r in enumerate(regions) if i not in hidden)
    new_block = replace(block, **{"reads" if buf_type == "read" else "writes": kept})
    state.replace({block: new_block})


class HideBufferAccessMethods(BlockArgumentMethods):
    def unsafe_hide_buffer_access(
        self, block: BlockRV | str, buf_type: str, buf_index_array: list[int]
    ) -> None:
        """Remove entries ``buf_index_array`` of ``block``'s reads (``buf_type`` "read") or writes
        ("write") from its signature, leaving the body as it is.

        ``unsafe_hide_buffer_access`` in TVM. Use it for buffers read only to compute
        addresses (an index array), whose declared access would otherwise make the block
        look dependent on more than it is. Unsafe: later primitives do not see the hidden
        accesses, so they no longer protect them.

        Requirements: ``buf_type`` is "read" or "write"; every index indexes that list.

        Example
        -------
        >>> sch = Schedule(tir.parse(_GATHER))
        >>> sch.unsafe_hide_buffer_access(sch.get_block("B"), "read", [1])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), IA: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
            # with T.block("root"):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[IA[vi]])
                    T.writes(B[vi])
                    B[vi] = A[IA[vi]]
        """
        block = self._block_argument(block)
        return self._run(
            "unsafe_hide_buffer_access", block=block, buf_type=buf_type, buf_index_array=list(buf_index_array)
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_GATHER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), IA: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[IA[vi]], IA[vi])
            T.writes(B[vi])
            B[vi] = A[IA[vi]]
"""
