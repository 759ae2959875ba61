"""set_axis_separator: record TVM's axis separators on a buffer (TVM's primitive of that name).

``axis_separators`` split a buffer's dimensions into groups, each flattened to
one physical axis (``[1]`` on a 2-D buffer asks for 2-D memory, such as a
texture). The primitive puts the separators on the buffer the block reads or
writes at ``buffer_index``, everywhere the function names it, parameters
included; the accesses and the numbers do not change. Our targets have flat
memory only, so the build refuses a buffer with separators (codegen/buffer_layouts.py);
``axis_separators=[]`` takes them off again.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block
from tir.buffer import check_axis_separators
from tir.functor import substitute_buffers

from .errors import ArgumentError
from .index_maps import BlockArgumentMethods, access_region, buffer_position
from .instruction import BlockRV, primitive
from .state import ScheduleState


@primitive()
def set_axis_separator(
    state: ScheduleState, block: Block, buffer_index: int, buffer_index_type: str, axis_separators: list
) -> None:
    # Step 1. the buffer, and separators that fit its dimensions
    old = access_region(block, buffer_index_type, buffer_index).buffer
    if not isinstance(axis_separators, (list, tuple)):
        raise ArgumentError(f"axis_separators is a list of integers, got {axis_separators!r}", block)
    try:
        check_axis_separators(tuple(axis_separators), old.ndim, old.name)
    except ValueError as err:
        raise ArgumentError(f"set_axis_separator: {err}", block) from None
    if tuple(axis_separators) == old.axis_separators:
        return

    # Step 2. the same buffer with the separators, in every place the function names it
    new = replace(old, axis_separators=tuple(axis_separators))
    func = state.func
    body = substitute_buffers(func.body, {old: new})
    params = tuple(new if p is old else p for p in func.params)
    state.set_func(replace(func, params=params, body=body))


class AxisSeparatorMethods(BlockArgumentMethods):
    def set_axis_separator(
        self,
        block: BlockRV | str,
        buffer=None,
        axis_separators: list[int] | str | None = None,
        *separators_after_type,
        buffer_index: int | None = None,
        buffer_index_type: str | None = None,
    ) -> None:
        """Set the axis separators of a buffer ``block`` reads or writes.

        TVM's form: ``set_axis_separator(block, buffer, axis_separators)`` with ``buffer`` as
        ``("write", 0)``, a buffer's name or a Buffer; the trace's forms,
        ``set_axis_separator(block, 0, "write", axis_separators)`` and the keywords
        ``buffer_index=0, buffer_index_type="write"``, work too.

        ``set_axis_separator`` in TVM. A separator ``k`` starts a new physical axis at
        dimension ``k`` when the buffer is flattened (``[1]``: a 2-D buffer stays 2-D,
        for texture memory). The script and the reference executor carry them; the
        C, CUDA and Metal builds refuse a buffer with separators (flat memory only),
        and ``axis_separators=[]`` removes them.

        Requirements: the buffer is one the block reads or writes (an index into that
        list); the separators are increasing integers between 1 and the buffer's number of
        dimensions minus 1.

        Example
        -------
        >>> sch = Schedule(tir.parse(_COPY_VIA_B))
        >>> sch.set_axis_separator("B", ("write", 0), [1])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((4, 8), axis_separators=[1])
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for i_1, j_1 in T.grid(4, 8):
                with T.block("C"):
                    vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                    T.reads(B[vi_1, vj_1])
                    T.writes(C[vi_1, vj_1])
                    C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1.0)
        """
        block = self._block_argument(block)
        if buffer_index is not None:  # the trace's keywords
            index, kind, separators = buffer_index, buffer_index_type, axis_separators
        elif isinstance(axis_separators, str):  # the trace's order: index, "read" | "write", separators
            (index, kind), (separators,) = (buffer, axis_separators), separators_after_type
        else:
            node = self.get(block)
            kind, index = self._prepared("set_axis_separator", lambda: buffer_position(node, buffer))
            separators = axis_separators
        return self._run(
            "set_axis_separator",
            block=block,
            buffer_index=index,
            buffer_index_type=kind,
            axis_separators=list(separators) if isinstance(separators, tuple) else separators,
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_COPY_VIA_B = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
