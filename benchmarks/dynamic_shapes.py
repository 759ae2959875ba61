"""What one build for every n costs: a dynamic-shape kernel against builds specialized to each n.

    python benchmarks/dynamic_shapes.py [cuda|c]      (default: cuda)

The tiled matmul of tests/codegen/dynamic_schedules.py (C (n, 32) = A (n, 64) @ B (64, 32), 8 x 32
tiles, A's tile in shared memory) is built once with n symbolic and once per n with n constant
(the same schedule). Each build is checked against numpy, then timed with ``Module.benchmark``;
the table shows both medians and their ratio (dynamic / static: above 1 means the dynamic
kernel is slower). n includes sizes the tile of 8 rows does not divide.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from codegen import build  # noqa: E402
from tests.codegen.dynamic_schedules import matmul_arrays, rows_matmul_shared  # noqa: E402

SIZES = (1000, 4096, 65536, 1000003)


def measure(module, arrays):
    module["main"](*arrays)
    return module.benchmark("main", *arrays, repeat=5)


def main(target: str) -> None:
    dynamic = build(rows_matmul_shared(), target)
    print(f"target {target}, device {dynamic.device_name}")
    print(f"{'n':>9} {'dynamic ms':>11} {'static ms':>10} {'ratio':>6} {'dynamic GFLOPS':>15}")
    for n in SIZES if target == "cuda" else SIZES[:2]:
        a, b, c, expected = matmul_arrays(n)
        static = build(rows_matmul_shared(n), target)
        results = []
        for module in (dynamic, static):
            c[...] = np.nan
            module["main"](a, b, c)
            np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
            results.append(measure(module, (a, b, c)))
        ours, theirs = results
        print(
            f"{n:>9} {ours.seconds * 1e3:>11.4f} {theirs.seconds * 1e3:>10.4f} "
            f"{ours.seconds / theirs.seconds:>6.2f} {ours.gflops:>15.1f}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cuda")
