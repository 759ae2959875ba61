"""Launch each hand-scheduled GPU matmul kernel a few times, for Nsight Compute to profile.

    ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:main \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
        python3 benchmarks/profile_kernels.py fp32-64 1024

Kernels (first argument): ``fp32-64`` / ``fp32-128`` (tests/codegen/pipeline_schedules.py's
pipelined fp32 matmul, 64x64x16 with 2 cp.async stages / 128x128x8 with 3), ``frag-64`` /
``frag-128`` (register fragments, ``fragments=True``: 64x64x8 with 8x8 per thread and 3
stages / 128x128x8 with 3), ``mma``
(tuner/space/tensor_core.py's mma.sync fp16 schedule, 4x4x2 fragments, 2x2 warps), ``mma-staged``
(the same with the pipelined staging: 128x128x32 blocks of 4x8x2 fragments, 2x2 warps, 16-byte
cp.async fetches into padded tiles, 3 stages in dynamic shared memory), ``mma-double`` (that with
double-buffered fragment loads), ``wmma-staged`` (WMMA, 4x4x2 fragments, the same staging),
``mma=FRAGS/WARPS/STAGES/LOADS`` (any staged mma.sync tiling, e.g. ``mma=4,8,2/4,2/3/k``). The
result is checked against numpy once, so a profile is never taken of a wrong kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codegen import build  # noqa: E402
from tests.codegen.pipeline_schedules import pipelined_matmul  # noqa: E402
from tests.codegen.tensor_core_schedules import mixed_matmul  # noqa: E402
from tuner.space.tensor_core import tensorized_matmul  # noqa: E402

# The staged tensor-core kernels: name -> (fragments, unit, fragment loads); 128x128x32 blocks.
STAGED = {
    "mma-staged": ((4, 8, 2), "cuda-mma", "step"),
    "mma-double": ((4, 8, 2), "cuda-mma", "k-double"),
    "wmma-staged": ((4, 4, 2), "cuda", "step"),
}


def kernel(name: str, n: int):
    rng = np.random.default_rng(0)
    if name == "mma":
        sch = tensorized_matmul(mixed_matmul(n, n, n), "cuda", (4, 4, 2), (2, 2), 2, "cuda-mma")
        mod, dtype = sch.mod, "float16"
    elif name in STAGED or name.startswith("mma="):
        frags, unit, loads = STAGED.get(name, (None, "cuda-mma", "step"))
        warps, stages = (2, 2), 3
        if name.startswith("mma="):  # mma=FRAGS/WARPS/STAGES/LOADS, e.g. mma=4,8,2/4,2/3/k
            f, w, st, loads = name[4:].split("/")
            frags, warps, stages = tuple(map(int, f.split(","))), tuple(map(int, w.split(","))), int(st)
        staging = {"vector": 8, "unit": unit, "stages": stages, "pad": True, "fragment_loads": loads}
        sch = tensorized_matmul(mixed_matmul(n, n, n), "cuda", frags, warps, **staging)
        mod, dtype = sch.mod, "float16"
    else:
        big = dict(rows=128, cols=128, depth=8, reg=8)
        tiles = {
            "fp32-64": dict(stages=2),
            "fp32-128": dict(stages=3, **big),
            "frag-64": dict(stages=3, depth=8, reg=8, fragments=True),
            "frag-128": dict(stages=3, fragments=True, **big),
        }
        mod, dtype = pipelined_matmul(n, **tiles[name]), "float32"
    a = (rng.random((n, n)) - 0.5).astype(dtype)
    b = (rng.random((n, n)) - 0.5).astype(dtype)
    return build(mod, "cuda"), a, b


def main() -> None:
    name, n = sys.argv[1], int(sys.argv[2])
    module, a, b = kernel(name, n)
    c = np.zeros((n, n), np.float32)
    module["main"](a, b, c)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - expected).max() / np.abs(expected).max() < 5e-3, "wrong result"
    for _ in range(3):
        module["main"](a, b, c)
    print(f"{name} {n}: ok")


if __name__ == "__main__":
    main()
