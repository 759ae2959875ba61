"""Annotation primitives: annotate, unannotate, storage_align (TVM's annotate family).

Annotations are key/value hints on a loop (``T.serial(n, annotations={...})``)
or a block (``T.block_attr({...})``) that later passes and the tuner read, such
as ``pragma_auto_unroll_max_step``. They never change what is computed, so the
checks here are about the values: they must be plain data (numbers, strings,
booleans, lists of them) because traces store them as JSON. ``storage_align``
records TVM's ``buffer_dim_align`` block annotation, on which the lowering pads a
buffer's axis so that its stride is ``factor * k + offset`` (to avoid shared-memory
bank conflicts; tir/transform/compact_buffer_allocation.py).
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, For
from tir.transform.compact_buffer_allocation import BUFFER_DIM_ALIGN

from .errors import ArgumentError, ScheduleError, describe
from .index_maps import access_index, access_region
from .instruction import BlockRV, ExprRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class AnnotationValueError(ScheduleError):
    """An annotation value that is not plain data (int, float, str, bool, or a list of them)."""


class AnnotationNotFoundError(ScheduleError):
    """unannotate of a key the loop or block does not have."""


class StorageAlignAxisError(ScheduleError):
    """storage_align's axis is out of range for the buffer's number of dimensions."""


class StorageAlignFactorError(ScheduleError):
    """storage_align's factor is not positive, or its offset is not in [0, factor)."""


class NonAllocatedBufferError(ScheduleError):
    """storage_align of a function parameter: only buffers the function allocates can be padded."""


# ---------------------------------------------------------------- helpers


def _plain_value(value, node: Block | For, key: str):
    """The value as stored in the IR: tuples become lists, so a JSON round trip gives it back equal."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain_value(v, node, key) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain_value(v, node, key) for k, v in value.items()}  # TVM allows dicts too
    raise AnnotationValueError(
        f"can't annotate {describe(node)} with {key!r} = {value!r}: a {type(value).__name__} can't be "
        "stored in a trace. Use an int, float, str, bool, or a list or dict (string keys) of them",
        node,
    )


def _with_annotations(node: Block | For, annotations: dict) -> Block | For:
    return replace(node, annotations=annotations)


def _check_key(key, node: Block | For, primitive_name: str) -> str:
    if not isinstance(key, str) or not key:
        raise ArgumentError(
            f"{primitive_name} of {describe(node)}: the annotation key must be a non-empty string, "
            f"got {key!r}",
            node,
        )
    return key


# ---------------------------------------------------------------- primitives


@primitive()
def annotate(state: ScheduleState, block_or_loop: Block | For, ann_key: str, ann_val) -> None:
    node = block_or_loop
    key = _check_key(ann_key, node, "annotate")
    value = _plain_value(ann_val, node, key)
    state.replace({node: _with_annotations(node, {**node.annotations, key: value})})


@primitive()
def unannotate(state: ScheduleState, block_or_loop: Block | For, ann_key: str) -> None:
    node = block_or_loop
    key = _check_key(ann_key, node, "unannotate")
    if key not in node.annotations:
        present = ", ".join(repr(k) for k in node.annotations) or "none"
        raise AnnotationNotFoundError(
            f"can't unannotate {describe(node)}: it has no annotation {key!r} (it has: {present})",
            node,
        )
    remaining = {k: v for k, v in node.annotations.items() if k != key}
    state.replace({node: _with_annotations(node, remaining)})


def _check_int(value, name: str, block: Block) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(
            f"storage_align of block {block.name!r}: {name} must be an integer, got {value!r}", block
        )
    return value


@primitive()
def storage_align(
    state: ScheduleState, block: Block, buffer_index: int, axis: int, factor: int, offset: int
) -> None:
    buffer_index = access_index(block, "write", buffer_index)
    buffer = access_region(block, "write", buffer_index).buffer
    for name, value in (("axis", axis), ("factor", factor), ("offset", offset)):
        _check_int(value, name, block)
    if not -buffer.ndim <= axis < buffer.ndim:
        raise StorageAlignAxisError(
            f"can't storage_align buffer {buffer.name} of block {block.name!r}: axis {axis} is out of range "
            f"for its {buffer.ndim} dimensions (use 0..{buffer.ndim - 1}, or negative from the end)",
            block,
        )
    axis %= buffer.ndim
    if factor <= 0:
        raise StorageAlignFactorError(
            f"can't storage_align buffer {buffer.name}: factor {factor} must be positive", block
        )
    if not 0 <= offset < factor:
        raise StorageAlignFactorError(
            f"can't storage_align buffer {buffer.name}: offset {offset} must be in [0, {factor}) "
            f"(the stride becomes {factor} * k + offset)",
            block,
        )
    if any(buffer is p for p in state.func.params):
        raise NonAllocatedBufferError(
            f"can't storage_align buffer {buffer.name} of block {block.name!r}: it is a parameter of the "
            "function, whose layout the caller decides. Align a buffer the function allocates "
            "(cache_read/cache_write make one)",
            block,
        )
    entry = [buffer_index, axis, factor, offset]
    entries = [list(e) for e in block.annotations.get(BUFFER_DIM_ALIGN, [])]
    same_axis = [n for n, e in enumerate(entries) if e[:2] == entry[:2]]
    if same_axis:  # as TVM: aligning the same buffer axis again replaces the entry in place
        entries[same_axis[0]] = entry
    else:
        entries.append(entry)
    state.replace({block: _with_annotations(block, {**block.annotations, BUFFER_DIM_ALIGN: entries})})


# ---------------------------------------------------------------- public methods


def _refuse_thread_binding_key(block_or_loop, ann_key: str, instead: str) -> None:
    """A loop's thread binding is its kind, which bind sets and parallel/serial/... replace; an
    annotation of that name would claim a binding the loop does not have (TVM refuses it too)."""
    if isinstance(block_or_loop, LoopRV) and ann_key == "thread_binding":
        raise ValueError(
            f"'thread_binding' is not an annotation of a loop but its binding to a thread: use {instead} "
            "to change it (blocks may carry a 'thread_binding' annotation)"
        )


class AnnotateMethods:
    def annotate(
        self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: int | float | str | bool | list | ExprRV
    ) -> None:
        """Attach the annotation ``ann_key = ann_val`` to a block or a loop (replacing the key's old value).

        ``annotate`` in TVM; Halide's and exo's pragmas play the same role. Passes and the
        tuner read annotations such as ``pragma_auto_unroll_max_step``.

        Requirements: the key is a non-empty string; the value is an int, float, str, bool,
        a list of them, or a sampled value (ExprRV), so that traces can store it.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE))
        >>> sch.annotate(sch.get_block("B"), "pragma_auto_unroll_max_step", 16)
        >>> sch.annotate(sch.get_loops(sch.get_block("B"))[0], "pragma_unroll_explicit", 1)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            # with T.block("root"):
            for i in T.serial(16, annotations={"pragma_unroll_explicit": 1}):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    T.block_attr({"pragma_auto_unroll_max_step": 16})
                    B[vi] = A[vi] * T.float32(3.0)
        """
        _refuse_thread_binding_key(block_or_loop, ann_key, "Schedule.bind")
        return self._run("annotate", block_or_loop=block_or_loop, ann_key=ann_key, ann_val=ann_val)

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove the annotation ``ann_key`` from a block or a loop.

        ``unannotate`` in TVM.

        Requirements: the block or loop has that annotation.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE))
        >>> block = sch.get_block("B")
        >>> sch.annotate(block, "meta", [1, 2])
        >>> sch.unannotate(block, "meta")
        >>> sch.get(block).annotations
        {}
        """
        _refuse_thread_binding_key(block_or_loop, ann_key, "Schedule.parallel or Schedule.serial")
        return self._run("unannotate", block_or_loop=block_or_loop, ann_key=ann_key)

    def storage_align(self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int) -> None:
        """Pad a buffer the block writes so that ``axis`` has a stride of ``factor * k + offset``.

        ``storage_align`` in TVM (stored, as there, in the block annotation
        ``buffer_dim_align`` as ``[[buffer_index, axis, factor, offset], ...]``). Padding a
        shared-memory tile's rows this way avoids bank conflicts. The build pads the
        allocation (compact_buffer_allocation gives the buffer TVM's padded strides); what
        is computed does not change.

        Requirements: ``buffer_index`` is an index into the block's writes; ``axis`` is in
        range (negative counts from the end); ``factor > 0`` and ``0 <= offset < factor``;
        the buffer is allocated by the function, not a parameter.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE_VIA_SHARED))
        >>> sch.storage_align(sch.get_block("A_shared"), 0, 0, 32, 1)
        >>> sch.get(sch.get_block("A_shared")).annotations
        {'buffer_dim_align': [[0, 0, 32, 1]]}
        """
        return self._run(
            "storage_align", block=block, buffer_index=buffer_index, axis=axis, factor=factor, offset=offset
        )


# The programs the examples above schedule (doctest globals: tir, Schedule).
_SCALE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(3.0)
"""

_SCALE_VIA_SHARED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("A_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_shared[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_shared[vi, vj] * T.float32(3.0)
"""
