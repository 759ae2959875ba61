"""Annotations the build does not act on are BuildErrors naming the loop or block; known ones still build."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import BuildError, build
from codegen.build import generate_source
from schedule import Schedule
from tests.schedule.util import random_args
from tir import T
from tuner.workloads import reduction_sum


def _schedule() -> tuple[Schedule, object, object]:
    sch = Schedule(reduction_sum(16, 64))
    i, k = sch.get_loops(sch.get_block("B"))
    return sch, i, k


@pytest.mark.parametrize("target", ["c", "cuda", "metal"])
def test_a_known_but_unlowered_key_is_reported_not_dropped(target):
    sch, _, k = _schedule()
    sch.annotate(k, "pragma_unroll_explicit", 1)
    with pytest.raises(BuildError) as error:
        generate_source(sch.mod, target)
    message = str(error.value)
    assert "loop k has annotation 'pragma_unroll_explicit'" in message
    assert "unrolling inside pragma_auto_unroll_max_step is always explicit here" in message
    assert "software_pipeline_stage" in message and "sch.unannotate(" in message


@pytest.mark.parametrize("target", ["c", "cuda", "metal"])
def test_software_pipeline_stage_is_lowered_and_checked(target):
    sch, _, k = _schedule()
    sch.annotate(k, "software_pipeline_stage", [0, 0, 1])
    with pytest.raises(
        BuildError, match="loop k: software_pipeline_stage has 3 entries but the loop body has 1"
    ):
        generate_source(sch.mod, target)


def test_a_typo_gets_the_closest_known_key():
    sch, i, _ = _schedule()
    sch.annotate(i, "pragma_auto_unrol_max_step", 16)
    with pytest.raises(BuildError, match="Did you mean 'pragma_auto_unroll_max_step'"):
        build(sch.mod, "c")


def test_block_annotations_are_reported_with_the_block():
    sch, _, _ = _schedule()
    sch.annotate(sch.get_block("B"), "meta_schedule.unroll_explicit", 16)
    with pytest.raises(
        BuildError,
        match=r"block B has annotation 'meta_schedule.unroll_explicit'.*understands: pragma_auto_unroll",
    ):
        build(sch.mod, "c")


def test_known_annotations_build_and_compute():
    sch, i, k = _schedule()
    sch.annotate(i, "pragma_auto_unroll_max_step", 64)
    sch.annotate(k, "pragma_unroll", True)
    func = sch.mod.main_function()
    arrays, expected = random_args(func), random_args(func)
    tir.interpret(reduction_sum(16, 64).main_function(), *expected)
    build(sch.mod, "c")["main"](*arrays)
    np.testing.assert_allclose(arrays[1], expected[1], rtol=1e-5)


@T.prim_func
def row_sum_in_an_annotated_block(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    with T.block("rows"):
        T.block_attr({"pragma_auto_unroll_max_step": 16})
        for i, k in T.grid(4, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_block_auto_unroll_limits_the_loops_inside_the_block():
    source, _ = generate_source(row_sum_in_an_annotated_block, "c")
    assert source.count("for (") == 1 and "A[i * 8 + 7]" in source  # k unrolled: 8 statements <= 16
    arrays, expected = random_args(row_sum_in_an_annotated_block), random_args(row_sum_in_an_annotated_block)
    tir.interpret(row_sum_in_an_annotated_block, *expected)
    build(row_sum_in_an_annotated_block, "c")["row_sum_in_an_annotated_block"](*arrays)
    np.testing.assert_allclose(arrays[1], expected[1], rtol=1e-5)
