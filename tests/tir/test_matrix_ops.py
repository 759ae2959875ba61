"""Matrix operations in scripts: tiles as regions, fragment scopes, match_buffer keywords, the executor."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from tir.analysis.block_access import infer_access_regions
from tir.script.errors import ParseError

# Two 8x8 tiles of A times B, accumulated in fragments and stored to C.
TILED = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float16"), B: T.Buffer((8, 8), "float16"), C: T.Buffer((16, 8), "float32")):
    A_frag = T.alloc_buffer((16, 8), "float16", scope="metal.simdgroup")
    B_frag = T.alloc_buffer((8, 8), "float16", scope="metal.simdgroup")
    C_frag = T.alloc_buffer((16, 8), "float32", scope="metal.simdgroup")
    for t in range(2):
        with T.block("tile"):
            vt = T.axis.spatial(2, t)
            T.simdgroup_fill(C_frag[vt * 8:vt * 8 + 8, 0:8], T.float32(0))
            T.simdgroup_load(A_frag[vt * 8:vt * 8 + 8, 0:8], A[vt * 8:vt * 8 + 8, 0:8])
            T.simdgroup_load(B_frag[0:8, 0:8], B[0:8, 0:8])
            T.simdgroup_multiply_accumulate(C_frag[vt * 8:vt * 8 + 8, 0:8], A_frag[vt * 8:vt * 8 + 8, 0:8],
                                            B_frag[0:8, 0:8], C_frag[vt * 8:vt * 8 + 8, 0:8])
            T.simdgroup_store(C_frag[vt * 8:vt * 8 + 8, 0:8], C[vt * 8:vt * 8 + 8, 0:8])
"""


def test_matrix_operations_print_and_parse_back():
    func = tir.parse(TILED)
    text = func.script()
    assert "T.simdgroup_load(A_frag[vt * 8:vt * 8 + 8, 0:8], A[vt * 8:vt * 8 + 8, 0:8])" in text
    assert 'scope="metal.simdgroup"' in text
    tir.assert_structural_equal(tir.parse(text), func)


def test_the_destination_tile_is_a_write_of_the_block():
    func = tir.parse(TILED)
    block = next(b for b in _blocks(func) if b.name == "tile")
    reads, writes = infer_access_regions(block)
    assert {r.buffer.name for r in writes} == {"C_frag", "A_frag", "B_frag", "C"}
    assert {r.buffer.name for r in reads} >= {"A", "B"}


def test_the_executor_runs_matrix_operations():
    rng = np.random.default_rng(0)
    a = (rng.random((16, 8)) - 0.5).astype("float16")
    b = (rng.random((8, 8)) - 0.5).astype("float16")
    c = np.full((16, 8), 7.0, "float32")
    tir.interpret(tir.parse(TILED), a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-6, atol=1e-6)
    assert tir.flop_count(tir.parse(TILED)) == 2 * 2 * 8 * 8 * 8


def test_match_buffer_takes_tvm_layout_keywords():
    func = tir.parse("""
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (8, 8), "float32", scope="shared", offset_factor=1, align=64, strides=[8, 1])
    with T.block("root"):
        T.evaluate(0)
""")
    assert func.params[0].scope == "shared"


def test_match_buffer_strides_need_one_per_dimension():
    with pytest.raises(ParseError, match="buffer A has 2 dimensions but 1 strides"):
        tir.parse("""
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (8, 8), "float32", strides=[1])
    T.evaluate(0)
""")


def test_a_tile_argument_must_be_a_region():
    with pytest.raises(ParseError, match="is not a buffer region"):
        tir.parse("""
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    F = T.alloc_buffer((8, 8), "float32", scope="metal.simdgroup")
    T.simdgroup_load(F[0:8, 0:8], 3)
""")


def _blocks(func):
    found = []
    tir.functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found
