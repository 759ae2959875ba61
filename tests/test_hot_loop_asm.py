"""benchmarks/hot_loop_asm.py: the basic block with the most FMAs, and what it counts there."""

from __future__ import annotations

from benchmarks.hot_loop_asm import basic_blocks, counts

ASSEMBLY = """
tir_main:
\tpushq\t%rbp
\tvfmadd231ps\t%zmm1, %zmm2, %zmm3
.L4:
\tvmovups\t(%rdx), %zmm24
\tvbroadcastss\t-8(%rax), %zmm5
\tvfmadd231ps\t%zmm5, %zmm24, %zmm17
\tvfmadd231ps\t64(%rdx), %zmm5, %zmm16
\tvmovaps\t%zmm4, %zmm21
\tvmovaps\t%zmm4, 8(%rsp)
\tprefetcht0\t4608(%rdx)
\taddq\t$8, %rax
\tcmpq\t%rcx, %rdx
\tjne\t.L4
\tret
"""


def test_the_loop_block_is_found_and_counted():
    blocks = basic_blocks(ASSEMBLY.splitlines())
    hot = max(blocks, key=lambda b: counts(b)["fma"])
    assert hot[0].startswith("vmovups") and hot[-1].startswith("jne")
    assert counts(hot) == {
        "instructions": 10,
        "fma": 2,
        "loads": 3,  # vmovups, vbroadcastss, the FMA with a memory operand (not the store, not the prefetch)
        "broadcasts": 1,
        "stack": 1,
        "moves": 1,
        "prefetch": 1,
    }
