"""The seed notebook's schedule functions (shared/seeds/002), verbatim.

Only the imports differ from the notebook: `tvm` is a namespace made of our
imports, so the notebook's spelling (`tvm.tir.Schedule`) runs unchanged. The
notebook's programs come from the fixture corpus (tests/fixtures/seed_programs.py,
also verbatim); MatmulSmall is its matmul at a size the executor runs quickly.
This file is excluded from formatting to keep the text as the notebook has it.
"""

from __future__ import annotations

from types import SimpleNamespace

import tir
from schedule import Schedule
from tests.fixtures.seed_programs import (  # noqa: F401 - re-exported for the tests
    MyModuleMatmul,
    MyModuleMatmul64 as MatmulSmall,
    MyModuleVecAdd,
    MyModuleWindowSun,
)

N_SMALL = 64

tvm = SimpleNamespace(tir=SimpleNamespace(Schedule=Schedule), script=tir.script)


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


