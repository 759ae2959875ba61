"""The first lowering passes (tir.transform): each result has the expected form and the same numbers.

For each pass, a small TensorIR program goes through the passes up to it; the
result's structure is checked (printed script where it is stable) and
``tir.interpret`` of the result must equal ``tir.interpret`` of the original on
random inputs (flattened parameters get flat views of the same arrays). The
whole pipeline ``lower`` then runs on schedules built with ``schedule.Schedule``
and on every executable program of the fixture corpus.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tir
from schedule import Schedule
from tests.fixtures.programs import FIXTURES
from tir import transform as tt
from tir.functor import post_order_visit

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

WINDOW_SUM = """
@T.prim_func
def window_sum(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""

SCALE_100 = """
@T.prim_func
def scale(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for i in range(100):
        with T.block("B"):
            vi = T.axis.spatial(100, i)
            B[vi] = A[vi] * T.float32(2)
"""

TWO_STAGE_LOCAL = """
@T.prim_func
def two_stage(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8), scope="local")
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            T.block_attr({"meta": 1})
            D = T.alloc_buffer((8,), scope="local")
            for j in range(8):
                with T.block("B"):
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = A[vi, vj] + T.float32(1)
            for j in range(8):
                with T.block("D"):
                    vj = T.axis.spatial(8, j)
                    D[vj] = B[vi, vj] * T.float32(3)
            for j in range(8):
                with T.block("C"):
                    vj = T.axis.spatial(8, j)
                    C[vi, vj] = D[vj] - A[vi, vj]
"""


def _random_args(func: tir.PrimFunc, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.buffer_params:
        shape = param.static_shape()
        values = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        arrays.append(values.astype(param.dtype))
    return arrays


def _as_param(array, param):
    """The array as ``param`` takes it: a flat view when the parameter was flattened."""
    if isinstance(param, tir.Buffer) and param.static_shape() != np.shape(array):
        return array.reshape(-1)
    return array


def assert_same_numbers(original: tir.PrimFunc, lowered: tir.PrimFunc, seed: int = 0, args=None) -> None:
    args = _random_args(original, seed) if args is None else args
    expected = [np.array(a, copy=True) for a in args]
    actual = [np.array(a, copy=True) for a in args]
    tir.interpret(original, *expected)
    tir.interpret(lowered, *[_as_param(a, p) for a, p in zip(actual, lowered.params)])
    for param, want, got in zip(original.params, expected, actual):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=param.name)


def _nodes(func: tir.PrimFunc, cls: type) -> list:
    found: list = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def _blocks(func: tir.PrimFunc) -> dict[str, tir.Block]:
    return {b.name: b for b in _nodes(func, tir.Block)}


def _body_text(func: tir.PrimFunc) -> str:
    """The printed function without its decorator, signature and attribute lines."""
    lines = func.script().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def ")) + 1
    while not lines[start].startswith("    ") or "T.func_attr" in lines[start]:
        start += 1
    return "\n".join(line[4:] for line in lines[start:]) + "\n"


# ---------------------------------------------------------------- lower_init_block


def test_lower_init_block_makes_init_an_if_on_the_first_reduction_step():
    func = tir.parse(MATMUL)
    lowered = tt.lower_init_block(func)
    block = _blocks(lowered)["C"]
    assert block.init is None
    first, update = block.body.seq
    assert isinstance(first, tir.IfThenElse) and first.else_case is None
    assert first.condition.script() == "vk == 0"
    assert first.then_case.script() == "C[vi, vj] = T.float32(0.0)"
    assert update.script() == "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]"
    assert_same_numbers(func, lowered)


def test_lower_init_block_tests_every_reduction_iterator_and_keeps_other_blocks():
    func = tir.parse(
        """
@T.prim_func
def full_sum(A: T.Buffer((4, 6), "float32"), B: T.Buffer((1,), "float32"), C: T.Buffer((4, 6), "float32")):
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("RR", [i, j])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vi, vj]
    for i, j in T.grid(4, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[0]
"""
    )
    lowered = tt.lower_init_block(func)
    assert _blocks(lowered)["B"].body.seq[0].condition.script() == "vi == 0 and vj == 0"
    assert _blocks(lowered)["C"] is _blocks(func)["C"]
    assert_same_numbers(func, lowered)


# ---------------------------------------------------------------- convert_blocks_to_opaque


def test_convert_blocks_to_opaque_substitutes_bindings_in_body_and_regions():
    func = tir.parse(SCALE_100)
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 32])
    scheduled = sch.mod["main"]
    opaque = tt.convert_blocks_to_opaque(tt.lower_init_block(scheduled))
    block = _blocks(opaque)["B"]
    realize = _nodes(opaque, tir.BlockRealize)[0]
    assert block.iter_vars == () and realize.iter_values == ()
    assert block.body.script() == "B[i_0 * 32 + i_1] = A[i_0 * 32 + i_1] * T.float32(2.0)"
    assert [r.__repr__() for r in block.reads] == ["A[i_0 * 32 + i_1:i_0 * 32 + i_1 + 1]"]
    assert realize.predicate.script() == "i_0 * 32 + i_1 < 100"
    assert_same_numbers(func, opaque)


def test_convert_blocks_to_opaque_on_matmul_keeps_the_name_and_computes_the_same():
    func = tir.parse(MATMUL)
    opaque = tt.convert_blocks_to_opaque(tt.lower_init_block(func))
    assert set(_blocks(opaque)) == {"root", "C"}
    assert "vi" not in _blocks(opaque)["C"].body.script()
    assert_same_numbers(func, opaque)


# ---------------------------------------------------------------- lower_opaque_block


def _up_to_opaque_lowering(func: tir.PrimFunc) -> tir.PrimFunc:
    return tt.lower_opaque_block(tt.convert_blocks_to_opaque(tt.lower_init_block(func)))


def test_lower_opaque_block_turns_the_predicate_into_an_if():
    func = tir.parse(SCALE_100)
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 32])
    lowered = _up_to_opaque_lowering(sch.mod["main"])
    assert _nodes(lowered, tir.Block) == [] and _nodes(lowered, tir.BlockRealize) == []
    assert _body_text(lowered) == (
        "for i_0, i_1 in T.grid(4, 32):\n"
        "    if i_0 * 32 + i_1 < 100:\n"
        "        B[i_0 * 32 + i_1] = A[i_0 * 32 + i_1] * T.float32(2.0)\n"
    )
    assert_same_numbers(func, lowered)


def test_lower_opaque_block_allocates_at_the_block_and_drops_block_annotations():
    func = tir.parse(TWO_STAGE_LOCAL)
    lowered = _up_to_opaque_lowering(func)
    assert isinstance(lowered.body, tir.Allocate) and lowered.body.buffer.name == "B"
    loop = lowered.body.body
    assert isinstance(loop, tir.For) and isinstance(loop.body, tir.Allocate)
    assert loop.body.buffer.name == "D" and loop.body.buffer.scope == "local"
    assert "block_attr" not in lowered.script() and "meta" not in lowered.script()
    assert_same_numbers(func, lowered)


def test_lower_opaque_block_keeps_loop_annotations():
    func = tir.parse(WINDOW_SUM)
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.annotate(i, "pragma_unroll", 4)
    lowered = _up_to_opaque_lowering(sch.mod["main"])
    assert lowered.body.annotations == {"pragma_unroll": 4}


def test_lower_opaque_block_refuses_blocks_with_iterators():
    with pytest.raises(ValueError, match="block 'B' still has iterators.*convert_blocks_to_opaque"):
        tt.lower_opaque_block(tir.parse(WINDOW_SUM))


# ---------------------------------------------------------------- flatten_buffer


def test_flatten_buffer_linearizes_row_major_and_records_original_shapes():
    func = tir.parse(
        """
@T.prim_func
def permute(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((4, 2, 3), "float32")):
    for i, j, k in T.grid(2, 3, 4):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vk, vi, vj] = A[vi, vj, vk]
"""
    )
    flat = tt.flatten_buffer(_up_to_opaque_lowering(func))
    assert [p.static_shape() for p in flat.params] == [(24,), (24,)]
    assert [p.name for p in flat.params] == ["A", "B"]
    assert flat.attrs["original_shapes"] == {"A": [2, 3, 4], "B": [4, 2, 3]}
    assert _body_text(flat) == (
        "for i, j, k in T.grid(2, 3, 4):\n    B[k * 6 + i * 3 + j] = A[i * 12 + j * 4 + k]\n"
    )
    assert_same_numbers(func, flat)


def test_flatten_buffer_flattens_allocations_too():
    func = tir.parse(TWO_STAGE_LOCAL)
    flat = tt.flatten_buffer(_up_to_opaque_lowering(func))
    shapes = {a.buffer.name: (a.buffer.static_shape(), a.buffer.scope) for a in _nodes(flat, tir.Allocate)}
    assert shapes == {"B": ((32,), "local"), "D": ((8,), "local")}
    for node in _nodes(flat, tir.BufferLoad) + _nodes(flat, tir.BufferStore):
        assert len(node.indices) == 1
    assert_same_numbers(func, flat)


def test_flatten_buffer_refuses_blocks():
    with pytest.raises(ValueError, match="run lower_opaque_block first"):
        tt.flatten_buffer(tir.parse(WINDOW_SUM))


# ---------------------------------------------------------------- simplify


def test_simplify_folds_indices_removes_decided_ifs_and_unit_loops():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i_0, u, i_1 in T.grid(4, 1, 16):
        if (i_0 * 16 + i_1) // 16 < 4:
            B[(i_0 * 16 + i_1) // 16 * 16 + (i_0 * 16 + i_1) % 16 + u] = A[i_0 * 16 + i_1]
        if i_1 >= 16:
            B[0] = T.float32(0)
"""
    )
    simplified = tt.simplify(func)
    assert _body_text(simplified) == (
        "for i_0, i_1 in T.grid(4, 16):\n    B[i_0 * 16 + i_1] = A[i_0 * 16 + i_1]\n"
    )
    assert_same_numbers(func, simplified)


def test_simplify_keeps_undecided_ifs_and_unit_thread_loops():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for i_0, i_1 in T.grid(4, 32):
            if i_0 * 32 + i_1 < 100:
                B[i_0 * 32 + i_1] = A[i_0 * 32 + i_1] + T.float32(1)
"""
    )
    simplified = tt.simplify(func)
    assert isinstance(simplified.body, tir.For) and simplified.body.thread_tag == "blockIdx.x"
    assert len(_nodes(simplified, tir.IfThenElse)) == 1
    assert_same_numbers(func, simplified)


# ---------------------------------------------------------------- the pipeline


def test_lower_matmul_with_init():
    func = tir.parse(MATMUL)
    lowered = tt.lower(func)
    assert _body_text(lowered) == (
        "for i, j, k in T.grid(8, 8, 8):\n"
        "    if k == 0:\n"
        "        C[i * 8 + j] = T.float32(0.0)\n"
        "    C[i * 8 + j] = C[i * 8 + j] + A[i * 8 + k] * B[k * 8 + j]\n"
    )
    assert_same_numbers(func, lowered, seed=1)


def test_lower_dump_sees_every_pass_in_order():
    seen: list[str] = []
    tt.lower(tir.parse(WINDOW_SUM), dump=lambda name, f: seen.append(name) or f.script())
    assert seen == [
        "lower_init_block",
        "convert_blocks_to_opaque",
        "lower_opaque_block",
        "flatten_buffer",
        "simplify",
    ]


def test_lower_window_sum():
    func = tir.parse(WINDOW_SUM)
    lowered = tt.lower(func)
    assert _body_text(lowered) == "for i in range(256):\n    B[i] = A[i] + A[i + 1] + A[i + 2]\n"
    assert_same_numbers(func, lowered)


def test_lower_non_divisible_split_keeps_the_predicate():
    func = tir.parse(SCALE_100)
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("B"))
    i_0, i_1 = sch.split(i, [None, 32])
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.x")
    lowered = tt.lower(sch.mod["main"])
    assert _body_text(lowered) == (
        'for i_0 in T.thread_binding(4, thread="blockIdx.x"):\n'
        '    for i_1 in T.thread_binding(32, thread="threadIdx.x"):\n'
        "        if i_0 * 32 + i_1 < 100:\n"
        "            B[i_0 * 32 + i_1] = A[i_0 * 32 + i_1] * T.float32(2.0)\n"
    )
    assert_same_numbers(func, lowered)


def test_lower_shared_cache_with_cooperative_fetch():
    func = tir.parse(WINDOW_SUM)
    sch = Schedule(func)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    i_0, i_1 = sch.split(i, [None, 64])
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.x")
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i_1)
    fetch = sch.get_loops(cache)[-1]
    _, threads = sch.split(fetch, [None, 64])
    sch.bind(threads, "threadIdx.x")
    lowered = tt.lower(sch.mod["main"])
    (alloc,) = _nodes(lowered, tir.Allocate)
    assert alloc.buffer.scope == "shared" and alloc.buffer.ndim == 1
    assert _nodes(lowered, tir.Block) == []
    assert_same_numbers(func, lowered, seed=3)


def test_lower_local_allocations():
    func = tir.parse(TWO_STAGE_LOCAL)
    lowered = tt.lower(func)
    assert [a.buffer.name for a in _nodes(lowered, tir.Allocate)] == ["D", "B"]
    assert_same_numbers(func, lowered, seed=2)


def _fixture_params(fixtures) -> list:
    return [pytest.param(f, id=f.name) for f in fixtures if f.executable]


@pytest.mark.parametrize("fixture", _fixture_params(FIXTURES))
def test_lower_corpus_program_computes_the_same(fixture):
    func = fixture.func
    lowered = tt.lower(func)
    assert _nodes(lowered, tir.Block) == [] and _nodes(lowered, tir.BlockRealize) == []
    for node in _nodes(lowered, tir.BufferLoad) + _nodes(lowered, tir.BufferStore):
        assert len(node.indices) == 1, node
    args = fixture.inputs(np.random.default_rng(zlib.crc32(fixture.name.encode())))
    assert_same_numbers(func, lowered, args=args)
