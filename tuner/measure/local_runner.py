"""Where candidates are measured: the :class:`Runner` interface and :class:`LocalRunner` (this machine).

``tune(..., runner=...)`` (tuner/search.py) asks its runner for one
:class:`MeasureSession` per workload and hands each batch of candidates to
``session.measure``. :class:`LocalRunner`, the default, opens a
:class:`~tuner.measure.Measurer`: build worker processes and one runner process
on this machine. ``RayRunner`` (tuner/measure/ray_runner.py) opens sessions
whose builds are Ray tasks and whose measurements run in Ray actors on the
machines that have the target's device. A session is a context manager; the
runner outlives its sessions (a multi-task run opens one per workload) and is
closed by whoever made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from codegen.errors import RuntimeUnavailableError
from codegen.target import Target
from tir import IRModule

from . import Candidate, Measurer, MeasureResult, Reference


class MeasureSession(Protocol):
    """Measures candidates of one workload on one target; ``device_name`` names the device."""

    device_name: str

    def measure(self, candidates: Sequence[Candidate]) -> list[MeasureResult]: ...

    def close(self) -> None: ...

    def __enter__(self) -> MeasureSession: ...

    def __exit__(self, *exc_info) -> None: ...


class Runner(Protocol):
    """Opens measurement sessions; ``close`` stops whatever the runner started."""

    def check(self, target: Target) -> None:
        """Raise RuntimeUnavailableError now if this runner cannot measure ``target`` at all."""

    def session(
        self, workload: IRModule, target: Target, *, reference: Reference | None = None, seed: int = 0
    ) -> MeasureSession: ...

    def close(self) -> None: ...


class LocalRunner:
    """Measures on this machine: ``workers`` build processes (default: one per core) and one runner.

    >>> runner = LocalRunner(workers=2)  # tune(mod, "c", 64, "t.db", runner=runner)
    """

    def __init__(self, workers: int | None = None, *, build_timeout: float = 60, run_timeout: float = 30):
        self.workers = workers
        self.build_timeout = build_timeout
        self.run_timeout = run_timeout

    def check(self, target: Target) -> None:
        """This machine must have the target's runtime: RuntimeUnavailableError says how to get it."""
        problem = target.backend.unavailable_reason(target)
        if problem is not None:
            raise RuntimeUnavailableError(problem)

    def session(
        self, workload: IRModule, target: Target, *, reference: Reference | None = None, seed: int = 0
    ) -> Measurer:
        return Measurer(
            workload,
            target,
            reference=reference,
            workers=self.workers,
            build_timeout=self.build_timeout,
            run_timeout=self.run_timeout,
            seed=seed,
        )

    def close(self) -> None:
        """Nothing to stop: each session stops its own processes."""

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
