"""set_axis_separator: separators on the buffer everywhere it is named, printed and parsed back, in
structural equality only when set, the same numbers in the executor, a BuildError on our flat-memory
targets, replay from the trace, and refused requests."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import build
from codegen.errors import BuildError
from schedule import Schedule
from schedule.errors import ArgumentError
from schedule.index_maps import BufferIndexError
from tests.schedule.util import (
    assert_fails_unchanged,
    assert_same_numbers,
    random_args,
    verify_trace_roundtrip,
)
from tir import T


@T.prim_func
def scale_then_shift(A: T.Buffer((4, 6, 8), "float32"), C: T.Buffer((4, 6, 8), "float32")):
    B = T.alloc_buffer((4, 6, 8))
    for i, j, k in T.grid(4, 6, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
    for i, j, k in T.grid(4, 6, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi, vj, vk] + T.float32(1)


def _buffers(func: tir.PrimFunc) -> dict[str, tir.Buffer]:
    found = {p.name: p for p in func.params if isinstance(p, tir.Buffer)}
    tir.post_order_visit(
        func.body,
        lambda n: found.update((b.name, b) for b in n.alloc_buffers) if isinstance(n, tir.Block) else None,
    )
    return found


@pytest.mark.parametrize(("kind", "index", "name"), [("write", 0, "B"), ("read", 0, "A"), ("read", 0, "B")])
def test_separators_land_on_the_buffer_everywhere(kind, index, name):
    sch = Schedule(scale_then_shift)
    block = "C" if (kind, name) == ("read", "B") else "B"
    sch.set_axis_separator(block, index, kind, [1, 2])
    func = sch.mod["main"]
    assert _buffers(func)[name].axis_separators == (1, 2)
    regions = [
        r for b in ("B", "C") for r in (*sch.get(sch.get_block(b)).reads, *sch.get(sch.get_block(b)).writes)
    ]
    assert {r.buffer.axis_separators for r in regions if r.buffer.name == name} == {(1, 2)}
    assert "axis_separators=[1, 2]" in func.script()
    tir.assert_structural_equal(tir.parse(func.script()), func)
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_same_numbers(scale_then_shift, func)


def test_structural_equality_sees_separators_only_when_set():
    sch = Schedule(scale_then_shift)
    sch.set_axis_separator("B", 0, "write", [1])
    assert not tir.structural_equal(sch.mod["main"], scale_then_shift)
    assert tir.structural_hash(sch.mod["main"]) != tir.structural_hash(scale_then_shift)
    sch.set_axis_separator("B", 0, "write", [])
    tir.assert_structural_equal(sch.mod["main"], scale_then_shift)
    assert tir.structural_hash(sch.mod["main"]) == tir.structural_hash(scale_then_shift)
    assert "axis_separators" not in sch.mod["main"].script()


def test_build_refuses_separators_and_builds_once_they_are_removed():
    sch = Schedule(scale_then_shift)
    sch.set_axis_separator("B", 0, "write", [1])
    with pytest.raises(BuildError, match=r"buffer B has axis_separators \[1\].*flat memory only"):
        build(sch.mod, "c")
    sch.set_axis_separator("B", 0, "write", [])
    args = random_args(scale_then_shift, seed=5)
    build(sch.mod, "c")["main"](*args)
    np.testing.assert_allclose(args[1], args[0] * np.float32(2) + np.float32(1), rtol=1e-6)


@pytest.mark.parametrize(
    ("separators", "phrase"),
    [([3], "between 1 and 2"), ([2, 1], "increasing"), ([0], "between 1"), ("1", "list")],
)
def test_refuses_separators_that_do_not_fit(separators, phrase):
    sch = Schedule(scale_then_shift)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, ArgumentError, phrase, sch.set_axis_separator, block, 0, "write", separators)


@pytest.mark.parametrize(("index", "kind"), [(1, "write"), (0, "output")])
def test_refuses_a_bad_buffer_index_or_type(index, kind):
    sch = Schedule(scale_then_shift)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, BufferIndexError, "", sch.set_axis_separator, block, index, kind, [1])


def test_script_refuses_separators_that_are_not_integers():
    text = scale_then_shift.script().replace('"float32"), C:', '"float32", axis_separators=["x"]), C:')
    with pytest.raises(tir.ParseError, match="axis_separators is a list of integers"):
        tir.parse(text)


def test_script_refuses_separators_out_of_the_buffers_rank():
    text = scale_then_shift.script().replace('"float32"), C:', '"float32", axis_separators=[3]), C:')
    with pytest.raises(tir.ParseError, match=r"has 3 dimensions; axis_separators \[3\] must be increasing"):
        tir.parse(text)


def test_tvm_form_takes_the_buffer_as_a_pair_or_a_name():
    by_pair, by_name, by_index = (Schedule(scale_then_shift) for _ in range(3))
    by_pair.set_axis_separator(by_pair.get_block("B"), ("write", 0), [1])
    by_name.set_axis_separator("B", "B", [1])
    by_index.set_axis_separator("B", 0, "write", [1])
    tir.assert_structural_equal(by_pair.mod, by_index.mod)
    tir.assert_structural_equal(by_name.mod, by_index.mod)
    verify_trace_roundtrip(by_name, scale_then_shift)
