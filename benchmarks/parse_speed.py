"""How long parsing the seed notebook's 1024^3 matmul module takes.

    python benchmarks/parse_speed.py

Prints the median of 20 parses after one warm-up (grammar tables built, modules
imported), split into lark's parse of the text and the whole ``tir.parse``
(tree to IR, region inference included). TVM 0.27 takes 12.0 ms for the same
script on our machines (shared/ANCHORS.md).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from tir.script.parser import _lark  # noqa: E402

MATMUL = """\
@I.ir_module
class MyModuleMatmul():
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
"""


def median_ms(fn, runs: int = 20) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    lark_ms = median_ms(lambda: _lark().parse(MATMUL))
    total_ms = median_ms(lambda: tir.parse(MATMUL))
    print(f"lark parse of the text      {lark_ms:6.2f} ms")
    print(f"tir.parse (text to IR)      {total_ms:6.2f} ms   (median of 20; TVM 0.27: 12.0 ms)")


if __name__ == "__main__":
    main()
