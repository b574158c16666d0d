"""A recurrent model at a finite precision, read as a finite automaton over its letters.

From the start state, every reachable state steps on every letter (rows in fixed blocks:
:mod:`..reachable.stepping`), states are merged when their packed messages are bit-equal (the
state a class carries is the one decoded from its message, as in the reachable-states engine),
and the exploration goes breadth first until a length adds no new state (the set is *closed*:
every longer string reaches a state already seen, so the transition table is complete) or the
budget of states is exceeded. Each state keeps one back-pointer (parent, letter): its shortest
word (least in letter order), reconstructed only when asked.

The *output* of a state is the model's answer after the state reads the task's closing tokens
(``[CLS]`` for Dyck; none for other tasks, where the answer is read at the last letter from the
state): the argmax of the readout over the answer classes, run in the same fixed blocks. With the
outputs, the automaton is a :class:`commcomp.automata.DFA` whose language (output 1) is the model's
at every length: exactly, because a step is a function of (state bits, token) and the search
steps the decoded state (``roundtrip_failures`` counts states whose decoded copy differs; 0 for a
faithful codec).

Examples
--------
>>> from models.constructions.dyck_rnn import make_dyck_rnn
>>> model = make_dyck_rnn(2, "fixed:2:0").model
>>> auto = extract_automaton(model, letters=[0, 1, 2, 3], suffix=[4], classes=2)
>>> auto.closed, auto.closed_at_length, auto.dfa.states
(True, 2, 8)
>>> auto.word(3), auto.word(7), auto.dfa.output.tolist()      # ")" reaches the reject sink
((2,), (1, 1), [1, 0, 0, 0, 0, 0, 0, 0])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from commcomp.automata import DFA
from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError

from ...simulate.outputs import answers_from_logits
from ...simulate.running import concat_rows, take_rows
from ..reachable.engine import _group, _state_bits_changed
from ..reachable.stepping import ROWS, canonical, step_rows

__all__ = ["ModelAutomaton", "extract_automaton", "model_answers", "DEFAULT_MAX_STATES"]

DEFAULT_MAX_STATES = 1 << 15


@dataclass(frozen=True, eq=False)
class ModelAutomaton:
    """What :func:`extract_automaton` found.

    Attributes
    ----------
    dfa : DFA or None
        All reachable states (numbered by discovery) with their outputs; None when not closed.
    closed : bool
    closed_at_length : int or None
        The least L such that strings of length <= L reach every reachable state (length L + 1
        adds none).
    reachable_states : int
        States found (when not closed: before the budget stopped the search).
    letters : tuple of int  the tokens read, in letter-index order
    parent, letter : ``(S,)`` int64 back-pointers (-1 at the start state)
    depth : ``(S,)`` int64 length of each state's shortest word
    roundtrip_failures : int
    stopped : str or None
    seconds : float
    """

    dfa: DFA | None
    closed: bool
    closed_at_length: int | None
    reachable_states: int
    letters: tuple
    parent: np.ndarray
    letter: np.ndarray
    depth: np.ndarray
    roundtrip_failures: int
    stopped: str | None
    seconds: float

    def word(self, state: int) -> tuple:
        """The shortest word (letter indices, least in letter order) reaching ``state``."""
        out = []
        while self.parent[state] >= 0:
            out.append(int(self.letter[state]))
            state = int(self.parent[state])
        return tuple(out[::-1])

    def tokens(self, word) -> list:
        return [int(self.letters[a]) for a in word]


def _run_blocks_with_output(model, state: dict, tokens: np.ndarray):
    """``(state, logits (B, C))`` after ``tokens`` ``(B, T)`` from ``state``, every call with ``ROWS``
    rows (padded with copies of a block's first row), so a row's bits do not depend on its companions."""
    B = tokens.shape[0]
    states, logits = [], []
    for a in range(0, B, ROWS):
        b = min(a + ROWS, B)
        index = np.concatenate([np.arange(a, b), np.full(ROWS - (b - a), a)])
        if tokens.shape[1]:
            st, lg = model.run_with_output(model.xp.asarray(tokens[index]), take_rows(state, index))
        else:
            st = take_rows(state, index)
            lg = model.readout(st)
        keep = np.arange(b - a)
        states.append(take_rows(st, keep))
        logits.append(to_numpy(lg)[: b - a])
    return concat_rows(states), np.concatenate(logits, axis=0)


def model_answers(model, state: dict, suffix, classes: int, answer_kind: str = "bool") -> np.ndarray:
    """``(B,)`` int64: the model's answer from each row of ``state`` after the ``suffix`` tokens."""
    B = next(iter(state.values())).shape[0]
    tokens = np.tile(np.asarray(suffix, dtype=np.int64).reshape(1, -1), (B, 1))
    _, logits = _run_blocks_with_output(model, state, tokens)
    return np.asarray(answers_from_logits(logits[:, None, :], answer_kind, classes))[:, 0].astype(np.int64)


def extract_automaton(model, letters, suffix=(), *, classes: int = 2, answer_kind: str = "bool",
                      max_states: int = DEFAULT_MAX_STATES, max_length: int | None = None) -> ModelAutomaton:
    """Explore the model's states over ``letters`` (token ids) until closure (module docstring).

    Parameters
    ----------
    model : RecurrentModel
        At a finite precision (the states of a float64 model are finite too, but rarely few).
    letters : sequence of int
        The tokens of the alphabet, in letter-index order.
    suffix : sequence of int
        Tokens read after a word before the answer (the task's ``[CLS]``).
    classes : int
        Answer classes of the readout (2 for bool tasks).
    max_states, max_length : int
        The budget: stop (not closed) when more states, or longer words, would be needed.
    """
    if answer_kind not in ("bool", "symbol"):
        raise InvalidParameterError(f"an automaton's outputs are classes; this task's answers are {answer_kind}")
    letters = tuple(int(a) for a in letters)
    if not letters:
        raise InvalidParameterError("the alphabet is empty")
    if len(set(letters)) != len(letters):
        raise InvalidParameterError(f"the alphabet repeats a token: {letters}")
    if not len(suffix) and getattr(model, "layers", None) and \
            model.layers[-1].output_from_state(model._split(model.init_state(1))[-1]) is None:
        raise InvalidParameterError(f"{model.arch}: the answer after a word is not a function of the state "
                                    "(it depends on the last step's input); read it after a closing token")
    start = time.perf_counter()
    A = len(letters)
    keys, state = canonical(model, model.init_state(1))
    index = {keys[0].tobytes(): 0}
    parent, letter, depth = [-1], [-1], [0]
    rows = [state]  # decoded states of each discovery level, concatenated below
    delta = {}  # state -> (A,) successors
    frontier, frontier_ids = state, np.array([0])
    failures, length, stopped = 0, 0, None
    letter_arr = np.asarray(letters, dtype=np.int64)
    while len(frontier_ids):
        if max_length is not None and length >= max_length:
            stopped = f"budget: strings longer than max_length {max_length} would be needed"
            break
        F = len(frontier_ids)
        stepped = step_rows(model, take_rows(frontier, np.repeat(np.arange(F), A)), np.tile(letter_arr, F))
        cand_keys, decoded = canonical(model, stepped)  # (F * A, bytes)
        failures += _state_bits_changed(model, stepped, decoded)
        first, inverse = _group(cand_keys)
        ids = np.empty(len(first), dtype=np.int64)
        new = []
        for k, row in enumerate(first.tolist()):
            key = cand_keys[row].tobytes()
            q = index.get(key)
            if q is None:
                q = len(parent)
                index[key] = q
                parent.append(int(frontier_ids[row // A]))
                letter.append(row % A)
                depth.append(length + 1)
                new.append(k)
            ids[k] = q
        succ = ids[inverse].reshape(F, A)
        for i, q in enumerate(frontier_ids.tolist()):
            delta[q] = succ[i]
        if len(parent) > max_states:
            stopped = f"budget: more than max_states {max_states} states (at length {length + 1})"
            break
        new = np.asarray(new, dtype=np.int64)
        frontier = take_rows(decoded, first[new]) if len(new) else None
        frontier_ids = ids[new]
        if len(new):
            rows.append(frontier)
            length += 1
    closed = stopped is None
    S = len(parent)
    dfa = None
    if closed:
        table = np.stack([delta[q] for q in range(S)])  # (S, A)
        everything = concat_rows(rows)  # (S, ...) in discovery order = state ids
        outputs = model_answers(model, everything, suffix, classes, answer_kind)
        dfa = DFA(table, 0, outputs, tuple(str(a) for a in letters))
    return ModelAutomaton(dfa, closed, length if closed else None, S, letters, np.asarray(parent),
                          np.asarray(letter), np.asarray(depth), failures, stopped, time.perf_counter() - start)
