"""Plain-text tables that read at the terminal's width with no word broken.

:func:`text_table` renders a rich table whose every column is at least as wide as its longest
word, so rich wraps cells at spaces and never inside a token; when even that does not fit the
terminal (``$COLUMNS``, default 80), the table is printed wider rather than broken.

Examples
--------
>>> text_table("t", ["a", "b"], [["x", "a long cell"]], width=40).splitlines()[-2].split()
['x', 'a', 'long', 'cell']
"""

from __future__ import annotations

import io
import os
import sys
import textwrap

__all__ = ["text_table", "console_width", "longest_words", "longest_lines", "fit_widths", "render_rich", "rich_table",
           "command_text"]


def console_width(default: int = 80) -> int:
    """``$COLUMNS`` (at least 40), or ``default`` when it is unset or not an integer.

    >>> saved = os.environ.get("COLUMNS"); os.environ["COLUMNS"] = "wide"
    >>> console_width(), console_width(160)
    (80, 160)
    >>> _ = os.environ.pop("COLUMNS"); os.environ.update({} if saved is None else {"COLUMNS": saved})
    """
    try:
        return max(40, int(os.environ.get("COLUMNS", str(default))))
    except ValueError:
        return default


def text_table(title: str, columns, rows, caption: str | None = None, *, width: int | None = None,
               one_line: bool = False) -> str:
    """A rich table as text, one line per row where the cells fit; words never split.

    Each column is at least as wide as its longest word (so rich wraps at spaces, never inside a
    token; with ``one_line``, as its longest cell, so every row is one line), and the console is
    widened to the table's minimum when even that does not fit.
    """
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    width = console_width() if width is None else width
    table = Table(title=escape(title), box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=one_line)
    longest = longest_words(columns, rows, whole_cells=one_line)
    for c, lw in zip(columns, longest):
        table.add_column(escape(str(c)), min_width=lw, overflow="fold", no_wrap=one_line)
    for r in rows:
        table.add_row(*[escape("" if v is None else str(v)) for v in r])
    words = {w for r in rows for v in r for w in str("" if v is None else v).split()}
    probe = Console(file=io.StringIO(), width=10_000)
    size = max(width, probe.measure(table).minimum, sum(longest) + 2 * len(columns))
    for _ in range(64):  # rich may still need a little more than it measured: widen, never crop
        buffer = io.StringIO()
        console = Console(file=buffer, width=size, force_terminal=sys.stdout.isatty(),
                          color_system="auto" if sys.stdout.isatty() else None)
        console.print(table, crop=False)  # a line past the edge shows as one longer than size
        text = buffer.getvalue()
        if words <= set(_plain(text).split()) and max(len(line) for line in _plain(text).splitlines()) <= size:
            break  # nothing past the right edge
        size += 4
    if caption:  # wrapped at spaces only, to the terminal's width
        text += "\n".join(textwrap.wrap(caption, width=max(width, 20), break_long_words=False,
                                        break_on_hyphens=False)) + "\n"
    return text


def _plain(text: str) -> str:
    """``text`` without terminal colour codes (their characters take no columns)."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def longest_words(columns, rows, whole_cells: bool = False) -> list[int]:
    """The length of the longest whitespace-free word (or whole cell) of each column, header included.

    >>> longest_words(["N", "formula"], [[64, "m*p >= N"], [4096, "n/(p + log2(N))"]])
    [4, 8]
    """
    def words(v):
        text = str("" if v is None else v)
        return [text] if whole_cells else text.split()
    longest = [max([len(w) for w in words(c)] + [1]) for c in columns]
    for r in rows:
        longest = [max([lw] + [len(w) for w in words(v)]) for lw, v in zip(longest, r)]
    return longest


def longest_lines(columns, rows) -> list[int]:
    """The length of the longest line of each column's cells, header included.

    >>> longest_lines(["N", "formula"], [[64, "m*p >= N"], [4096, "a\\nb"]])
    [4, 8]
    """
    def lines(v):
        return str("" if v is None else v).splitlines() or [""]

    return [max(len(line) for v in [c] + [r[i] for r in rows] for line in lines(v))
            for i, c in enumerate(columns)]


def fit_widths(minimums, maximums, total: int) -> list[int]:
    """Column widths that sum to at most ``total``: each between its minimum (its longest word) and
    its maximum (its longest line), the widest column narrowed first; the minimums when even they
    do not fit (a word is never split, so the table is then wider than ``total``).

    >>> fit_widths([1, 5, 3], [10, 30, 3], 25)
    [10, 12, 3]
    >>> fit_widths([8, 9], [20, 20], 10)
    [8, 9]
    """
    widths = [max(lo, hi) for lo, hi in zip(minimums, maximums)]
    while sum(widths) > total:
        slack = [j for j, (w, lo) in enumerate(zip(widths, minimums)) if w > lo]
        if not slack:
            break
        widest = max(slack, key=lambda j: widths[j])
        widths[widest] -= 1
    return widths


def render_rich(renderables) -> str:
    """Rich renderables (one or a list) as text at the terminal's width, never narrower than the
    longest word of a column; colour only when standard output is a terminal.

    >>> render_rich("plain words")
    'plain words\\n'
    """
    from rich.console import Console

    buffer = io.StringIO()
    items = renderables if isinstance(renderables, (list, tuple)) else [renderables]
    probe = Console(file=io.StringIO(), width=10_000)  # never narrower than the longest word of a column
    need = max([probe.measure(r).minimum for r in items] + [1])
    console = Console(file=buffer, width=max(need, console_width(160)),
                      force_terminal=sys.stdout.isatty(), color_system="auto" if sys.stdout.isatty() else None)
    for r in items:
        console.print(r, crop=False)  # a line rich cannot fit shows whole, never cut at the edge
    return buffer.getvalue()


def rich_table(title: str, columns: list[str], rows: list[list], caption: str | None = None):
    """A rich table whose columns wrap at spaces (never inside a word) to fit the terminal.

    Cells that are rich renderables (``Text``) are kept as they are; anything else is shown as its
    ``str`` (``None`` as an empty cell), markup escaped.

    >>> print(render_rich(rich_table("t", ["check", "value"], [["bits", 3]])).splitlines()[4])
    │ bits  │ 3     │
    """
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title), caption=escape(caption) if caption else None, show_lines=False,
                  min_width=max(longest_words([title, caption or ""], [])))  # title words are never split
    text = [[str(v) if _is_renderable(v) else v for v in r] for r in rows]
    widths = fit_widths(longest_words(columns, text), longest_lines(columns, text),
                        console_width(160) - 3 * len(columns) - 1)  # borders and padding: 3 a column, 1 edge
    for c, width in zip(columns, widths):  # wrap at spaces, never inside a word
        table.add_column(escape(c), overflow="fold", width=width)
    for r in rows:
        table.add_row(*[v if _is_renderable(v) else escape("" if v is None else str(v)) for v in r])
    return table


def _is_renderable(value) -> bool:
    return hasattr(value, "__rich__") or hasattr(value, "__rich_console__")


def command_text(fmt: str, payload, view) -> str:
    """A command's output: ``payload`` as JSON (through :func:`commcomp.jsonable.jsonable`) when
    ``fmt`` is ``"json"``, else the rich renderables that ``view()`` returns, as text.

    >>> command_text("json", {"bits": 3}, None)
    '{\\n  "bits": 3\\n}'
    """
    if fmt == "json":
        import json

        from commcomp.jsonable import jsonable

        return json.dumps(jsonable(payload), indent=2)
    return render_rich(view())
