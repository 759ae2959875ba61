"""The tuner's measurement pipeline: batches built and measured, partly beside the search, and clocked.

``tune`` (tuner/search.py) proposes a batch of candidates and hands it to
:class:`Batches`, which builds and measures it through the measurement session,
in the background while the next batch is proposed (``overlap``), and keeps a
:class:`MeasureClock`: the wall time of the builds and of the runner, and the
runner's own split of each answer (loading or compiling, checking, timing).
``TuneResult.time_split`` prints it, so that a run's wall time can be taken
apart on the device without a profiler.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from codegen.target import Target

from .measure import Candidate, Measurer, MeasureResult
from .measure.local_runner import MeasureSession

__all__ = ["OVERLAP_MODES", "Batches", "MeasureClock"]


@dataclass
class MeasureClock:
    """The wall time of the measurements, beside the search or not: ``batches``, building and
    running them (on a GPU the runner times each candidate while the rest are built), and the
    runner's own split of its answers (``runner`` in all: ``load``, which on CUDA is compiling
    unless the build workers left a cubin, ``check``, the first call with its copies and the
    comparison, and ``timing``). ``nvrtc`` counts the CUDA candidates the runner compiled."""

    batches: float = 0.0
    runner: float = 0.0
    load: float = 0.0
    check: float = 0.0
    timing: float = 0.0
    candidates: int = 0
    nvrtc: int = 0

    def add_results(self, results: list[MeasureResult]) -> None:
        for result in results:
            self.candidates += 1
            self.runner += result.runner_secs
            self.load += result.phases.load_secs
            self.check += result.phases.check_secs
            self.timing += result.phases.timing_secs
            self.nvrtc += result.phases.compiler == "nvrtc"

    def __str__(self) -> str:
        compiled = f", {self.nvrtc} of {self.candidates} compiled by NVRTC there" if self.nvrtc else ""
        return (
            f"measurements (beside the search or not): {self.batches:.1f} s building and running "
            f"batches, {self.runner:.1f} s of it in the runner ({self.load:.1f} s loading{compiled}, "
            f"{self.check:.1f} s checking, {self.timing:.1f} s timing)"
        )


# What tune(overlap=...) runs in the background while the next batch is proposed.
OVERLAP_MODES = ("auto", "measure", "build", "none")


class Batches:
    """Measures batches of candidates, partly in the background while the next is proposed.

    ``submit(pool)`` starts on ``pool`` and returns the batches that are done, each with its
    results. With ``overlap="none"`` that is ``pool`` itself, built and measured at once.
    Otherwise it is the batch submitted before: the caller proposes the next batch while the
    build workers (other processes; this thread only waits on them) build the last one, and
    with ``"measure"`` while the runner times it too. ``"auto"`` is ``"measure"`` on GPU
    targets, whose timings a busy host core does not disturb, and ``"build"`` on the CPU,
    where the kernel being timed needs every core. The price is one batch of staleness: a
    batch is proposed by the model trained on every batch but the one in flight. The first
    batch is measured at once, from this thread: the build workers are forked when first
    needed and kept, and forking from the background thread while this one runs could hand
    a worker a lock this thread held.
    """

    def __init__(self, measurer: MeasureSession, overlap: str, target: Target):
        if overlap == "auto":
            overlap = "measure" if target.is_gpu else "build"
        if not isinstance(measurer, Measurer):
            overlap = "none"  # a Ray session keeps its cluster busy itself, and only measures whole batches
        self.measurer = measurer
        self.overlap = overlap
        self.wait_seconds = 0.0
        self.clock = MeasureClock()
        self._background = ThreadPoolExecutor(max_workers=1) if overlap != "none" else None
        self._pending: tuple[list, Future] | None = None
        self._started = False

    @property
    def in_flight(self) -> int:
        return len(self._pending[0]) if self._pending is not None else 0

    def submit(self, pool: list) -> list[tuple[list, list]]:
        done = []
        if self._background is None or not self._started:
            # The first batch runs here, so the build workers (forked on first use and kept)
            # are forked from this thread, never while another thread holds a lock.
            self._started = bool(pool)
            if pool:
                done.append((pool, self._wait(lambda: self._measure(_candidates(pool)))))
            return done
        if self._pending is not None:
            pending_pool, future = self._pending
            self._pending = None
            results = self._wait(future.result)
            if self.overlap == "build":
                results = self._wait(lambda: self._run(results))
            done.append((pending_pool, results))
        if pool:
            work = self._measure if self.overlap == "measure" else self._build
            self._pending = (pool, self._background.submit(work, _candidates(pool)))
        return done

    def _measure(self, candidates: list[Candidate]) -> list[MeasureResult]:
        return self._clocked(self.measurer.measure, candidates)

    def _build(self, candidates: list[Candidate]) -> list:
        return self._clocked(self.measurer.build, candidates, measured=False)

    def _run(self, built: list) -> list[MeasureResult]:
        return self._clocked(self.measurer.run, built)

    def _clocked(self, work, argument, measured: bool = True):
        """``work(argument)``, its wall time counted into the clock (and its results, if ``measured``)."""
        started = time.perf_counter()
        outcomes = work(argument)
        self.clock.batches += time.perf_counter() - started
        if measured:
            self.clock.add_results(outcomes)
        return outcomes

    def _wait(self, results):
        started = time.perf_counter()
        measured = results()
        self.wait_seconds += time.perf_counter() - started
        return measured

    def close(self) -> None:
        """After an error or Ctrl-C: stop the work in flight (its processes) and the thread."""
        if self._background is None:
            return
        if self._pending is not None:
            self.measurer.close()
            self._pending = None
        self._background.shutdown(wait=True)


def _candidates(pool: list) -> list[Candidate]:
    return [Candidate(c.trace_json, c.mod) for c in pool]
