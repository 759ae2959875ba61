"""The tuning progress bar: trials done, best GFLOPS so far, errors (rich; silent when disabled).

A resumed run starts the bar at the trials already in the database, with their best.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codegen.timing import significant


class TuningProgress:
    """``with TuningProgress(name, total) as bar: bar.update(best_gflops, errors)`` once per trial."""

    def __init__(self, name: str, total: int, enabled: bool = True, console: Console | None = None):
        self.enabled = enabled
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            # Literal text: a name such as matmul[64,64,64] is neither markup nor a format field.
            TextColumn("tuning " + name.replace("{", "{{").replace("}", "}}"), markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]} GFLOPS, {task.fields[errors]} errors", markup=False),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
        )
        self._task = self._progress.add_task("tune", total=total, best="0", errors=0)

    def __enter__(self) -> TuningProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    def start_at(self, completed: int, best_gflops: float, errors: int) -> None:
        """Show ``completed`` trials already done (a resumed run) with their best and errors."""
        self._progress.update(self._task, completed=completed, best=significant(best_gflops), errors=errors)

    def update(self, best_gflops: float, errors: int) -> None:
        self._progress.update(self._task, advance=1, best=significant(best_gflops), errors=errors)

    def note(self, message: str) -> None:
        if self.enabled:
            self._progress.console.print(message, markup=False, highlight=False)
