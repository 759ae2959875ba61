"""The tuning progress bars: one line per workload with trials done, best GFLOPS so far, errors (rich;
silent when disabled)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class TuningProgress:
    """``with TuningProgress(name, total) as bar: bar.update(best_gflops, errors)`` once per trial.

    A multi-task run passes ``name=None`` and adds one line per workload with :meth:`row`.
    """

    def __init__(
        self, name: str | None, total: int | None, enabled: bool = True, console: Console | None = None
    ):
        self.enabled = enabled
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("tuning {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]:,.1f} GFLOPS, {task.fields[errors]} errors"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
        )
        self.update = self.row(name, total) if name is not None else None

    def row(self, name: str, total: int | None) -> Callable[[float, int], None]:
        """Add a line for ``name``; returns its ``update(best_gflops, errors)``, called once per trial."""
        task = self._progress.add_task(name, total=total, best=0.0, errors=0)

        def update(best_gflops: float, errors: int) -> None:
            self._progress.update(task, advance=1, best=best_gflops, errors=errors)

        return update

    def __enter__(self) -> TuningProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    def note(self, message: str) -> None:
        if self.enabled:
            self._progress.console.print(message)
