"""The arithmetic layer: simplification rules, soundness on random values, bounds, interval sets."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    Range,
    Select,
    Sub,
    Var,
    const,
)
from tir.arith import NEG_INF, POS_INF, Analyzer
from tir.arith.int_set import IntervalSet, eval_set, intersect, neg_inf, pos_inf, relax_region, union
from tir.arith.iter_map import detect_iter_map, iter_map_simplify

# ---------------------------------------------------------------- a tiny evaluator


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_EVAL = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b,
    FloorMod: lambda a, b: a % b,
    Div: _trunc_div,
    Mod: lambda a, b: a - b * _trunc_div(a, b),
    Min: min,
    Max: max,
    LT: lambda a, b: int(a < b),
    LE: lambda a, b: int(a <= b),
    GT: lambda a, b: int(a > b),
    GE: lambda a, b: int(a >= b),
    EQ: lambda a, b: int(a == b),
    NE: lambda a, b: int(a != b),
    And: lambda a, b: int(bool(a) and bool(b)),
    Or: lambda a, b: int(bool(a) or bool(b)),
}


def evaluate(e, env: dict) -> int:
    """The value of an integer/bool expression with variables taken from ``env``."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, Not):
        return int(not evaluate(e.a, env))
    if isinstance(e, Select):
        return evaluate(e.true_value if evaluate(e.condition, env) else e.false_value, env)
    return _EVAL[type(e)](evaluate(e.a, env), evaluate(e.b, env))


def ranged(analyzer: Analyzer, name: str, start: int, extent: int) -> Var:
    var = Var(name)
    analyzer.bind(var, Range.from_min_extent(start, extent))
    return var


@pytest.fixture
def ana():
    return Analyzer()


def text(e) -> str:
    return e.script()


# ---------------------------------------------------------------- the rules, by example


def test_sums_flatten_cancel_and_keep_first_appearance_order(ana):
    a, b, x = Var("a"), Var("b"), Var("x")
    assert text(ana.simplify(a * 4 + b * 4 - a * 4)) == "b * 4"
    assert ana.simplify((x + 1) - 1) is x
    assert text(ana.simplify(x + 3 + (a - x) * 2 + 4)) == "a * 2 - x + 7"
    i0, i1 = Var("i_0"), Var("i_1")
    assert text(ana.simplify(2 + i0 * 128 + i1)) == "i_0 * 128 + i_1 + 2"
    assert text(ana.simplify(1 - i1 + i0 * 128 + 1)) == "i_0 * 128 - i_1 + 2"
    assert text(ana.simplify(5 - x)) == "5 - x"
    assert text(ana.simplify((a + b) * 3 - b)) == "a * 3 + b * 2"


def test_split_and_fuse_patterns(ana):
    i0, i1 = ranged(ana, "i_0", 0, 8), ranged(ana, "i_1", 0, 128)
    assert ana.simplify((i0 * 128 + i1) // 128) is i0
    assert ana.simplify((i0 * 128 + i1) % 128) is i1
    fused = ranged(ana, "fused", 0, 64)
    assert ana.simplify(fused // 8 * 8 + fused % 8) is fused
    assert ana.simplify(fused % 8 + fused // 8 * 8) is fused
    # Three-way split put back together.
    assert ana.simplify(fused // 16 * 16 + fused % 16 // 4 * 4 + fused % 4) is fused
    assert text(ana.simplify((fused // 8 * 8 + fused % 8) // 4)) == "fused // 4"


def test_floordiv_and_floormod_by_constants(ana):
    x, y = Var("x"), Var("y")
    assert ana.simplify(x // 1) is x
    assert text(ana.simplify(x % 1)) == "0"
    assert text(ana.simplify(x * 8 // 4)) == "x * 2"
    assert text(ana.simplify((x * 8 + y) // 4)) == "x * 2 + y // 4"
    assert text(ana.simplify((x * 8 + y) % 4)) == "y % 4"
    assert text(ana.simplify(x // 4 // 2)) == "x // 8"
    assert text(ana.simplify(x % 8 % 4)) == "x % 4"
    # TVM's canonical spelling of a middle digit: the modulo first, then the division.
    assert text(ana.simplify(x // 8 % 4)) == "x % 32 // 8"
    assert text(ana.simplify(x % 32 // 8)) == "x % 32 // 8"
    assert text(ana.simplify(x - x // 8 * 8)) == "x % 8"
    assert text(ana.simplify((x + 5) // 4)) == "(x + 5) // 4"
    assert text(ana.simplify((x + 4) // 4)) == "x // 4 + 1"
    assert text(ana.simplify((x + 5) % 4)) == "(x + 1) % 4"
    small = ranged(ana, "s", 0, 4)
    assert text(ana.simplify((x * 4 + small) // 8)) == "x // 2"
    assert text(ana.simplify((x * 4 + small) % 8)) == "x % 2 * 4 + s"
    assert text(ana.simplify((x * 4 + small) // 2)) == "x * 2 + s // 2"
    assert text(ana.simplify(small % 8)) == "s"
    assert text(ana.simplify(small // 8)) == "0"


def test_floordiv_needs_its_side_conditions(ana):
    x, y = Var("x"), Var("y")
    # y may be >= 4 or negative: nothing to drop.
    assert text(ana.simplify((x * 4 + y) // 8)) == "(x * 4 + y) // 8"
    signed = ranged(ana, "n", -3, 6)
    assert text(ana.simplify((x * 4 + signed) // 4)) == "x + n // 4"
    negative = ranged(ana, "m", -3, 3)
    assert text(ana.simplify((x * 4 + negative) // 4)) == "x - 1"


def test_truncating_division_only_with_known_sign(ana):
    x = Var("x")
    assert text(ana.simplify(Div(x * 8, const(4)))) == "T.truncdiv(x * 8, 4)"
    i = ranged(ana, "i", 0, 100)
    assert text(ana.simplify(Div(i * 8 + 3, const(4)))) == "i * 2"
    assert text(ana.simplify(Mod(i * 8 + 3, const(4)))) == "3"
    j = ranged(ana, "j", -50, 50)
    assert text(ana.simplify(Div(j - 49, const(4)))) == "(49 - j) // 4 * -1"


def test_min_max_select_and_comparisons(ana):
    i = ranged(ana, "i", 0, 1024)
    x = Var("x")
    assert ana.simplify(Min(x, x + 1)) is x
    assert text(ana.simplify(Max(x, x + 1))) == "x + 1"
    assert ana.simplify(Min(i, const(2000))) is i
    assert text(ana.simplify(Min(i, const(512)))) == "T.min(i, 512)"
    assert text(ana.simplify(i < 1024)) == "True"
    assert text(ana.simplify(i >= 1024)) == "False"
    assert text(ana.simplify(i < 512)) == "i < 512"
    assert text(ana.simplify(x + 1 < x + 5)) == "True"
    assert text(ana.simplify((i < 1024) & (x < 3))) == "x < 3"
    assert text(ana.simplify(~(x < 3))) == "x >= 3"
    assert text(ana.simplify(Select(i < 2000, x, x + 1))) == "x"
    assert text(ana.simplify(Select(x < 3, i + 1 - 1, i))) == "i"


def test_comparisons_look_through_min_and_max(ana):
    x, y, z = Var("x"), Var("y"), Var("z")
    assert text(ana.simplify(Min(x, y) <= x)) == "True"
    assert text(ana.simplify(Max(x, y) >= y)) == "True"
    assert text(ana.simplify(Min(x, y) <= Max(x, z))) == "True"
    assert text(ana.simplify(Min(x + 1, y) < x + 2)) == "True"
    assert text(ana.simplify(Min(x, y) < x)) == "T.min(x, y) < x"
    assert ana.simplify(Max(Min(x, y), x)) is x
    assert text(ana.simplify(Min(Min(x, y), x))) == "T.min(x, y)"


def test_floats_fold_and_pass_through(ana):
    x = Var("x")
    f = Var("f", "float32")
    assert text(ana.simplify(f + const(1.0) * const(2.0))) == text(f + const(2.0))
    assert text(ana.simplify(const(1.5) + const(2.5))) == text(const(4.0))
    from tir import Buffer, BufferLoad, Ramp

    A = Buffer("A", (64,))
    load = BufferLoad(A, (x + 1 - 1,))
    assert ana.simplify(load * 2.0).a.indices[0] is x
    ramp = Ramp(x * 4 + 0 - 0, const(1), 4)
    assert ana.simplify(ramp).base is not None


def test_can_prove_and_constraint_scope(ana):
    i = ranged(ana, "i", 0, 128)
    x = Var("x")
    assert ana.can_prove(i < 128)
    assert not ana.can_prove(i < 127)
    assert ana.can_prove_equal((i // 8) * 8 + i % 8, i)
    assert not ana.can_prove_equal(i // 8 * 8, i)
    with ana.constraint_scope(x < 100):
        assert ana.can_prove(x < 200)
        assert ana.can_prove(x < 100)
        assert not ana.can_prove(x < 50)
    assert not ana.can_prove(x < 200)
    with ana.constraint_scope((x >= 0) & (x < 8)):
        assert ana.simplify(x % 8) is x


def test_bind_to_an_expression_substitutes_it(ana):
    i0, i1 = ranged(ana, "i_0", 0, 8), ranged(ana, "i_1", 0, 128)
    vi = Var("vi")
    ana.bind(vi, i0 * 128 + i1)
    assert ana.simplify(vi // 128) is i0
    assert ana.const_int_bound(vi).max_value == 1023


def test_const_int_bound(ana):
    i = ranged(ana, "i", 0, 16)
    x = Var("x")
    b = ana.const_int_bound(i * 4 + 3)
    assert (b.min_value, b.max_value) == (3, 63)
    b = ana.const_int_bound(x)
    assert (b.min_value, b.max_value) == (-(2**31), 2**31 - 1)  # the int32 range, as in TVM
    b = ana.const_int_bound(Var("w", "int64") + 1)
    assert b.min_value == NEG_INF and b.max_value == POS_INF
    b = ana.const_int_bound(x % 8)
    assert (b.min_value, b.max_value) == (0, 7)
    b = ana.const_int_bound((i - 8) // 4)
    assert (b.min_value, b.max_value) == (-2, 1)
    b = ana.const_int_bound(Mod(i - 8, const(4)))
    assert (b.min_value, b.max_value) == (-3, 3)
    b = ana.const_int_bound(Min(i, x) * 2)
    assert (b.min_value, b.max_value) == (-(2**32), 30)


# ---------------------------------------------------------------- soundness on random expressions


def random_expr(rng: random.Random, leaves: list, depth: int):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(leaves) if rng.random() < 0.8 else const(rng.randint(-9, 9))
    a, b = random_expr(rng, leaves, depth - 1), random_expr(rng, leaves, depth - 1)
    c = rng.choice([1, 2, 3, 4, 8, 16, -2, -4])
    kind = rng.randrange(12)
    if kind == 0:
        return a + b
    if kind == 1:
        return a - b
    if kind == 2:
        return a * c
    if kind == 3:
        return a * b
    if kind == 4:
        return FloorDiv(a, const(c))
    if kind == 5:
        return FloorMod(a, const(c))
    if kind == 6:
        return Div(a, const(c))
    if kind == 7:
        return Mod(a, const(c))
    if kind == 8:
        return Min(a, b)
    if kind == 9:
        return Max(a, b)
    if kind == 10:
        return Select(a < b, a, b + c)
    return a * c + b * (c * 2) + rng.randint(-5, 5)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_simplify_never_changes_a_value(seed):
    rng = random.Random(seed)
    ana = Analyzer()
    ranges = {}
    for name in "abcd":
        start = rng.choice([0, 0, -4, 3])
        extent = rng.choice([1, 2, 4, 7, 8, 16, 128])
        ranges[ranged(ana, name, start, extent)] = (start, extent)
    free = Var("z")
    expr = random_expr(rng, list(ranges) + [free], depth=4)
    simplified = ana.simplify(expr)
    for _ in range(20):
        env = {v: rng.randrange(s, s + e) for v, (s, e) in ranges.items()}
        env[free] = rng.randint(-50, 50)
        assert evaluate(simplified, env) == evaluate(expr, env), (expr.script(), simplified.script())


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_comparisons_and_bounds_are_sound(seed):
    rng = random.Random(seed)
    ana = Analyzer()
    ranges = {}
    for name in "abc":
        start, extent = rng.choice([0, -3, 5]), rng.choice([1, 3, 8, 32])
        ranges[ranged(ana, name, start, extent)] = (start, extent)
    lhs = random_expr(rng, list(ranges), depth=3)
    rhs = random_expr(rng, list(ranges), depth=2)
    condition = rng.choice([LT, LE, GT, GE, EQ, NE])(lhs, rhs)
    simplified = ana.simplify(condition)
    bound = ana.const_int_bound(lhs)
    proved = ana.can_prove(condition)
    for _ in range(20):
        env = {v: rng.randrange(s, s + e) for v, (s, e) in ranges.items()}
        assert evaluate(simplified, env) == evaluate(condition, env)
        assert bound.min_value <= evaluate(lhs, env) <= bound.max_value
        if proved:
            assert evaluate(condition, env)


def test_simplify_is_idempotent_on_split_shapes(ana):
    f = ranged(ana, "f", 0, 4096)
    x = Var("x")
    for e in [f // 64 % 8, (f % 64) // 8, f // 8 * 8 + f % 8, (x * 4 + f) // 8, x % 12 // 4]:
        once = ana.simplify(e)
        assert text(ana.simplify(once)) == text(once)


# ---------------------------------------------------------------- interval sets


def test_eval_set_interval_arithmetic(ana):
    i0, ax0 = Var("i_0"), Var("ax0")
    s = eval_set(i0 * 128 + ax0, {ax0: Range.from_min_extent(0, 130)}, ana)
    assert text(s.min_value) == "i_0 * 128" and text(s.max_value) == "i_0 * 128 + 129"
    k = Var("k")
    s = eval_set(k * -2 + 10, {k: IntervalSet(const(0), const(4))})
    assert (s.min_value.value, s.max_value.value) == (2, 10)
    s = eval_set(k // 4, {k: Range.from_min_extent(0, 64)})
    assert (s.min_value.value, s.max_value.value) == (0, 15)
    s = eval_set(k % 4, {k: Range.from_min_extent(0, 64)})
    assert (s.min_value.value, s.max_value.value) == (0, 3)
    s = eval_set(k % 16, {k: Range.from_min_extent(32, 8)})
    assert (s.min_value.value, s.max_value.value) == (0, 7)
    s = eval_set(Min(k, const(5)) + Max(k, const(2)), {k: Range.from_min_extent(0, 8)})
    assert (s.min_value.value, s.max_value.value) == (2, 12)
    s = eval_set(Select(k < 3, k, k + 100), {k: Range.from_min_extent(0, 8)})
    assert (s.min_value.value, s.max_value.value) == (0, 107)
    s = eval_set(k * k, {k: Range.from_min_extent(-2, 5)})
    assert (s.min_value.value, s.max_value.value) == (-4, 4)  # interval product of [-2, 2]


def test_eval_set_unbounded_and_points():
    x, y = Var("x"), Var("y")
    s = eval_set(x + y, {x: IntervalSet(const(0), pos_inf)})
    assert text(s.min_value) == "y" and s.max_value is pos_inf
    s = eval_set(x - y, {y: IntervalSet(const(0), pos_inf)})
    assert s.min_value is neg_inf and text(s.max_value) == "x"
    assert eval_set(x * 3, {}).is_point


def test_union_and_intersect(ana):
    vi = Var("vi")
    sets = [IntervalSet.point(vi + d) for d in (1, 0, 2)]
    u = union(sets, ana)
    assert text(u.min_value) == "vi" and text(u.max_value) == "vi + 2"
    inter = intersect([IntervalSet(const(0), const(10)), IntervalSet(const(4), pos_inf)], ana)
    assert (inter.min_value.value, inter.max_value.value) == (4, 10)


def test_relax_region_for_compute_at_and_tiles(ana):
    i0, i1 = ranged(ana, "i_0", 0, 8), Var("i_1")
    vi = i0 * 128 + i1
    dom = {i1: Range.from_min_extent(0, 128)}
    (hull,) = relax_region([vi], dom, ana)
    assert text(hull.min) == "i_0 * 128" and hull.extent.value == 128
    windows = [relax_region([vi + d], dom, ana)[0] for d in range(3)]
    low = union([IntervalSet(r.min, r.min + r.extent - 1) for r in windows], ana)
    assert (
        text(low.min_value) == "i_0 * 128" and text(ana.simplify(low.max_value - low.min_value + 1)) == "130"
    )
    k0, ii1, i2, k1 = Var("k_0"), Var("i_1"), Var("i_2"), Var("k_1")
    tile = relax_region(
        [i0 * 64 + ii1 * 8 + i2, k0 * 8 + k1],
        {ii1: Range.from_min_extent(0, 8), i2: Range.from_min_extent(0, 8), k1: Range.from_min_extent(0, 8)},
        ana,
    )
    assert [text(r.min) for r in tile] == ["i_0 * 64", "k_0 * 8"]
    assert [r.extent.value for r in tile] == [64, 8]
    fused = Var("fused")
    split = relax_region([fused // 8, fused % 8], {fused: Range.from_min_extent(0, 64)})
    assert [(r.min.value, r.extent.value) for r in split] == [(0, 8), (0, 8)]
    with pytest.raises(ValueError, match="shape"):
        relax_region([fused * fused], {fused: IntervalSet(const(0), pos_inf)})
    (cut,) = relax_region([fused * fused], {fused: IntervalSet(const(0), pos_inf)}, shape=[const(100)])
    assert (cut.min.value, cut.extent.value) == (0, 100)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32))
def test_eval_set_contains_every_value(seed):
    rng = random.Random(seed)
    ana = Analyzer()
    fixed = ranged(ana, "p", 0, 10)
    relaxed = {Var(n): (rng.choice([0, -2, 4]), rng.choice([1, 3, 8])) for n in "xy"}
    expr = random_expr(rng, [*relaxed, fixed], depth=3)
    s = eval_set(expr, {v: Range.from_min_extent(a, n) for v, (a, n) in relaxed.items()}, ana)
    for _ in range(30):
        env = {v: rng.randrange(a, a + n) for v, (a, n) in relaxed.items()}
        env[fixed] = rng.randrange(10)
        value = evaluate(expr, env)
        low = -math.inf if s.min_value is neg_inf else evaluate(s.min_value, env)
        high = math.inf if s.max_value is pos_inf else evaluate(s.max_value, env)
        assert low <= value <= high, (expr.script(), s)


# ---------------------------------------------------------------- affine iteration maps


def dom(n: int) -> Range:
    return Range.from_min_extent(0, n)


def pieces(sums) -> list:
    """Each sum as [(source, lower_factor, extent, scale), ...] from the largest scale down."""
    return [[(a.source.to_expr().script(), a.lower_factor, a.extent, a.scale) for a in s.args] for s in sums]


def test_detect_split_fuse_and_reorder_bindings():
    i0, i1, f, i, j = Var("i0"), Var("i1"), Var("f"), Var("i"), Var("j")
    split = detect_iter_map([i0 * 128 + i1], {i0: dom(8), i1: dom(128)}, check_bijective=True)
    assert pieces(split) == [[("i0", 1, 8, 128), ("i1", 1, 128, 1)]]
    assert split[0].extent == 1024
    fused = detect_iter_map([f // 8, f % 8], {f: dom(64)}, check_bijective=True)
    assert pieces(fused) == [[("f", 8, 8, 1)], [("f", 1, 8, 1)]]
    reordered = detect_iter_map([j, i], {i: dom(4), j: dom(6)}, check_bijective=True)
    assert pieces(reordered) == [[("j", 1, 6, 1)], [("i", 1, 4, 1)]]
    three = detect_iter_map([f // 16, f % 16 // 4, f % 4], {f: dom(64)}, check_bijective=True)
    assert pieces(three) == [[("f", 16, 4, 1)], [("f", 4, 4, 1)], [("f", 1, 4, 1)]]


def test_detect_fused_then_split_sources():
    a, b = Var("a"), Var("b")
    # Divisible: the canonical form already splits the fused sum into digits.
    even = detect_iter_map([(a * 4 + b) // 2, (a * 4 + b) % 2], {a: dom(8), b: dom(4)}, check_bijective=True)
    assert pieces(even) == [[("a", 1, 8, 2), ("b", 2, 2, 1)], [("b", 1, 2, 1)]]
    # Not divisible: the fused iterator a * 3 + b (extent 24) is the source of both pieces.
    odd = detect_iter_map([(a * 3 + b) // 2, (a * 3 + b) % 2], {a: dom(8), b: dom(3)}, check_bijective=True)
    assert pieces(odd) == [[("a * 3 + b", 2, 12, 1)], [("a * 3 + b", 1, 2, 1)]]
    assert odd[0].args[0].source.extent == 24


def test_detect_keeps_fixed_terms_in_the_base():
    i0, i1, n = Var("i0"), Var("i1"), Var("n")
    (s,) = detect_iter_map([i0 * 16 + i1 + n * 4 + 3], {i0: dom(4), i1: dom(16)}, check_bijective=True)
    assert pieces([s]) == [[("i0", 1, 4, 16), ("i1", 1, 16, 1)]]
    assert s.base.script() == "n * 4 + 3"


def test_detect_rejections():
    i, i0, i1, f = Var("i"), Var("i0"), Var("i1"), Var("f")
    assert detect_iter_map([i * 2 + i], {i: dom(8)}, check_bijective=True) is None  # steps by 3
    assert detect_iter_map([i * 2 + i], {i: dom(8)}) is not None  # injective, so affine
    overlapping = {i0: dom(8), i1: dom(129)}
    assert detect_iter_map([i0 * 128 + i1], overlapping, check_bijective=True) is None
    assert detect_iter_map([i0 * 128 + i1], overlapping) is None
    assert detect_iter_map([i0 * i1], {i0: dom(8), i1: dom(8)}) is None
    assert detect_iter_map([f // 8, f], {f: dom(64)}) is None  # the same digits twice
    assert detect_iter_map([f // 8], {f: dom(64)}, check_bijective=True) is None  # f % 8 unused
    assert detect_iter_map([f // 8], {f: dom(64)}) is not None
    assert detect_iter_map([i0], {i0: dom(8), i1: dom(4)}, check_bijective=True) is None
    assert detect_iter_map([i0], {i0: dom(8), i1: dom(1)}, check_bijective=True) is not None
    assert detect_iter_map([f // 4], {f: dom(10)}, check_bijective=True) is None  # 3 * 4 != 10
    assert detect_iter_map([15 - i], {i: dom(16)}) is None


def test_detect_non_divisible_split_with_predicate():
    i0, i1 = Var("i0"), Var("i1")
    (s,) = detect_iter_map(
        [i0 * 128 + i1], {i0: dom(8), i1: dom(128)}, predicate=i0 * 128 + i1 < 1000, check_bijective=True
    )
    assert s.extent == 1000


def test_iter_map_simplify():
    f, a, b = Var("f"), Var("a"), Var("b")
    out = iter_map_simplify(
        [f // 8 * 8 + f % 8, f // 8 % 8, (a * 4 + b) // 4], {f: dom(64), a: dom(8), b: dom(4)}
    )
    assert [e.script() for e in out] == ["f", "f // 8", "a"]
    not_affine = iter_map_simplify([a * b + 0], {a: dom(8), b: dom(4)})
    assert [e.script() for e in not_affine] == ["a * b"]


def test_unit_range_binds_to_its_minimum(ana):
    i0, i1 = ranged(ana, "i0", 0, 1), ranged(ana, "i1", 0, 128)
    assert ana.simplify(i0 * 128 + i1) is i1
    j = ranged(ana, "j", 5, 1)
    assert ana.simplify(j + 1).value == 6
