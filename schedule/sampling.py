"""Sampling primitives: the random decisions a tuner's search space is made of.

``sample_perfect_tile`` draws tile sizes whose product is a loop's extent,
``sample_categorical`` draws one of several candidates, and
``sample_compute_location`` draws a loop to ``compute_at`` a block under. Each
takes the schedule's seeded ``random.Random`` (so the same seed gives the same
schedule) and an optional ``decision`` that replays a choice instead of drawing
one; the decision taken is recorded in the trace, which is how the tuner's
mutators change a schedule (``Trace.with_decision``). Semantics follow TVM's
``sampling.cc``, except that tilings are drawn uniformly among the valid ones.
"""

from __future__ import annotations

import random
from functools import lru_cache

from tir import Block, For, IterKind
from tir.functor import collect_vars

from .analysis import can_apply, consumers_of
from .errors import ArgumentError, ScheduleError
from .instruction import BlockRV, ExprRV, LoopRV, Sampled, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class InvalidTileError(ScheduleError):
    """sample_perfect_tile: bad ``n`` or ``max_innermost_factor``, or no tiling satisfies them."""


class InvalidDecisionError(ScheduleError):
    """A replayed decision does not fit the sampling primitive's candidates."""


class InvalidProbabilitiesError(ScheduleError):
    """sample_categorical: the probabilities are negative, sum to zero, or mismatch the candidates."""


# ---------------------------------------------------------------- sample_perfect_tile


@lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


@lru_cache(maxsize=65536)
def _count_tilings(extent: int, n: int, max_innermost: int) -> int:
    """How many ordered ``n``-factor products equal ``extent`` with the last factor <= ``max_innermost``."""
    if n == 1:
        return 1 if extent <= max_innermost else 0
    return sum(_count_tilings(extent // d, n - 1, max_innermost) for d in _divisors(extent))


def _draw_tiling(rng: random.Random, extent: int, n: int, max_innermost: int) -> list[int]:
    """One tiling, uniform over all valid ones: each factor drawn weighted by the completions it allows."""
    factors = []
    for remaining in range(n, 1, -1):
        pick = rng.randrange(_count_tilings(extent, remaining, max_innermost))
        for d in _divisors(extent):
            weight = _count_tilings(extent // d, remaining - 1, max_innermost)
            if pick < weight:
                break
            pick -= weight
        factors.append(d)
        extent //= d
    return factors + [extent]


def _check_tiling(loop: For, extent: int, n: int, max_innermost: int, decision) -> list[int]:
    name = loop.loop_var.name
    if (
        not isinstance(decision, (list, tuple))
        or len(decision) != n
        or not all(isinstance(f, int) and f >= 1 for f in decision)
    ):
        raise InvalidDecisionError(
            f"the decision {decision!r} for loop {name} must be a list of {n} positive integers.", loop
        )
    product = 1
    for factor in decision:
        product *= factor
    if product != extent:
        raise InvalidDecisionError(
            f"the decision {list(decision)} for loop {name} multiplies to {product}, not to the loop's "
            f"extent {extent}.",
            loop,
        )
    if decision[-1] > max_innermost:
        raise InvalidDecisionError(
            f"the decision {list(decision)} for loop {name} has innermost factor {decision[-1]}, above "
            f"max_innermost_factor={max_innermost}.",
            loop,
        )
    return list(decision)


def _symbolic_tiling(loop: For, n: int, decision) -> list[int]:
    """A loop of symbolic extent gets TVM's fallback ``[-1, 1, ..., 1]``: split infers the outermost
    factor (-1 means None there), so the loop keeps its extent and the inner tiles are 1."""
    fallback = [-1] + [1] * (n - 1)
    if decision is not None and list(decision) != fallback:
        raise InvalidDecisionError(
            f"the decision {decision!r} for loop {loop.loop_var.name} of symbolic extent {loop.extent!r} "
            f"must be {fallback}, the only tiling sample_perfect_tile gives such a loop.",
            loop,
        )
    return fallback


def draw_perfect_tile(
    loop: For,
    n: int,
    max_innermost_factor: int | None = 16,
    rng: random.Random | None = None,
    decision: list[int] | None = None,
) -> list[int]:
    """Tile sizes for ``loop`` as ``sample_perfect_tile`` draws them, recording nothing.

    The public way to draft tilings without a schedule's trace: a tuner drafts many
    and records the one it keeps with ``sample_perfect_tile(..., decision=draft)``.
    Draws uniformly among the ``n``-factor products equal to the loop's extent with
    the innermost factor at most ``max_innermost_factor`` (-1 or None: no limit);
    with ``decision``, checks it instead. A loop of symbolic extent gets ``[-1, 1, ..., 1]``
    (TVM's fallback; ``split`` reads -1 as the factor to infer). Raises the ``ScheduleError`` that
    ``sample_perfect_tile`` would (not rendered: there is no schedule).

    >>> import random
    >>> from tir import Evaluate, For, ForKind, Var, const
    >>> loop = For(Var("i"), const(0), const(64), ForKind.SERIAL, Evaluate(const(0)))
    >>> factors = draw_perfect_tile(loop, n=3, max_innermost_factor=4, rng=random.Random(0))
    >>> factors[0] * factors[1] * factors[2], factors[2] <= 4
    (64, True)
    """
    extent = getattr(loop.extent, "value", None)
    if not isinstance(n, int) or n < 1:
        raise InvalidTileError(f"n={n!r} tiles of loop {loop.loop_var.name}: n must be at least 1.", loop)
    if not isinstance(extent, int):
        return _symbolic_tiling(loop, n, decision)
    no_limit = max_innermost_factor is None or max_innermost_factor == -1
    max_innermost = extent if no_limit else max_innermost_factor
    if not isinstance(max_innermost, int) or max_innermost < 1:
        raise InvalidTileError(
            f"max_innermost_factor={max_innermost_factor!r} must be a positive integer (or -1 / None "
            "for no limit).",
            loop,
        )
    if decision is not None:
        factors = _check_tiling(loop, extent, n, max_innermost, decision)
    elif _count_tilings(extent, n, max_innermost) == 0:
        raise InvalidTileError(
            f"loop {loop.loop_var.name} of extent {extent} can't be one tile of at most "
            f"max_innermost_factor={max_innermost}; use n >= 2 or a larger max_innermost_factor.",
            loop,
        )
    else:
        factors = _draw_tiling(rng or random.Random(), extent, n, max_innermost)
    return factors


@primitive(sampling=True)
def sample_perfect_tile(
    state: ScheduleState,
    loop: For,
    n: int,
    max_innermost_factor: int | None = 16,
    decision: list[int] | None = None,
    rng: random.Random | None = None,
) -> Sampled:
    factors = draw_perfect_tile(loop, n, max_innermost_factor, rng, decision)
    return Sampled(factors, factors)


# ---------------------------------------------------------------- sample_categorical


@primitive(sampling=True)
def sample_categorical(
    state: ScheduleState,
    candidates: list[int],
    probs: list[float],
    decision: int | None = None,
    rng: random.Random | None = None,
) -> Sampled:
    if len(candidates) != len(probs) or not candidates:
        raise InvalidProbabilitiesError(
            f"sample_categorical got {len(candidates)} candidates and {len(probs)} probabilities; "
            "give one probability per candidate (and at least one candidate)."
        )
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in candidates):
        raise ArgumentError(
            f"sample_categorical draws integers, but the candidates are {list(candidates)}; "
            "map other choices to their indices."
        )
    if any(not isinstance(p, (int, float)) or p < 0 for p in probs) or sum(probs) <= 0:
        raise InvalidProbabilitiesError(
            f"the probabilities {list(probs)} must be non-negative numbers with a positive sum."
        )
    if decision is not None:
        if not isinstance(decision, int) or not 0 <= decision < len(candidates):
            raise InvalidDecisionError(
                f"the decision {decision!r} must be an index into the {len(candidates)} candidates "
                f"{list(candidates)} (0 to {len(candidates) - 1})."
            )
        index = decision
    else:
        index = _draw_index(rng or random.Random(), probs)
    return Sampled(candidates[index], index)


def _draw_index(rng: random.Random, probs: list[float]) -> int:
    threshold = rng.random() * sum(probs)
    for index, p in enumerate(probs):
        if threshold < p:
            return index
        threshold -= p
    return max(i for i, p in enumerate(probs) if p > 0)


# ---------------------------------------------------------------- sample_compute_location

_ROOT, _INLINE = -1, -2


def _boundary_position(state: ScheduleState, consumers: list[Block]) -> int:
    """Index (in the first consumer's loops) of the deepest loop enclosing every consumer, or -1."""
    first = state.loops_of(consumers[0])
    if len(consumers) == 1:
        realize = state.realize_of(consumers[0])
        return len(first) - 1 if isinstance(state.parent(realize), For) else -1
    depth = 0
    for position, loop in enumerate(first):
        if all(position < len(state.loops_of(c)) and state.loops_of(c)[position] is loop for c in consumers):
            depth = position + 1
    return depth - 1


def compute_locations(state: ScheduleState, block: Block) -> tuple[list[int], list[For | None]]:
    """Decisions and loops where ``block`` may go, as TVM orders them: inline, root, then loops."""
    decisions: list[int] = [_INLINE] if can_apply(state, "compute_inline", block=block) else []
    decisions.append(_ROOT)
    locations: list[For | None] = [None] * len(decisions)
    consumers = consumers_of(state, block)
    if not consumers:
        return decisions, locations
    loops = state.loops_of(consumers[0])
    realize = state.realize_of(consumers[0])
    reduce_bound = {
        var
        for iv, value in zip(realize.block.iter_vars, realize.iter_values)
        if iv.kind is not IterKind.SPATIAL
        for var in collect_vars(value)
    }
    candidates = loops[: _boundary_position(state, consumers) + 1]
    last_spatial = max((i for i, lp in enumerate(candidates) if lp.loop_var not in reduce_bound), default=-1)
    seen_reduce = False
    for position, loop in enumerate(candidates):
        if getattr(loop.extent, "value", None) == 1:
            continue
        if loop.loop_var in reduce_bound:
            seen_reduce = True
            if position > last_spatial:
                break
        elif seen_reduce:
            break
        if can_apply(state, "compute_at", block=block, loop=loop):
            decisions.append(position)
            locations.append(loop)
    return decisions, locations


@primitive(sampling=True)
def sample_compute_location(
    state: ScheduleState, block: Block, decision: int | None = None, rng: random.Random | None = None
) -> Sampled:
    decisions, locations = compute_locations(state, block)
    if decision is None:
        index = (rng or random.Random()).randrange(len(decisions))
    elif not isinstance(decision, int):
        raise InvalidDecisionError(
            f"the decision {decision!r} for block {block.name} must be an integer: a loop position, "
            "-1 (root) or -2 (inline).",
            block,
        )
    else:
        # A replayed decision that is no longer a candidate (the loops changed) falls back to the
        # nearest candidate before it, as in TVM.
        below = [i for i, d in enumerate(decisions) if d <= decision]
        index = below[-1] if below else decisions.index(_ROOT)
    return Sampled(locations[index], decisions[index])


# ---------------------------------------------------------------- public methods


class SamplingMethods:
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int | None = 16,
        decision: list[int] | None = None,
    ) -> list[ExprRV]:
        """Draw ``n`` tile sizes whose product is exactly the extent of ``loop``.

        Every tiling with the innermost factor at most ``max_innermost_factor`` is
        equally likely; ``decision`` replays a given tiling instead (checked).
        The results are handles to integers: ``sch.get(rv)`` gives the value, and
        they can be passed to ``split`` as factors. ``sample_perfect_tile`` in TVM
        (MetaSchedule's tile-size sampling).

        Requirements
        ------------
        - ``n >= 1``; a loop of symbolic extent is tiled ``[None, 1, ..., 1]`` (TVM's
          fallback: None where ``split`` infers the factor, so the loop keeps its extent);
        - a replayed ``decision`` has ``n`` positive factors multiplying to the
          extent, the last at most ``max_innermost_factor``.

        Parameters
        ----------
        loop : the loop to tile.
        n : the number of tiles.
        max_innermost_factor : the largest innermost tile (-1 or None: no limit).
        decision : a tiling to replay instead of drawing one.

        Returns
        -------
        ``n`` handles to the tile sizes, outermost first.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        ...     for i in range(64):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(64, i)
        ...             B[vi] = A[vi] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func, seed=0)
        >>> (i,) = sch.get_loops(sch.get_block("B"))
        >>> tiles = sch.sample_perfect_tile(i, n=2, decision=[8, 8])
        >>> [sch.get(t) for t in tiles]
        [8, 8]
        >>> i0, i1 = sch.split(i, tiles)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            # with T.block("root"):
            for i_0, i_1 in T.grid(8, 8):
                with T.block("B"):
                    vi = T.axis.spatial(64, i_0 * 8 + i_1)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi] + T.float32(1.0)
        """
        tiles = self._run(
            "sample_perfect_tile",
            loop=loop,
            n=n,
            max_innermost_factor=max_innermost_factor,
            decision=decision,
        )
        # TVM's return for a loop of symbolic extent: None where split infers the factor (-1).
        return [None if self._keys.get(t) == -1 else t for t in tiles]

    def sample_categorical(
        self, candidates: list[int], probs: list[float], decision: int | None = None
    ) -> ExprRV:
        """Draw one of ``candidates`` with the given probabilities (weights).

        The decision is the index of the chosen candidate; passing ``decision``
        replays it. ``sample_categorical`` in TVM (MetaSchedule uses it for unroll
        depths and vector widths).

        Requirements
        ------------
        - one non-negative weight per candidate, with a positive sum;
        - a replayed ``decision`` is an index into ``candidates``.

        Parameters
        ----------
        candidates : the integers to choose from.
        probs : their weights (normalized here).
        decision : the index to replay instead of drawing.

        Returns
        -------
        A handle to the chosen integer.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        ...     for i in range(64):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(64, i)
        ...             B[vi] = A[vi] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func, seed=0)
        >>> unroll = sch.sample_categorical([0, 16, 64], [0.5, 0.25, 0.25], decision=1)
        >>> sch.get(unroll)
        16
        >>> print(sch.trace.as_python())
        v0 = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.5, 0.25, 0.25], decision=1)
        """
        return self._run("sample_categorical", candidates=candidates, probs=probs, decision=decision)

    def sample_compute_location(self, block: BlockRV, decision: int | None = None) -> LoopRV | None:
        """Draw a loop under which ``block`` could be computed (``compute_at``), uniformly.

        The candidates, as in TVM: inlining (decision -2, when ``compute_inline``
        would succeed), staying at the root (-1), and the loops around the block's
        first consumer, outermost first (decision = the loop's position), down to
        the deepest loop enclosing every consumer, skipping unit loops and stopping
        at the first reduction loop that has no spatial loop below it. A replayed
        decision that is no longer a candidate falls back to the nearest candidate
        before it. ``sample_compute_location`` in TVM.

        Parameters
        ----------
        block : the producer block to place.
        decision : a location to replay: a loop position, -1 (root) or -2 (inline).

        Returns
        -------
        A handle to the chosen loop, or None when the choice is root (-1) or
        inline (-2); the trace records which.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        ...     B = T.alloc_buffer((8, 8))
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("B"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             B[vi, vj] = A[vi, vj] * T.float32(2)
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("C"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             C[vi, vj] = B[vi, vj] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func, seed=0)
        >>> loop = sch.sample_compute_location(sch.get_block("B"), decision=0)
        >>> sch.get(loop).loop_var.name
        'i'
        >>> sch.trace.decisions
        {1: 0}
        """
        return self._run("sample_compute_location", block=block, decision=decision)
