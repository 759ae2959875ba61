"""Passes that track which buffers a statement writes see the tiles a matrix operation stores
(simdgroup_load into a fragment, simdgroup_store into shared memory), not only BufferStores."""

from __future__ import annotations

import tir
from tir.transform.inject_software_pipeline import software_pipeline_versions
from tir.transform.inject_thread_sync import inject_thread_sync


def test_a_fragment_loaded_in_an_earlier_stage_gets_a_version_per_stage():
    func = tir.parse(
        """
@T.prim_func
def main(A: T.Buffer((64, 8), "float16"), B: T.Buffer((8, 8), "float16"), C: T.Buffer((8, 8), "float32")):
    Af = T.alloc_buffer((8, 8), "float16", scope="metal.simdgroup")
    Bf = T.alloc_buffer((8, 8), "float16", scope="metal.simdgroup")
    Cf = T.alloc_buffer((8, 8), "float32", scope="metal.simdgroup")
    for k in T.serial(8, annotations={"software_pipeline_stage": [0, 1]}):
        with T.block("load"):
            vk = T.axis.spatial(8, k)
            T.simdgroup_load(Af[0:8, 0:8], A[vk * 8:vk * 8 + 8, 0:8])
        with T.block("mma"):
            vk = T.axis.spatial(8, k)
            T.simdgroup_multiply_accumulate(Cf[0:8, 0:8], Af[0:8, 0:8], Bf[0:8, 0:8], Cf[0:8, 0:8])
"""
    )
    assert {b.name: v for b, v in software_pipeline_versions(func).items()} == {"Af": 2}


def test_a_simdgroup_store_to_shared_memory_is_followed_by_a_barrier():
    func = tir.parse(
        """
@T.prim_func
def main(A: T.Buffer((8, 8), "float16"), C: T.Buffer((8, 8), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        C_shared = T.alloc_buffer((8, 8), "float32", scope="shared")
        Af = T.alloc_buffer((8, 8), "float16", scope="metal.simdgroup")
        Cf = T.alloc_buffer((8, 8), "float32", scope="metal.simdgroup")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("st"):
                T.simdgroup_load(Af[0:8, 0:8], A[0:8, 0:8])
                T.simdgroup_multiply_accumulate(Cf[0:8, 0:8], Af[0:8, 0:8], Af[0:8, 0:8], Cf[0:8, 0:8])
                T.simdgroup_store(Cf[0:8, 0:8], C_shared[0:8, 0:8])
                for i in range(2):
                    C[(tx * 2 + i) // 8, (tx * 2 + i) % 8] = C_shared[(tx * 2 + i) % 8, (tx * 2 + i) // 8]
"""
    )
    lines = inject_thread_sync(func).script().splitlines()
    store = next(n for n, line in enumerate(lines) if "simdgroup_store" in line)
    read = next(n for n, line in enumerate(lines) if "= C_shared[" in line)
    assert any("tvm_storage_sync" in line for line in lines[store:read])
