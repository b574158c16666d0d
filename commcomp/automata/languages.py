"""Target languages as DFAs over a model's letters: parity, mod-m counting, bounded Dyck, files.

Names (``automaton --against``):

* ``parity``: words with an even number of the *counted* letter (letter index 1 of a two-letter
  alphabet: the bit 1); accepting = even.
* ``mod-M``: words whose number of counted letters is divisible by M (``mod-2`` is ``parity``).
* ``dyck-K-D``: Dyck-(K, D) over letters ``0..K-1`` (openers) and ``K..2K-1`` (their closers, in
  the same order): balanced, well nested, depth at most D at every prefix. One state per stack of
  depth <= D and a reject sink.
* a path to a JSON file with :func:`~commcomp.automata.dfa.to_json`'s fields.

Examples
--------
>>> d = language_dfa("dyck-1-2", ("(", ")"))
>>> [accepts(d, w) for w in [(), (0, 1), (0, 0, 1, 1), (0, 0, 0, 1, 1, 1), (1, 0)]]
[True, True, True, False, False]
>>> language_dfa("mod-3", ("a", "b")).states
3
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np

from commcomp.errors import InvalidParameterError, UnknownNameError

from .dfa import DFA, accepts, from_json

__all__ = ["language_dfa", "LANGUAGES", "parity_dfa", "mod_dfa", "dyck_dfa"]

LANGUAGES = ("parity", "mod-M (M >= 2)", "dyck-K-D (K types, depth D)", "a DFA JSON file")


def mod_dfa(m: int, letters, counted: int = 1) -> DFA:
    """Words whose number of letter ``counted`` is divisible by ``m`` (state = count mod m)."""
    A = len(letters)
    if m < 2 or not 0 <= counted < A:
        raise InvalidParameterError(f"mod-{m}: needs m >= 2 and a counted letter among {A}")
    delta = np.repeat(np.arange(m)[:, None], A, axis=1)  # (m, A): other letters keep the count
    delta[:, counted] = (np.arange(m) + 1) % m
    return DFA(delta, 0, (np.arange(m) == 0).astype(np.int64), tuple(letters))


def parity_dfa(letters) -> DFA:
    return mod_dfa(2, letters)


def dyck_dfa(k: int, depth: int, letters) -> DFA:
    """Dyck-(k, depth) over ``2k`` letters (module docstring); stacks numbered in BFS order."""
    if len(letters) != 2 * k:
        raise InvalidParameterError(f"dyck-{k}-{depth} needs {2 * k} letters (openers, then closers), "
                                    f"the alphabet has {len(letters)}")
    stacks = [()] + [s for d in range(1, depth + 1) for s in itertools.product(range(k), repeat=d)]
    index = {s: i for i, s in enumerate(stacks)}
    sink = len(stacks)
    delta = np.full((sink + 1, 2 * k), sink, dtype=np.int64)
    for s, i in index.items():
        for b in range(k):
            if len(s) < depth:
                delta[i, b] = index[s + (b,)]
            if s and s[-1] == b:
                delta[i, k + b] = index[s[:-1]]
    output = np.zeros(sink + 1, dtype=np.int64)
    output[0] = 1
    return DFA(delta, 0, output, tuple(letters))


def language_dfa(name: str, letters) -> DFA:
    """The DFA of a language name (module docstring) over ``letters``.

    Raises
    ------
    UnknownNameError
        For a name that is none of these and not a file.
    """
    letters = tuple(str(a) for a in letters)
    text = str(name).strip().lower()
    if text == "parity":
        if len(letters) != 2:
            raise InvalidParameterError(f"parity is over two letters; this alphabet has {len(letters)} "
                                        "(use mod-2, or state --alphabet)")
        return parity_dfa(letters)
    m = re.fullmatch(r"mod-(\d+)", text)
    if m:
        return mod_dfa(int(m.group(1)), letters)
    m = re.fullmatch(r"dyck-(\d+)-(\d+)", text)
    if m:
        return dyck_dfa(int(m.group(1)), int(m.group(2)), letters)
    path = Path(str(name))
    if path.is_file():
        try:
            dfa = from_json(json.loads(path.read_text()))
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"{path}: not JSON ({exc})") from None
        if dfa.delta.shape[1] != len(letters):
            raise InvalidParameterError(f"{path}: {dfa.delta.shape[1]} letters, the model's alphabet has "
                                        f"{len(letters)}")
        return DFA(dfa.delta, dfa.start, dfa.output, letters)
    raise UnknownNameError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")


_ = accepts  # re-exported for the doctest
