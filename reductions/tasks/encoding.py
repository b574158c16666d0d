"""A task's token encoding, for people: which token means what, where the answer is read.

The words come from the task's own docstring (its description before the numpydoc sections,
following a ``see :class:`...``` to the class that holds the format), so they cannot drift from
the code's documentation; the numbers come from the task itself at a small n: the sequence length,
the vocabulary with each id's name, the output positions, and one seeded instance rendered with
its answer. ``commcomp list tasks --wide`` prints them, ``--format json`` carries them as the
``encoding`` field of each row, and a command's ``--help`` with a task named shows that task's.

Examples
--------
>>> from reductions.registry import get_task
>>> enc = task_encoding(get_task("index-lookup"), n=4)
>>> enc.length, enc.vocabulary, enc.output_positions
(5, ('0', '1', 'p0', 'p1', 'p2', 'p3'), (4,))
>>> enc.text.splitlines()[0]
'Index Lookup: symbols s_0 ... s_{n-1}, then one query token p; output s_p.'
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass

import numpy as np

from commcomp.errors import CommcompError
from commcomp.listing import encoding_lines

__all__ = ["TaskEncoding", "task_encoding", "encoding_help"]

_SECTIONS = {"Parameters", "Attributes", "Examples", "Notes", "References", "Returns", "Raises", "See Also"}
_SEE_CLASS = re.compile(r"see :class:`~?([\w.]+)`")
#: sizes tried, in turn, for the worked instance (the first the task accepts)
_SIZES = (4, 3, 5, 6, 8, 2, 1, 16)


@dataclass(frozen=True)
class TaskEncoding:
    """The encoding of one task at size ``n`` (see the module docstring)."""

    task: str
    n: int
    length: int
    vocabulary: tuple[str, ...]
    output_positions: tuple[int, ...]
    example: str  # one seeded instance, token names
    example_answer: str  # its answers at the output positions
    text: str  # the docstring's description of the format

    def to_json(self) -> dict:
        return {"n": self.n, "length": self.length, "vocabulary": list(self.vocabulary),
                "output_positions": list(self.output_positions), "example": self.example,
                "example_answer": self.example_answer, "text": self.text}

    def lines(self, width: int = 78) -> list[str]:
        """The encoding as wrapped text lines (``list tasks --wide``, ``--help``)."""
        return encoding_lines(self.task, self.to_json(), width)


def _prose(cls) -> str:
    """The class docstring up to its first numpydoc section, with a ``see :class:`` followed once."""
    doc = inspect.getdoc(cls) or ""
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() in _SECTIONS and set(lines[i + 1].strip()) == {"-"}:
            lines = lines[:i]
            break
    text = "\n".join(lines).strip()
    match = _SEE_CLASS.search(text)
    if match:
        module, _, name = match.group(1).rpartition(".")
        try:
            other = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError):
            other = None
        if other is not None and other is not cls:
            text = text.replace(match.group(0), f"as {name}") + "\n\n" + _prose(other)
    return text


def task_encoding(task, n: int | None = None, seed: int = 0) -> TaskEncoding:
    """The encoding of ``task`` at size ``n`` (default: the first of 4, 3, 5, ... it accepts).

    Raises
    ------
    CommcompError
        If the task accepts none of the sizes tried (or the given ``n``).
    """
    sizes = (n,) if n is not None else _SIZES
    last = None
    for size in sizes:
        try:
            size = task.check_n(size)
            batch = task.sample(size, 1, np.random.default_rng(seed))
            answers = np.asarray(task.ground_truth(batch))
        except (CommcompError, ValueError, NotImplementedError) as exc:
            last = exc
            continue
        text = getattr(task, "description", "") or _prose(type(task))
        answer = np.round(answers[0], 4).tolist() if np.issubdtype(answers.dtype, np.floating) else answers[0].tolist()
        return TaskEncoding(task.name, int(size), int(task.length(size)), tuple(task.vocabulary(size)),
                            tuple(int(p) for p in task.output_positions(size)),
                            task.render(batch.tokens[0], size), str(answer), text)
    raise CommcompError(f"task {task.name}: no instance at n in {sizes} ({last})")


def encoding_help(task_name: str) -> str:
    """The ``--help`` epilog of a command run with ``task_name``: its encoding, or '' if unknown."""
    from ..registry import get_task

    try:
        return "\n".join(task_encoding(get_task(task_name)).lines())
    except CommcompError:
        return ""
