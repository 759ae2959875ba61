"""The seed notebook's programs and schedule functions (shared/seeds/002), verbatim.

Only the imports differ from the notebook: `tvm` is a namespace made of our
imports, so the notebook's spelling (`tvm.tir.Schedule`, `tvm.script.ir_module`)
runs unchanged. This file is excluded from formatting to keep the text as the
notebook has it. MatmulSmall is the notebook's matmul at a size the reference
executor runs quickly.
"""

from __future__ import annotations

from types import SimpleNamespace

import tir
from schedule import Schedule
from tir import T

tvm = SimpleNamespace(tir=SimpleNamespace(Schedule=Schedule), script=tir.script)


@tvm.script.ir_module
class MyModuleVecAdd:
    @T.prim_func
    def main(A: T.Buffer[(1024,), 'float32'],
             B: T.Buffer[(1024,), 'float32'],
             C: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias":True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.spatial((0, 1024), i)
                C[vi] = A[vi] + B[vi]


@tvm.script.ir_module
class MyModuleWindowSun:
    @T.prim_func
    def main(A: T.Buffer[(1026,), 'float32'],
             B: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block('B'):
                vi = T.axis.spatial((0, 1024), i)
                B[vi] = A[vi] + A[vi+1] + A[vi+2]


@tvm.script.ir_module
class MyModuleMatmul:
    @T.prim_func
    def main(A: T.Buffer[(1024, 1024), 'float32'],
             B: T.Buffer[(1024, 1024), 'float32'],
             C: T.Buffer[(1024, 1024), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block('C'):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


N_SMALL = 64


@tvm.script.ir_module
class MatmulSmall:
    @T.prim_func
    def main(A: T.Buffer[(N_SMALL, N_SMALL), 'float32'],
             B: T.Buffer[(N_SMALL, N_SMALL), 'float32'],
             C: T.Buffer[(N_SMALL, N_SMALL), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(N_SMALL, N_SMALL, N_SMALL):
            with T.block('C'):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


# The notebook's schedule functions, verbatim.
def blocking(sch: tvm.tir.Schedule,
    tile_block_x,
    tile_block_y,
    tile_thread_x,
    tile_thread_y,
    tile_k):
    block_C = sch.get_block("C", 'main')
    C_local = sch.cache_write(block_C, 0, 'local')  # 2
    i, j, k = sch.get_loops(block_C)

    i0, i1, i2 = sch.split(i, [None, tile_block_x, tile_thread_x])
    j0, j1, j2 = sch.split(j, [None, tile_block_y, tile_thread_y])
    k0, k1 = sch.split(k, [None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)  # 2
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")

    sch.decompose_reduction(block_C, k0)
    return sch


def cache_read_and_coop_fetcch(sch: tvm.tir.Schedule,
                    block, read_idx, read_loc):
    # cache_read
    read_cache = sch.cache_read(block=block, read_buffer_index=read_idx, storage_scope='shared')
    sch.compute_at(read_cache, read_loc)
    # coo_fetch
    i, j = sch.get_loops(read_cache)[-2:]
    fused = sch.fuse(i, j)
    _, tx, vec = sch.split(fused, [None, 64, 4])
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(vec)


def blocking_with_shared(sch: tvm.tir.Schedule,
            tile_block_x,
            tile_block_y,
            tile_thread_x,
            tile_thread_y,
            tile_k):
    block_C = sch.get_block('C', 'main')
    C_local = sch.cache_write(block_C, 0, 'local')
    i, j, k = sch.get_loops(block_C)

    i0, i1, i2 = sch.split(i, [None, tile_block_x, tile_thread_x])
    j0, j1, j2 = sch.split(j, [None, tile_block_y, tile_thread_y])
    k0, k1 = sch.split(k, [None, tile_k])

    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    tx = sch.fuse(i1, j1)
    sch.reverse_compute_at(C_local, tx)

    sch.bind(i0, 'blockIdx.x')
    sch.bind(j0, 'blockIdx.y')
    sch.bind(tx, 'threadIdx.x')

    cache_read_and_coop_fetcch(sch, block_C, 0, k0)
    cache_read_and_coop_fetcch(sch, block_C, 1, k0)

    # sch.decompose_reduction(block_C, k0)
    return sch


