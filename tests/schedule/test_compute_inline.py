"""compute_inline and reverse_compute_inline: expected scripts, trace round trips, numbers, errors."""

# ruff: noqa: F821  (script parameters and buffers are names only the parser resolves)

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.compute_inline import (
    InlineBodyError,
    InlinePredicateError,
    NotCoveredError,
    NotSingleProducerError,
    NotSingleReadError,
    NotSingleWriteError,
    OnlyLeafError,
    OpaqueAccessError,
    OtherConsumersError,
    OutputBlockError,
    ReductionInlineError,
)
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# fmt: off
# ---------------------------------------------------------------- fixtures


@T.prim_func
def elementwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_compute_inline(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


@T.prim_func
def elementwise_reverse_compute_inline(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


@T.prim_func
def chain(A: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    C = T.alloc_buffer((32,))
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(32):
        with T.block("C"):
            vi = T.axis.spatial(32, i)
            C[vi] = B[vi] + T.float32(1)
    for i in range(32):
        with T.block("D"):
            vi = T.axis.spatial(32, i)
            D[vi] = C[vi] * C[vi]


@T.prim_func
def chain_inline_all(A: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("D"):
            vi = T.axis.spatial(32, i)
            D[vi] = (A[vi] * T.float32(2) + T.float32(1)) * (A[vi] * T.float32(2) + T.float32(1))


@T.prim_func
def transposed(A: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj, vi] = A[vi, vj] + T.float32(3)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(0.5)


@T.prim_func
def transposed_compute_inline(A: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = (A[vj, vi] + T.float32(3)) * T.float32(0.5)


@T.prim_func
def window(A: T.Buffer((17,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((17,))
    for i in range(17):
        with T.block("B"):
            vi = T.axis.spatial(17, i)
            B[vi] = A[vi] * A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + B[vi + 1]


@T.prim_func
def window_compute_inline(A: T.Buffer((17,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * A[vi] + A[vi + 1] * A[vi + 1]


@T.prim_func
def matmul_bias_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                     bias: T.Buffer((16,), "float32"), E: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    D = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + bias[vj]
    for i, j in T.grid(16, 16):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.max(D[vi, vj], T.float32(0))


@T.prim_func
def matmul_bias_relu_reverse_inline(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                                    bias: T.Buffer((16,), "float32"), E: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0))


@T.prim_func
def matmul_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func
def wide_producer(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(3)


@T.prim_func
def wide_producer_reverse_inline(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 8)
            C[vi] = (A[vi] + T.float32(1)) * T.float32(3)


@T.prim_func
def narrow_producer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(3)


@T.prim_func
def two_consumers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                  D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(3)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] - T.float32(3)


@T.prim_func
def two_consumers_compute_inline(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                                 D: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = (A[vi] + T.float32(1)) * T.float32(3)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = A[vi] + T.float32(1) - T.float32(3)


@T.prim_func
def two_producers(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    C = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] + C[vi]


@T.prim_func
def rewritten_buffer(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("B2"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] + T.float32(1)


@T.prim_func
def odd_producers(A: T.Buffer((16, 4), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    E = T.alloc_buffer((16,))
    F = T.alloc_buffer((16,))
    G = T.alloc_buffer((16,))
    G2 = T.alloc_buffer((16,))
    H = T.alloc_buffer((16, 16))
    S = T.alloc_buffer((16,))
    for i, j in T.grid(16, 4):
        with T.block("collapse"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = A[vi, vj]
    for i in range(15):
        with T.block("shifted"):
            vi = T.axis.spatial(15, i)
            E[vi + 1] = A[vi, 0]
    for i in range(16):
        with T.block("loop_var"):
            vi = T.axis.spatial(16, i)
            F[vi] = A[vi, 0] + T.Cast("float32", T.Let(x * 2, where={x: vi}))
    for i in range(16):
        with T.block("two_stores"):
            vi = T.axis.spatial(16, i)
            G[vi] = A[vi, 1]
            G2[vi] = A[vi, 2]
    for i in range(16):
        with T.block("diagonal"):
            vi = T.axis.spatial(16, i)
            H[vi, vi] = A[vi, 3]
    for i in range(16):
        with T.block("self_read"):
            vi = T.axis.spatial(16, i)
            S[vi] = S[vi] * T.float32(2)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] + E[vi] + F[vi] + G[vi] + G2[vi] + H[vi, vi] + S[vi]


@T.prim_func
def parameter_intermediate(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
                           C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(3)


@T.prim_func
def branchy_consumer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            if vi < 8:
                C[vi] = B[vi]


@T.prim_func
def lonely(A: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def odd_consumers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                  D: T.Buffer((16,), "float32"), E: T.Buffer((16,), "float32")):
    B1 = T.alloc_buffer((17,))
    B2 = T.alloc_buffer((16,))
    B3 = T.alloc_buffer((16,))
    for i in range(17):
        with T.block("B1"):
            vi = T.axis.spatial(17, i)
            B1[vi] = T.float32(2)
    for i in range(16):
        with T.block("B2"):
            vi = T.axis.spatial(16, i)
            B2[vi] = T.float32(3)
    for i in range(16):
        with T.block("B3"):
            vi = T.axis.spatial(16, i)
            B3[vi] = T.float32(4)
    for i in range(16):
        with T.block("window"):
            vi = T.axis.spatial(16, i)
            C[vi] = B1[vi] + B1[vi + 1]
    for i in range(16):
        with T.block("predicated"):
            vi = T.axis.spatial(16, i)
            T.where(i < 15)
            D[vi] = B2[vi]
    for i in range(16):
        with T.block("constant_index"):
            vi = T.axis.spatial(16, i)
            E[vi] = B3[0] + A[vi]
# fmt: on


# ---------------------------------------------------------------- compute_inline


def test_compute_inline_elementwise():
    sch = Schedule(elementwise)
    sch.compute_inline(sch.get_block("B"))
    tir.assert_structural_equal(sch.func, elementwise_compute_inline)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_compute_inline_chain_both_orders():
    for order in (("B", "C"), ("C", "B")):
        sch = Schedule(chain)
        for name in order:
            sch.compute_inline(sch.get_block(name))
        tir.assert_structural_equal(sch.func, chain_inline_all)
        verify_trace_roundtrip(sch, chain)
        assert_same_numbers(chain, sch.mod)


def test_compute_inline_transposed_store():
    sch = Schedule(transposed)
    sch.compute_inline(sch.get_block("B"))
    tir.assert_structural_equal(sch.func, transposed_compute_inline)
    verify_trace_roundtrip(sch, transposed)
    assert_same_numbers(transposed, sch.mod)


def test_compute_inline_window_reads_two_elements():
    sch = Schedule(window)
    sch.compute_inline(sch.get_block("B"))
    tir.assert_structural_equal(sch.func, window_compute_inline)
    verify_trace_roundtrip(sch, window)
    assert_same_numbers(window, sch.mod)


def test_compute_inline_into_two_consumers():
    sch = Schedule(two_consumers)
    sch.compute_inline(sch.get_block("B"))
    tir.assert_structural_equal(sch.func, two_consumers_compute_inline)
    verify_trace_roundtrip(sch, two_consumers)
    assert_same_numbers(two_consumers, sch.mod)


def test_compute_inline_keeps_other_handles():
    sch = Schedule(elementwise)
    consumer = sch.get_block("C")
    i, j = sch.get_loops(consumer)
    sch.compute_inline(sch.get_block("B"))
    assert [sch.get(loop) for loop in sch.get_loops(consumer)] == [sch.get(i), sch.get(j)]
    assert sch.get(consumer).name == "C"


def test_compute_inline_removed_block_handle_is_stale():
    from schedule import StaleHandleError

    sch = Schedule(elementwise)
    producer = sch.get_block("B")
    sch.compute_inline(producer)
    try:
        sch.get(producer)
    except StaleHandleError as err:
        assert "compute_inline" in str(err)
    else:
        raise AssertionError("the handle to the inlined block should be stale")


# ---------------------------------------------------------------- reverse_compute_inline


def test_reverse_compute_inline_elementwise():
    sch = Schedule(elementwise)
    sch.reverse_compute_inline(sch.get_block("C"))
    tir.assert_structural_equal(sch.func, elementwise_reverse_compute_inline)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_reverse_compute_inline_relu_into_bias_after_matmul():
    sch = Schedule(matmul_bias_relu)
    sch.reverse_compute_inline(sch.get_block("E"))
    tir.assert_structural_equal(sch.func, matmul_bias_relu_reverse_inline)
    verify_trace_roundtrip(sch, matmul_bias_relu)
    assert_same_numbers(matmul_bias_relu, sch.mod)


def test_reverse_compute_inline_adds_predicate_for_wider_producer():
    sch = Schedule(wide_producer)
    sch.reverse_compute_inline(sch.get_block("C"))
    tir.assert_structural_equal(sch.func, wide_producer_reverse_inline)
    verify_trace_roundtrip(sch, wide_producer)
    assert_same_numbers(wide_producer, sch.mod)


def test_reverse_then_forward_inline_chain():
    sch = Schedule(chain)
    sch.reverse_compute_inline(sch.get_block("D"))
    sch.compute_inline(sch.get_block("B"))
    verify_trace_roundtrip(sch, chain)
    assert_same_numbers(chain, sch.mod)
    assert set(sch.state.index.blocks) == {"root", "C"}
    assert sch.get(sch.get_block("C")).writes[0].buffer.name == "D"


# ---------------------------------------------------------------- illegal compute_inline


def test_inline_reduction_block_fails():
    sch = Schedule(matmul_relu)
    assert_fails_unchanged(
        sch, ReductionInlineError, "can't inline a reduction block", sch.compute_inline, sch.get_block("C")
    )


def test_inline_output_block_fails():
    sch = Schedule(elementwise)
    assert_fails_unchanged(sch, OutputBlockError, "parameter", sch.compute_inline, sch.get_block("C"))


def test_inline_non_injective_block_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, InlineBodyError, "not injective", sch.compute_inline, sch.get_block("collapse")
    )


def test_inline_shifted_store_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, InlineBodyError, "distinct block iterator", sch.compute_inline, sch.get_block("shifted")
    )


def test_inline_repeated_index_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, InlineBodyError, "distinct block iterator", sch.compute_inline, sch.get_block("diagonal")
    )


def test_inline_value_with_loop_variable_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, InlineBodyError, "neither a block iterator", sch.compute_inline, sch.get_block("loop_var")
    )


def test_inline_two_stores_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, NotSingleWriteError, "writes 2 buffers", sch.compute_inline, sch.get_block("two_stores")
    )


def test_inline_block_reading_its_output_fails():
    sch = Schedule(odd_producers)
    assert_fails_unchanged(
        sch, InlineBodyError, "reads S, the buffer it writes", sch.compute_inline, sch.get_block("self_read")
    )


def test_inline_buffer_with_two_writers_fails():
    sch = Schedule(rewritten_buffer)
    assert_fails_unchanged(
        sch, NotSingleProducerError, "B2 also writes B", sch.compute_inline, sch.get_block("B")
    )


def test_inline_only_block_fails():
    sch = Schedule(lonely)
    assert_fails_unchanged(sch, OnlyLeafError, "only statement", sch.compute_inline, sch.get_block("B"))


# ---------------------------------------------------------------- illegal reverse_compute_inline


def test_reverse_inline_into_reduction_fails():
    sch = Schedule(matmul_relu)
    assert_fails_unchanged(
        sch, ReductionInlineError, "reduction block", sch.reverse_compute_inline, sch.get_block("D")
    )


def test_reverse_inline_reduction_consumer_fails():
    sch = Schedule(matmul_bias_relu)
    assert_fails_unchanged(
        sch, ReductionInlineError, "reduction block", sch.reverse_compute_inline, sch.get_block("C")
    )


def test_reverse_inline_two_produced_inputs_fails():
    sch = Schedule(two_producers)
    assert_fails_unchanged(
        sch, NotSingleReadError, "reads 2 (B, C)", sch.reverse_compute_inline, sch.get_block("D")
    )


def test_reverse_inline_with_other_consumer_fails():
    sch = Schedule(two_consumers)
    assert_fails_unchanged(
        sch, OtherConsumersError, "block D also reads B", sch.reverse_compute_inline, sch.get_block("C")
    )


def test_reverse_inline_window_fails():
    sch = Schedule(odd_consumers)
    assert_fails_unchanged(
        sch, InlineBodyError, "different indices", sch.reverse_compute_inline, sch.get_block("window")
    )


def test_reverse_inline_predicated_consumer_fails():
    sch = Schedule(odd_consumers)
    assert_fails_unchanged(
        sch, InlinePredicateError, "T.where", sch.reverse_compute_inline, sch.get_block("predicated")
    )


def test_reverse_inline_constant_index_fails():
    sch = Schedule(odd_consumers)
    assert_fails_unchanged(
        sch,
        InlineBodyError,
        "distinct block iterator",
        sch.reverse_compute_inline,
        sch.get_block("constant_index"),
    )


def test_reverse_inline_uncovered_consumer_fails():
    sch = Schedule(narrow_producer)
    assert_fails_unchanged(
        sch, NotCoveredError, "writes only [0, 7]", sch.reverse_compute_inline, sch.get_block("C")
    )


def test_reverse_inline_producer_writing_parameter_fails():
    sch = Schedule(parameter_intermediate)
    assert_fails_unchanged(sch, OutputBlockError, "parameter", sch.reverse_compute_inline, sch.get_block("C"))


def test_reverse_inline_branchy_consumer_fails():
    sch = Schedule(branchy_consumer)
    assert_fails_unchanged(
        sch, InlineBodyError, "single store", sch.reverse_compute_inline, sch.get_block("C")
    )


# ---------------------------------------------------------------- reverse inlining through a reshape


@T.prim_func
def scale_then_split_rows(A: T.Buffer((24, 6), "float32"), D: T.Buffer((4, 6, 6), "float32")):
    B = T.alloc_buffer((24, 6))
    for r, c in T.grid(24, 6):
        with T.block("scale"):
            vr, vc = T.axis.remap("SS", [r, c])
            B[vr, vc] = A[vr, vc] * T.float32(3)
    for g, r, c in T.grid(4, 6, 6):
        with T.block("reshape"):
            vg, vr, vc = T.axis.remap("SSS", [g, r, c])
            D[vg, vr, vc] = B[vg * 6 + vr, vc] - T.float32(1)


@T.prim_func
def scale_then_flatten(A: T.Buffer((8, 12), "float32"), D: T.Buffer((4, 2, 12), "float32")):
    B = T.alloc_buffer((8, 12))
    for r, c in T.grid(8, 12):
        with T.block("scale"):
            vr, vc = T.axis.remap("SS", [r, c])
            B[vr, vc] = A[vr, vc] + T.float32(0.5)
    for a, b, c in T.grid(4, 2, 12):
        with T.block("unflatten"):
            va, vb, vc = T.axis.remap("SSS", [a, b, c])
            D[va, vb, vc] = B[((va * 2 + vb) * 12 + vc) // 12, ((va * 2 + vb) * 12 + vc) % 12]


@T.prim_func
def scale_then_diagonal(A: T.Buffer((8, 8), "float32"), D: T.Buffer((2, 4), "float32")):
    B = T.alloc_buffer((8, 8))
    for r, c in T.grid(8, 8):
        with T.block("scale"):
            vr, vc = T.axis.remap("SS", [r, c])
            B[vr, vc] = A[vr, vc] * T.float32(2)
    for a, b in T.grid(2, 4):
        with T.block("diagonal"):
            va, vb = T.axis.remap("SS", [a, b])
            D[va, vb] = B[va * 4 + vb, va * 4 + vb]


def test_reverse_inline_through_an_affine_reshape_inverts_the_read():
    # As in TVM: the consumer reads B at an affine bijection of its iterators; the producer's
    # iteration (r, c) writes D at the inverse, g = r // 6, r' = r % 6.
    sch = Schedule(scale_then_split_rows)
    sch.reverse_compute_inline(sch.get_block("reshape"))
    text = sch.mod["main"].script()
    assert "D[vr // 6, vr % 6, vc]" in text and "reshape" not in text
    verify_trace_roundtrip(sch, scale_then_split_rows)
    assert_same_numbers(scale_then_split_rows, sch.mod)


def test_reverse_inline_through_a_fused_index_reads_its_digits():
    sch = Schedule(scale_then_flatten)
    sch.reverse_compute_inline(sch.get_block("unflatten"))
    assert "unflatten" not in sch.mod["main"].script()
    assert_same_numbers(scale_then_flatten, sch.mod)


def test_reverse_inline_refuses_a_read_that_is_not_a_bijection():
    sch = Schedule(scale_then_diagonal)
    assert_fails_unchanged(
        sch, InlineBodyError, "distinct block iterator", sch.reverse_compute_inline, sch.get_block("diagonal")
    )


@T.prim_func
def scaled_then_logged_by_pointer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("scale"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("shift"):
            vi = T.axis.spatial(16, i)
            T.reads(B[0:16])
            T.writes(C[vi])
            C[vi] = B[vi] + T.Cast("float32", T.call_extern("int32", "count", B.access_ptr("r", extent=16)))


def test_inlining_refuses_a_buffer_reached_through_a_pointer():
    # Inlining removes B's allocation; the pointer passed to log_row would dangle (TVM refuses too).
    sch = Schedule(scaled_then_logged_by_pointer)
    assert_fails_unchanged(
        sch, OpaqueAccessError, "opaque access", sch.compute_inline, sch.get_block("scale")
    )
    assert_fails_unchanged(
        sch, OpaqueAccessError, "B.access_ptr", sch.reverse_compute_inline, sch.get_block("shift")
    )


@T.prim_func
def unit_row_add(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8))
    for i, j in T.grid(1, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(1, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def unit_row_add_reverse_inlined(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    for i, j in T.grid(1, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def test_reverse_inline_keeps_an_iterator_of_extent_one_in_the_store():
    # The consumer's indices are rewritten in the producer's iterators without folding vi (of
    # extent 1) to 0: the store names the same element as its read, as TVM writes it.
    sch = Schedule(unit_row_add)
    sch.reverse_compute_inline(sch.get_block("C"))
    tir.assert_structural_equal(sch.mod["main"], unit_row_add_reverse_inlined)
    verify_trace_roundtrip(sch, unit_row_add)
    assert_same_numbers(unit_row_add, sch.mod["main"])


@T.prim_func
def tiles_read_short(A: T.Buffer((8,), "float32"), C: T.Buffer((7,), "float32")):
    B = T.alloc_buffer((2, 4))
    for t, e in T.grid(2, 4):
        with T.block("B"):
            vt, ve = T.axis.remap("SS", [t, e])
            B[vt, ve] = A[vt * 4 + ve] * T.float32(2)
    for c in range(7):
        with T.block("C"):
            vc = T.axis.spatial(7, c)
            C[vc] = B[vc // 4, vc % 4] + T.float32(1)


@T.prim_func
def tiles_read_short_reverse_inlined(A: T.Buffer((8,), "float32"), C: T.Buffer((7,), "float32")):
    for t, e in T.grid(2, 4):
        with T.block("B"):
            vt, ve = T.axis.remap("SS", [t, e])
            T.where(t * 4 + e < 7)
            C[ve + vt * 4] = A[vt * 4 + ve] * T.float32(2) + T.float32(1)


def test_reverse_inline_of_a_read_that_is_one_to_one_but_not_onto_guards_the_producer():
    # c < 7 reads 7 of the 8 tile elements: the read is inverted over c padded to 8, and the
    # producer writes C only where the inverse lies inside c's domain.
    sch = Schedule(tiles_read_short)
    sch.reverse_compute_inline(sch.get_block("C"))
    tir.assert_structural_equal(sch.mod["main"], tiles_read_short_reverse_inlined)
    verify_trace_roundtrip(sch, tiles_read_short)
    assert_same_numbers(tiles_read_short, sch.mod["main"])


@T.prim_func
def scaled_rows_then_transpose(
    A: T.Buffer((4, 6), "float32"), s: T.Buffer((4,), "float32"), D: T.Buffer((6, 4), "float32")
):
    B = T.alloc_buffer((4, 6))
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + s[vi] * A[vi, vj]
    for j, i in T.grid(6, 4):
        with T.block("D"):
            vj, vi = T.axis.remap("SS", [j, i])
            D[vj, vi] = B[vi, vj]


@T.prim_func
def scaled_rows_then_transpose_reverse_inlined(
    A: T.Buffer((4, 6), "float32"), s: T.Buffer((4,), "float32"), D: T.Buffer((6, 4), "float32")
):
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.init():
                D[vj, vi] = T.float32(0)
            D[vj, vi] = D[vj, vi] + s[vi] * A[vi, vj]


def test_reverse_inline_of_a_copy_into_a_block_with_init_and_spatial_iterators_only():
    # Each instance of B initializes its element and updates it once, so a consumer that copies
    # the element can take both stores over (TVM's batch matmul of reduction extent 1).
    sch = Schedule(scaled_rows_then_transpose)
    sch.reverse_compute_inline(sch.get_block("D"))
    tir.assert_structural_equal(sch.mod["main"], scaled_rows_then_transpose_reverse_inlined)
    verify_trace_roundtrip(sch, scaled_rows_then_transpose)
    assert_same_numbers(scaled_rows_then_transpose, sch.mod["main"])


def test_reverse_inline_into_a_block_with_init_refuses_a_consumer_that_is_not_a_copy():
    text = scaled_rows_then_transpose.script().replace(
        "D[vj_1, vi_1] = B[vi_1, vj_1]", "D[vj_1, vi_1] = B[vi_1, vj_1] * T.float32(2.0)"
    )
    assert "* T.float32(2.0)" in text
    sch = Schedule(tir.parse(text))
    assert_fails_unchanged(
        sch, ReductionInlineError, "T.init()", sch.reverse_compute_inline, sch.get_block("D")
    )


@T.prim_func
def producer_reads_the_output(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + C[7 - vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]


def test_reverse_inline_into_a_producer_that_reads_the_consumers_output_is_refused():
    """Inlined, ``C[vi] = A[vi] + C[7 - vi]`` would read elements of C it has already overwritten
    (half of them wrong), where the original reads C before any is written."""
    sch = Schedule(producer_reads_the_output)
    assert_fails_unchanged(
        sch, InlineBodyError, "reads C, which block C writes", sch.reverse_compute_inline, sch.get_block("C")
    )
