"""Integer arithmetic on the IR: simplification, bounds, interval sets, iteration maps.

The schedule and the lowering stand on this package (as on TVM's ``arith``):
``Analyzer`` simplifies index expressions and proves conditions under known
variable ranges; ``eval_set``/``relax_region`` compute the regions that loops
touch; ``detect_iter_map`` recognizes the affine bindings that split and fuse
produce.
"""

from __future__ import annotations

from .analyzer import Analyzer
from .const_bound import NEG_INF, POS_INF, ConstIntBound, const_int_bound
from .int_set import (
    IntervalSet,
    estimate_region_extent,
    eval_set,
    intersect,
    neg_inf,
    pos_inf,
    relax_region,
    union,
)
from .iter_map import IterMark, IterSplitExpr, IterSumExpr, detect_iter_map, iter_map_simplify

__all__ = [
    "NEG_INF",
    "POS_INF",
    "Analyzer",
    "ConstIntBound",
    "IntervalSet",
    "IterMark",
    "IterSplitExpr",
    "IterSumExpr",
    "const_int_bound",
    "detect_iter_map",
    "estimate_region_extent",
    "eval_set",
    "intersect",
    "iter_map_simplify",
    "neg_inf",
    "pos_inf",
    "relax_region",
    "union",
]
