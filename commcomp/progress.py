"""Progress bars on standard error for long commands (``verify``, ``witness``, ``sweep run``).

A bar is drawn only when standard error is a terminal, and removed when the work ends
(``transient``), so piped or captured output never holds one. Library functions take a plain
``progress(done, total)`` callback; :func:`progress_callback` gives one that drives a bar.

Examples
--------
>>> with progress_callback("counting") as update:
...     update(3, 10)                  # silent here: stderr is not a terminal under doctest
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["progress_bar", "progress_callback"]


def progress_bar():
    """A rich ``Progress`` on stderr: description, bar, done/total, time elapsed and left."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=True,
                    disable=not sys.stderr.isatty())


@contextlib.contextmanager
def progress_callback(description: str):
    """A ``(done, total)`` callback for library code, drawn as a bar titled ``description``."""
    with progress_bar() as bar:
        task = bar.add_task(description, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
