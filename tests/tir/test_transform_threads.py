"""GPU-oriented block-form passes on the seed's schedules: allocation planning, compaction,
thread-var unification and barrier injection.

Numbers: tir.interpret of each transformed function equals the original on random inputs,
up to inject_thread_sync (serial semantics hold there); after unify_thread_binding the
executor cannot model one merged thread loop, so only the structure is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule
from tir import T
from tir.stmt import Block, BlockRealize, Evaluate, For, SeqStmt
from tir.transform.compact_buffer_allocation import compact_buffer_allocation
from tir.transform.inject_thread_sync import inject_thread_sync
from tir.transform.plan_buffer_allocation import plan_buffer_allocation
from tir.transform.unify_thread_binding import unify_thread_binding


@T.prim_func
def window_sum(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


@T.prim_func
def matmul(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def window_sum_scheduled() -> tir.PrimFunc:
    sch = Schedule(window_sum)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    i_0, i_1 = sch.split(i, [None, 128])
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.x")
    shared = sch.cache_read(block, 0, "shared")
    sch.compute_at(shared, i_1)
    _, threads = sch.split(sch.get_loops(shared)[-1], [None, 128])
    sch.bind(threads, "threadIdx.x")
    return sch.mod["main"]


def matmul_scheduled() -> tir.PrimFunc:
    """tests/schedule/seed_notebook.py's blocking_with_shared at 32^3."""
    sch = Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, 2, 4])
    j0, j1, j2 = sch.split(j, [None, 2, 4])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    tx = sch.fuse(i1, j1)
    sch.reverse_compute_at(c_local, tx)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(tx, "threadIdx.x")
    for read_index in (0, 1):
        cache = sch.cache_read(block=block_c, read_buffer_index=read_index, storage_scope="shared")
        sch.compute_at(cache, k0)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])
        _, threads, vec = sch.split(fused, [None, 4, 4])
        sch.bind(threads, "threadIdx.x")
        sch.vectorize(vec)
    return sch.mod["main"]


def assert_same_numbers(before: tir.PrimFunc, after: tir.PrimFunc, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    inputs = [(rng.random(tuple(int(s) for s in p.shape)) + 0.5).astype("float32") for p in before.params]
    outs_before = [a.copy() for a in inputs]
    outs_after = [a.copy() for a in inputs]
    tir.interpret(before, *outs_before)
    tir.interpret(after, *outs_after)
    for x, y in zip(outs_before, outs_after):
        np.testing.assert_allclose(x, y, rtol=1e-5)


def allocations(func: tir.PrimFunc) -> dict[str, tuple[tir.Buffer, object]]:
    """Buffer name -> (buffer, the loop whose body allocates it, or the block)."""
    found = {}

    def walk(stmt, owner):
        if isinstance(stmt, For):
            body = stmt.body
            if isinstance(body, BlockRealize) and not body.block.iter_vars and body.block.alloc_buffers:
                for b in body.block.alloc_buffers:
                    found[b.name] = (b, stmt)
            walk(body, stmt)
        elif isinstance(stmt, BlockRealize):
            walk(stmt.block, owner)
        elif isinstance(stmt, Block):
            for b in stmt.alloc_buffers:
                found.setdefault(b.name, (b, owner if owner is not None else stmt))
            walk(stmt.body, stmt)
        elif isinstance(stmt, SeqStmt):
            for s in stmt.seq:
                walk(s, owner)

    walk(func.body, None)
    return found


def shapes(func: tir.PrimFunc) -> dict[str, tuple[int, ...]]:
    return {name: buf.static_shape() for name, (buf, _) in allocations(func).items()}


def lowered_through_sync(func: tir.PrimFunc) -> list[tir.PrimFunc]:
    planned = plan_buffer_allocation(func)
    compacted = compact_buffer_allocation(planned)
    synced = inject_thread_sync(compacted)
    return [planned, compacted, synced]


# ---------------------------------------------------------------- window sum


def test_window_sum_plans_shared_above_thread_loops():
    planned = plan_buffer_allocation(window_sum_scheduled())
    _, owner = allocations(planned)["A_shared"]
    assert isinstance(owner, For) and owner.thread_tag == "blockIdx.x"


def test_window_sum_compacts_to_130_indexed_like_tvm():
    compacted = compact_buffer_allocation(plan_buffer_allocation(window_sum_scheduled()))
    assert shapes(compacted)["A_shared"] == (130,)
    text = compacted.script()
    assert "A_shared[ax0_0 * 128 + ax0_1] = A[v0]" in text
    assert "B[vi] = A_shared[i_1] + A_shared[i_1 + 1] + A_shared[i_1 + 2]" in text


def test_window_sum_numbers_through_sync():
    original = window_sum_scheduled()
    for transformed in lowered_through_sync(original):
        assert_same_numbers(original, transformed)
    assert_same_numbers(window_sum, lowered_through_sync(original)[-1])


def test_window_sum_sync_between_fetch_and_compute():
    synced = lowered_through_sync(window_sum_scheduled())[-1]
    text = synced.script()
    assert text.count("T.tvm_storage_sync") == 1
    fetch = text.index('T.block("A_shared")')
    sync = text.index("T.tvm_storage_sync")
    compute = text.index('T.block("B")')
    assert fetch < sync < compute


def test_window_sum_unified_threads():
    unified = unify_thread_binding(lowered_through_sync(window_sum_scheduled())[-1])
    text = unified.script()
    assert "ax0_1" not in text and "i_1" not in text
    assert text.count('thread="threadIdx.x"') == 1
    assert "for threadIdx_x in T.thread_binding(128" in text
    assert "A_shared[ax0_0 * 128 + threadIdx_x] = A[v0]" in text
    assert "A_shared[threadIdx_x + 2]" in text


# ---------------------------------------------------------------- matmul


def test_matmul_compacts_tiles():
    compacted = compact_buffer_allocation(plan_buffer_allocation(matmul_scheduled()))
    found = shapes(compacted)
    # per k0 step: A tile = 8 rows of the thread block x 8 of k; B tile = 8 of k x 8 columns
    assert found["A_shared"] == (8, 8) and found["B_shared"] == (8, 8)
    assert found["C_local"] == (4, 4)
    _, owner = allocations(compacted)["A_shared"]
    assert owner.thread_tag == "blockIdx.y"
    _, owner = allocations(compacted)["C_local"]
    assert owner.thread_tag == "threadIdx.x"


def test_matmul_numbers_through_sync():
    original = matmul_scheduled()
    for transformed in lowered_through_sync(original):
        assert_same_numbers(original, transformed)
    assert_same_numbers(matmul, lowered_through_sync(original)[-1])


def _k0_body(func: tir.PrimFunc) -> SeqStmt:
    found = []

    def visit(node):
        if isinstance(node, For) and node.loop_var.name == "k_0":
            found.append(node.body)

    tir.functor.post_order_visit(func.body, visit)
    (body,) = found
    return body


def test_matmul_sync_at_top_of_k0_and_before_compute():
    synced = lowered_through_sync(matmul_scheduled())[-1]
    body = _k0_body(synced)
    kinds = ["sync" if isinstance(s, Evaluate) else "stmt" for s in body.seq]
    # barrier before overwriting the tiles the previous k0 step still reads, then after the fetches
    assert kinds == ["sync", "stmt", "stmt", "sync", "stmt"]


def test_matmul_unified_threads():
    unified = unify_thread_binding(lowered_through_sync(matmul_scheduled())[-1])
    text = unified.script()
    for tag in ("blockIdx.x", "blockIdx.y", "threadIdx.x"):
        assert text.count(f'thread="{tag}"') == 1
    assert "threadIdx_x" in text and "ax0_ax1_fused_1" not in text


def test_mismatched_thread_extents_name_both_loops():
    sch = Schedule(window_sum)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    i_0, i_1 = sch.split(i, [None, 128])
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.x")
    shared = sch.cache_read(block, 0, "shared")
    sch.compute_at(shared, i_1)
    _, threads = sch.split(sch.get_loops(shared)[-1], [None, 64])
    sch.bind(threads, "threadIdx.x")
    with pytest.raises(ValueError, match=r"'threadIdx.x'.*'i_1' has extent 128.*'ax0_1' has 64"):
        unify_thread_binding(sch.mod["main"])


def test_compacted_regions_name_no_free_loop_vars():
    compacted = compact_buffer_allocation(plan_buffer_allocation(matmul_scheduled()))
    assert "T.int32()" not in compacted.script()
    assert "A_shared[0:8, 0:8]" in compacted.script()


def test_two_kernels_binding_one_loop_var_each_read_their_own_thread_var():
    """Review find: the renaming was substituted into the whole function at the end, so when two
    kernels bound the same loop Var, the first kernel's body named the second kernel's threadIdx."""
    from tir import Buffer, BufferStore, ForKind, IntImm, PrimFunc, Var

    A = Buffer("A", (IntImm(64, "int32"),), "float32")
    tx = Var("tx", "int32")

    def kernel() -> For:
        bx = Var("bx", "int32")
        store = BufferStore(A, tir.const(1.0, "float32"), (bx * 32 + tx,))
        inner = For(tx, IntImm(0, "int32"), IntImm(32, "int32"), ForKind.THREAD_BINDING, store, "threadIdx.x")
        return For(bx, IntImm(0, "int32"), IntImm(2, "int32"), ForKind.THREAD_BINDING, inner, "blockIdx.x")

    func = unify_thread_binding(PrimFunc((A,), SeqStmt((kernel(), kernel()))))
    first, second = func.body.seq
    assert first.body.loop_var is not second.body.loop_var
    for top in (first, second):
        thread_vars = set()
        tir.functor.post_order_visit(
            top,
            lambda n, found=thread_vars: (
                found.add(n) if isinstance(n, Var) and n.name == "threadIdx_x" else None
            ),
        )
        assert thread_vars == {top.body.loop_var}
