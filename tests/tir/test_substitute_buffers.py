"""substitute_buffers: a buffer is replaced everywhere the IR names it, its allocation included, so a
primitive that changes a buffer in place (unsafe_set_dtype, set_axis_separator, set_scope) needs no
second pass over the allocations; the result still verifies and computes the same numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import tir
from tir import Allocate, Block, T
from tir.functor import post_order_visit, substitute_buffers
from tir.transform import lower


@T.prim_func
def staged(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def _named_buffers(stmt) -> list:
    """Every buffer the statement names: accessed, in a region, allocated by a block or an Allocate."""
    found = []

    def visit(node):
        if isinstance(node, Block):
            found.extend(node.alloc_buffers)
        elif isinstance(node, Allocate) or hasattr(node, "buffer"):
            found.append(node.buffer)

    post_order_visit(stmt, visit)
    return found


def _intermediate(func):
    return next(b for b in _named_buffers(func.body) if b.name == "B")


def _same_numbers(func, expected_func, shape=(16, 8)):
    a = np.random.default_rng(0).standard_normal(shape).astype("float32")
    got, want = np.zeros_like(a), np.zeros_like(a)
    tir.interpret(func, a, got)
    tir.interpret(expected_func, a, want)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_block_allocation_is_replaced_with_the_accesses():
    old = _intermediate(staged)
    new = replace(old, scope="shared")
    func = replace(staged, body=substitute_buffers(staged.body, {old: new}))
    named = _named_buffers(func.body)
    assert not any(b is old for b in named)
    assert sum(b is new for b in named) >= 5  # allocated once, stored, loaded, in two regions
    tir.verify_well_formed(func)
    _same_numbers(func, staged)


def test_an_allocate_statement_is_replaced_with_the_accesses():
    lowered = lower(staged)
    old = _intermediate(lowered)
    new = replace(old, scope="local")
    func = replace(lowered, body=substitute_buffers(lowered.body, {old: new}))
    assert not any(b is old for b in _named_buffers(func.body))
    assert any(isinstance(n, Allocate) and n.buffer is new for n in _all_nodes(func.body))
    _same_numbers(func, lowered, shape=(128,))  # lowered: the parameters are flat


def _all_nodes(stmt) -> list:
    nodes = []
    post_order_visit(stmt, nodes.append)
    return nodes
