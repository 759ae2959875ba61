"""``show(loops_only=True)``: the loop nest in Halide's print_loop_nest shape, one line per loop and block."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from tir.script.loop_nest import loop_nest
from tuner import workloads


def tiled_matmul() -> Schedule:
    sch = Schedule(workloads.matmul(32, 16, 8))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    sch.unroll(k)
    sch.decompose_reduction(block, k)
    return sch


def test_loops_show_kind_variable_and_inclusive_range():
    assert loop_nest(tiled_matmul().mod) == (
        "blockIdx.x i_0 in [0, 7]:\n"
        "  threadIdx.x i_1 in [0, 3]:\n"
        "    for j in [0, 15]:\n"
        "      C(...) = ...\n"
        "      unrolled k in [0, 7]:\n"
        "        C(...) = ..."
    )


def test_reduction_block_shows_its_init_line():
    assert loop_nest(workloads.matmul(4, 4, 4)) == (
        "for i in [0, 3]:\n"
        "  for j in [0, 3]:\n"
        "    for k in [0, 3]:\n"
        "      C(...) = ...  # init\n"
        "      C(...) = ..."
    )


def test_vectorized_and_parallel_loops_and_two_stages():
    sch = Schedule(workloads.elementwise_chain(64))
    (add,) = sch.get_loops(sch.get_block("T_add"))
    (relu,) = sch.get_loops(sch.get_block("T_relu"))
    sch.parallel(add)
    sch.vectorize(relu)
    lines = loop_nest(sch.mod).splitlines()
    assert lines[:4] == [
        "parallel i in [0, 63]:",
        "  T_add(...) = ...",
        "vectorized i in [0, 63]:",
        "  T_relu(...) = ...",
    ]


def test_module_with_two_functions_names_each():
    mod = workloads.matmul(2, 2, 2)
    two = tir.IRModule({"first": mod["main"], "second": mod["main"]})
    text = loop_nest(two)
    assert text.splitlines()[0] == "first:" and "second:" in text.splitlines()


@pytest.mark.parametrize("show", ["schedule", "module", "function"])
def test_show_loops_only_prints_the_nest(show, capsys):
    sch = tiled_matmul()
    target = {"schedule": sch, "module": sch.mod, "function": sch.mod["main"]}[show]
    target.show(loops_only=True)
    assert capsys.readouterr().out == loop_nest(sch.mod) + "\n"
