"""The tuning progress bars: one line per workload with trials done, best GFLOPS so far, errors (rich;
silent when disabled).

A resumed run starts a line at the trials already in the database, with their best.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from codegen.timing import significant


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
            # Literal text: a name such as matmul[64,64,64] is neither markup nor a format field
            # (the description is a value substituted into the template, never a template itself).
            TextColumn("tuning {task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]} GFLOPS, {task.fields[errors]} errors", markup=False),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
        )
        self._task: TaskID | None = None
        if name is not None:
            self._task = self._progress.add_task(name, total=total, best="0", errors=0)

    def __enter__(self) -> TuningProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    def row(
        self, name: str, total: int | None, completed: int = 0, best_gflops: float = 0.0, errors: int = 0
    ) -> Callable[[float, int], None]:
        """Add a line for ``name``, starting at ``completed`` trials (a resumed run); returns its
        ``update(best_gflops, errors)``, called once per trial."""
        task = self._progress.add_task(
            name, total=total, completed=completed, best=significant(best_gflops), errors=errors
        )

        def update(best_gflops: float, errors: int) -> None:
            self._progress.update(task, advance=1, best=significant(best_gflops), errors=errors)

        return update

    def start_at(self, completed: int, best_gflops: float, errors: int) -> None:
        """Show ``completed`` trials already done (a resumed run) with their best and errors."""
        self._progress.update(self._task, completed=completed, best=significant(best_gflops), errors=errors)

    def update(self, best_gflops: float, errors: int) -> None:
        self._progress.update(self._task, advance=1, best=significant(best_gflops), errors=errors)

    def note(self, message: str) -> None:
        if self.enabled:
            self._progress.console.print(message, markup=False, highlight=False)
