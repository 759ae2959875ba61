"""One timer for every measurement: TVM's ``time_evaluator`` semantics, used by Module and the tuner.

``time_calls(run, repeat=5, min_repeat_seconds=0.05)`` times a function of
``(number, repeat)`` that a runtime provides (``CModule.time`` and its CUDA
and Metal twins: one warm-up call, then ``repeat`` means of ``number`` calls).
As in TVM, ``number`` is where the count of calls per repeat starts: it grows
until one repeat lasts at least ``min_repeat_seconds`` (at most
``max_number`` calls). The result keeps every repeat, so callers report the
median and the spread, never one lucky or unlucky round. ``significant`` prints
GFLOPS and times with three significant digits (``107.9`` -> ``108``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

# Never grow `number` by more than this factor in one step (TVM uses the golden ratio as a floor).
_GROWTH_LIMIT = 100


@dataclass(frozen=True)
class TimingResult:
    """Seconds per call, one entry per repeat (each the mean of ``number`` calls)."""

    results: tuple[float, ...]
    number: int = 1

    @property
    def repeat(self) -> int:
        return len(self.results)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0.1 means the repeats agree within 10%."""
        return (self.max - self.min) / self.median if self.median > 0 else 0.0

    def __str__(self) -> str:
        return (
            f"{significant(self.median * 1e3)} ms median of {self.repeat} x {self.number} calls "
            f"(min {significant(self.min * 1e3)}, max {significant(self.max * 1e3)}, "
            f"spread {self.spread:.0%})"
        )


def time_calls(
    run: Callable[[int, int], list[float]],
    *,
    number: int = 1,
    repeat: int = 5,
    min_repeat_seconds: float = 0.0,
    max_number: int = 100_000,
) -> TimingResult:
    """Time ``run(number, repeat)`` (a runtime's timer), ``number`` grown as described above."""
    if repeat < 1 or number < 1:
        raise ValueError(f"timing needs number >= 1 and repeat >= 1; got number={number}, repeat={repeat}")
    if min_repeat_seconds > 0:
        number = choose_number(run, number, min_repeat_seconds, max_number)
    return TimingResult(tuple(run(number, repeat)), number)


def choose_number(
    run: Callable[[int, int], list[float]], number: int, min_repeat_seconds: float, max_number: int
) -> int:
    """Calls per repeat, from ``number`` up, so that one repeat lasts at least ``min_repeat_seconds``."""
    while number < max_number:
        (per_call,) = run(number, 1)
        if per_call * number >= min_repeat_seconds:
            break
        wanted = math.ceil(min_repeat_seconds / per_call) if per_call > 0 else max_number
        number = min(max_number, max(number + 1, min(wanted, number * _GROWTH_LIMIT)))
    return number


def significant(value: float, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant digits, with thousands separators and no exponent."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    rounded = round(value, digits - 1 - math.floor(math.log10(abs(value))))
    decimals = digits - 1 - math.floor(math.log10(abs(rounded)))  # 9.999 rounds to 10.0, not 10.00
    return f"{rounded:,.{max(decimals, 0)}f}"
