"""annotate, unannotate, storage_align: expected scripts, trace round trips, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.annotate import (
    AnnotationNotFoundError,
    AnnotationValueError,
    NonAllocatedBufferError,
    StorageAlignAxisError,
    StorageAlignFactorError,
)
from schedule.errors import ArgumentError, NotFoundError
from schedule.index_maps import BufferIndexError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def scale(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def scale_annotated(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in T.serial(16, annotations={"pragma_unroll_explicit": 1, "tags": ["a", 2, 0.5, True]}):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                T.block_attr({"pragma_auto_unroll_max_step": 64, "schedule_rule": "none"})
                B[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def scale_via_shared(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("A_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_shared[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_shared[vi, vj] * T.float32(3)


@T.prim_func
def scale_via_shared_aligned(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("A_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(A_shared[vi, vj])
            T.block_attr({"buffer_dim_align": [[0, 0, 16, 1], [0, 1, 8, 0]]})
            A_shared[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_shared[vi, vj] * T.float32(3)


def _block_and_loops(sch: Schedule, name: str = "B"):
    block = sch.get_block(name)
    return block, sch.get_loops(block)


# ---------------------------------------------------------------- legal


def test_annotate_a_block_and_a_loop():
    sch = Schedule(scale)
    block, (i, _) = _block_and_loops(sch)
    sch.annotate(block, "pragma_auto_unroll_max_step", 16)
    sch.annotate(block, "schedule_rule", "none")
    sch.annotate(block, "pragma_auto_unroll_max_step", 64)  # replaces, keeps the key's place
    sch.annotate(i, "pragma_unroll_explicit", 1)
    sch.annotate(i, "tags", ("a", 2, 0.5, True))
    tir.assert_structural_equal(sch.mod["main"], scale_annotated)
    assert sch.get(i).annotations["tags"] == ["a", 2, 0.5, True]
    assert "sch.annotate(block_or_loop=b0, ann_key='schedule_rule', ann_val='none')" in sch.trace.as_python()
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod)


def test_annotate_with_a_sampled_value():
    sch = Schedule(scale, seed=0)
    block, _ = _block_and_loops(sch)
    depth = sch.sample_categorical([0, 16, 64], [0.5, 0.25, 0.25], decision=2)
    sch.annotate(block, "pragma_auto_unroll_max_step", depth)
    assert sch.get(block).annotations == {"pragma_auto_unroll_max_step": 64}
    assert "ann_val=v3" in sch.trace.as_python()
    verify_trace_roundtrip(sch, scale)


def test_annotations_keep_handles_valid():
    sch = Schedule(scale)
    block, (i, j) = _block_and_loops(sch)
    sch.annotate(block, "k", 1)
    sch.annotate(i, "k", 2)
    assert sch.get(block).name == "B" and sch.get(i).annotations == {"k": 2}
    sch.split(j, [None, 4])


def test_unannotate_removes_only_that_key():
    sch = Schedule(scale)
    block, (i, _) = _block_and_loops(sch)
    sch.annotate(block, "a", 1)
    sch.annotate(block, "b", [1, 2])
    sch.annotate(i, "c", 0.25)
    sch.unannotate(block, "a")
    sch.unannotate(i, "c")
    assert sch.get(block).annotations == {"b": [1, 2]}
    assert sch.get(i).annotations == {}
    verify_trace_roundtrip(sch, scale)


def test_storage_align_records_buffer_dim_align():
    sch = Schedule(scale_via_shared)
    block = sch.get_block("A_shared")
    sch.storage_align(block, 0, 0, 32, 1)
    sch.storage_align(block, 0, -1, 8, 0)  # a negative axis counts from the end
    sch.storage_align(block, 0, 0, 16, 1)  # the same buffer and axis again replaces the entry
    tir.assert_structural_equal(sch.mod["main"], scale_via_shared_aligned)
    assert "sch.storage_align(block=b0, buffer_index=0, axis=0, factor=32, offset=1)" in sch.trace.as_python()
    verify_trace_roundtrip(sch, scale_via_shared)
    assert_same_numbers(scale_via_shared, sch.mod)


def test_annotation_values_may_be_dicts_as_in_tvm():
    sch = Schedule(scale)
    block, (i, _) = _block_and_loops(sch)
    value = {"stage": [0, 1], "order": {"first": 2, "name": "x"}}
    sch.annotate(block, "meta", value)
    sch.annotate(i, "meta", value)
    assert sch.get(block).annotations["meta"] == value and sch.get(i).annotations["meta"] == value
    text = sch.mod.script()
    assert 'T.block_attr({"meta": {' in text
    tir.assert_structural_equal(tir.parse(text), sch.mod)
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod)


# ---------------------------------------------------------------- refused


@pytest.mark.parametrize(
    "value, phrase",
    [
        ({1: "a"}, "a dict can't be stored"),
        (None, "a NoneType can't be stored"),
        ([1, {"a": None}], "a NoneType can't be stored"),
        (tir.Var("x"), "a Var can't be stored"),
    ],
)
def test_annotate_refuses_values_a_trace_cannot_store(value, phrase):
    sch = Schedule(scale)
    block, _ = _block_and_loops(sch)
    assert_fails_unchanged(sch, AnnotationValueError, phrase, sch.annotate, block, "meta", value)


@pytest.mark.parametrize("key", ["", 3])
def test_annotate_refuses_a_key_that_is_not_a_name(key):
    sch = Schedule(scale)
    _, (i, _) = _block_and_loops(sch)
    assert_fails_unchanged(sch, ArgumentError, "non-empty string", sch.annotate, i, key, 1)


def test_unannotate_refuses_a_missing_key_and_lists_the_present_ones():
    sch = Schedule(scale)
    block, _ = _block_and_loops(sch)
    sch.annotate(block, "present", 1)
    assert_fails_unchanged(
        sch,
        AnnotationNotFoundError,
        "no annotation 'absent' (it has: 'present')",
        sch.unannotate,
        block,
        "absent",
    )


def test_unannotate_refuses_a_loop_without_annotations():
    sch = Schedule(scale)
    _, (i, _) = _block_and_loops(sch)
    assert_fails_unchanged(sch, AnnotationNotFoundError, "it has: none", sch.unannotate, i, "pragma")


@pytest.mark.parametrize(
    "args, error, phrase",
    [
        (
            (1, 0, 32, 1),
            BufferIndexError,
            "buffer_index 1 is out of range: block 'A_shared' writes 1 buffer(s): [0] A_shared[",
        ),
        ((-1, 0, 32, 1), BufferIndexError, "buffer_index -1 is out of range"),
        ((0, 2, 32, 1), StorageAlignAxisError, "axis 2 is out of range for its 2 dimensions"),
        ((0, -3, 32, 1), StorageAlignAxisError, "axis -3 is out of range"),
        ((0, 0, 0, 0), StorageAlignFactorError, "factor 0 must be positive"),
        ((0, 0, 32, 32), StorageAlignFactorError, "offset 32 must be in [0, 32)"),
        ((0, 0, 32, -1), StorageAlignFactorError, "offset -1 must be in [0, 32)"),
        ((0, 0, 2.5, 1), ArgumentError, "factor must be an integer"),
    ],
)
def test_storage_align_refuses_bad_arguments(args, error, phrase):
    sch = Schedule(scale_via_shared)
    block = sch.get_block("A_shared")
    assert_fails_unchanged(sch, error, phrase, sch.storage_align, block, *args)


def test_storage_align_refuses_a_parameter_buffer():
    sch = Schedule(scale)
    block, _ = _block_and_loops(sch)
    assert_fails_unchanged(
        sch, NonAllocatedBufferError, "parameter of the function", sch.storage_align, block, 0, 0, 32, 1
    )


def test_storage_align_refuses_a_loop_handle():
    sch = Schedule(scale_via_shared)
    i, _ = sch.get_loops(sch.get_block("A_shared"))
    assert_fails_unchanged(sch, ArgumentError, "needs a block handle", sch.storage_align, i, 0, 0, 32, 1)


def test_annotate_refuses_a_sampled_value_of_another_schedule():
    sch = Schedule(scale)
    other = Schedule(scale)
    block, _ = _block_and_loops(sch)
    foreign = other.get_block("B")
    assert_fails_unchanged(
        sch, NotFoundError, "does not belong to this schedule", sch.annotate, block, "k", foreign
    )


@pytest.mark.parametrize("kind", ["serial", "parallel", "vectorize", "unroll"])
def test_a_loop_is_bound_by_bind_not_by_a_thread_binding_annotation(kind):
    sch = Schedule(scale)
    _, loop = sch.get_loops(sch.get_block("B"))
    if kind != "serial":
        getattr(sch, kind)(loop)
    before, trace_before = sch.mod, str(sch.trace)
    with pytest.raises(ValueError, match="use Schedule.bind"):
        sch.annotate(loop, "thread_binding", "threadIdx.x")
    with pytest.raises(ValueError, match="use Schedule.parallel"):
        sch.unannotate(loop, "thread_binding")
    assert sch.mod is before and str(sch.trace) == trace_before
    assert sch.get(loop).thread_binding is None
    sch.annotate(sch.get_block("B"), "thread_binding", "a block hint")
    assert sch.get(sch.get_block("B")).annotations["thread_binding"] == "a block hint"


def test_a_bound_loop_reports_its_thread():
    sch = Schedule(scale)
    _, loop = sch.get_loops(sch.get_block("B"))
    sch.bind(loop, "threadIdx.x")
    assert sch.get(loop).thread_binding.thread_tag == "threadIdx.x"
