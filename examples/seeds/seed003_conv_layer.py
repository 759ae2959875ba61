"""Seed 003: Halide's conv_layer app and its schedule, written in our primitives (C target, one core).

The MLIR Transform tutorial ("Reproducing Halide Schedule") takes Halide's
conv_layer: a 3x3 convolution started from the bias, then a ReLU, N=5, CI=CO=128,
W=100, H=80. The algorithm is ``tuner.workloads.conv_layer``; this file holds
the schedule, translated call by call from Halide's::

    relu.split(c, co, ci, vec * tile_w).split(x, xo, xi, tile_h)
        .reorder(ci, xi, xo, y, n, co).vectorize(ci, vec).unroll(ci).unroll(xi)
    conv.compute_at(relu, xo).vectorize(c, vec).unroll(c).unroll(x).unroll(y)
        .update().reorder(c, x, y, r.x, r.y, r.z, n).vectorize(c, vec)
        .unroll(c).unroll(x).unroll(y).unroll(r.x, 2)

Halide's ``vectorize(v, n)`` is our ``split`` then ``vectorize``; its pure
definition and ``update()`` are our init and update blocks after
``decompose_reduction``; Halide's reorder lists loops innermost first, ours
outermost first. Without ``parallel`` (the tutorial leaves it out) the kernel
runs on one core. ``python examples/seeds/seed003_conv_layer.py`` runs the
seed's sizes, checks the result against numpy and prints the loop nest, the
time and the GFLOPS (FLOPs counted from the IR: 1.18e10, where the seed counts
a multiply-add as one). ``benchmarks/seed003_conv_layer.py`` adds the machine's
peak and the tuner's schedule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import tir  # noqa: E402
from codegen import build  # noqa: E402
from schedule import Schedule  # noqa: E402
from tuner import workloads  # noqa: E402

SEED_SIZES = {"N": 5, "H": 80, "W": 100, "CI": 128, "CO": 128}


def halide_schedule(
    mod: tir.IRModule,
    vec: int = 16,
    tile_w: int = 4,
    tile_h: int = 5,
    pack_filter: bool = False,
    prefetch: int = 0,
    channel_unroll: int = 2,
) -> Schedule:
    """Halide's conv_layer schedule (without parallel) applied to ``workloads.conv_layer``.

    ``pack_filter=True`` adds one directive Halide's schedule does not have:
    ``filter.in()`` computed once, stored in the order the tile reads it (a block of
    ``vec * tile_w`` output channels, then the window, then the input channel), so each
    tile streams its filter slice contiguously (256 B per input channel) instead of 256 B
    every 4.6 KB. ``prefetch=d`` (another addition) annotates the input channel loop with
    ``pragma_prefetch``: the C target prefetches its filter vectors ``d`` iterations ahead.
    ``channel_unroll=1`` leaves out ``unroll(r.x, 2)``, which the seed reports changes
    nothing in Halide's own output (the same reading of the schedule, Halide's code).
    """
    sch = Schedule(mod)
    relu, conv = sch.get_block("relu"), sch.get_block("conv")
    # relu.split(c, co, ci, vec * tile_w).split(x, xo, xi, tile_h).reorder(ci, xi, xo, y, n, co)
    n, y, x, c = sch.get_loops(relu)
    co, ci = sch.split(c, [None, vec * tile_w])
    xo, xi = sch.split(x, [None, tile_h])
    sch.reorder(co, n, y, xo, xi, ci)
    # .vectorize(ci, vec).unroll(ci).unroll(xi)
    _vectorize_and_unroll(sch, ci, vec)
    sch.unroll(xi)
    # conv.compute_at(relu, xo); unit loops (n, y) vanish, leaving x, c and the reduction
    sch.compute_at(conv, xo)
    cx, cc, rz, ry, rx = sch.get_loops(conv)[4:]
    # .update().reorder(c, x, y, r.x, r.y, r.z, n).vectorize(c, vec).unroll(c).unroll(x).unroll(r.x, 2)
    sch.reorder(rz, ry, rx, cx, cc)
    init = sch.decompose_reduction(conv, rz)
    _vectorize_and_unroll(sch, cc, vec)
    sch.unroll(cx)
    if channel_unroll > 1:
        rx, rx_inner = sch.split(rx, [None, channel_unroll])
        sch.unroll(rx_inner)
    if prefetch:
        sch.annotate(rx, "pragma_prefetch", prefetch)
    # conv's pure definition: .vectorize(c, vec).unroll(c).unroll(x)
    init_x, init_c = sch.get_loops(init)[4:]
    _vectorize_and_unroll(sch, init_c, vec)
    sch.unroll(init_x)
    if pack_filter:
        _pack_filter(sch, vec * tile_w)
    return sch


def _pack_filter(sch: Schedule, channels: int) -> None:
    """``filter.in()`` at the root: filter[ci][a][b][co] becomes [co // channels][a][b][ci][co % channels]."""
    conv = sch.get_block("conv")
    reads = [region.buffer.name for region in sch.get(conv).reads]
    packed = sch.cache_read(conv, reads.index("filter"), "global")
    sch.transform_layout(packed, ("write", 0), lambda ci, a, b, co: (co // channels, a, b, ci, co % channels))


def _vectorize_and_unroll(sch: Schedule, loop, vec: int) -> None:
    """Halide's ``.vectorize(loop, vec).unroll(loop)``: split by vec, vectorize inside, unroll outside."""
    outer, inner = sch.split(loop, [None, vec])
    sch.vectorize(inner)
    sch.unroll(outer)


def random_inputs(mod: tir.IRModule, seed: int = 0, alignment: int = 64) -> list[np.ndarray]:
    """Random float32 inputs and a garbage-filled output for the four buffers of ``mod``.

    Each array starts on an ``alignment``-byte boundary (a cache line, as Halide's and
    TVM's runtimes allocate); numpy's own large arrays start 16 bytes past one, so every
    64-byte vector access would straddle two lines. ``alignment=0`` keeps numpy's.
    """
    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d.value) for d in b.shape) for b in mod["main"].buffer_params]
    arrays = [rng.uniform(-1, 1, s).astype("float32") for s in shapes[:-1]]
    arrays.append(np.full(shapes[-1], np.nan, "float32"))
    return [aligned_copy(a, alignment) for a in arrays] if alignment else arrays


def aligned_copy(array: np.ndarray, alignment: int) -> np.ndarray:
    """A C-contiguous copy of ``array`` whose data starts on an ``alignment``-byte boundary."""
    storage = np.empty(array.nbytes + alignment, np.uint8)
    start = -storage.ctypes.data % alignment
    copy = storage[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def check(mod: tir.IRModule, arrays: list[np.ndarray], sizes: dict[str, int]) -> None:
    """The output (last array) against float64 numpy."""
    (expected,) = workloads.WORKLOADS["conv_layer"].reference(*arrays[:-1], **sizes)
    np.testing.assert_allclose(arrays[-1], expected, rtol=1e-4, atol=1e-4)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="5,80,100,128,128", help="N,H,W,CI,CO (W a multiple of 5, CO of 64)"
    )
    args = parser.parse_args(argv)
    sizes = dict(zip(SEED_SIZES, (int(s) for s in args.sizes.split(","))))
    mod = workloads.conv_layer(**sizes)
    sch = halide_schedule(mod)
    sch.show(loops_only=True)
    rt = build(sch.mod, "c")
    arrays = random_inputs(mod)
    rt["main"](*arrays)
    check(mod, arrays, sizes)
    result = rt.benchmark("main", *arrays)
    print(f"conv_layer {args.sizes}: {tir.flop_count(mod):.3g} FLOPs, results match numpy")
    print(f"Halide's schedule: {result.seconds * 1e3:.3g} ms, {result.gflops:.1f} GFLOPS on {rt.device_name}")


if __name__ == "__main__":
    main()
