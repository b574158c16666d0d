"""``commcomp automaton``: a model at a precision as a finite automaton, decided at every length.

:func:`automaton_analysis` builds the model (random, ``construction`` or a file, as every command
does), extracts its automaton over the task's alphabet (:mod:`.extract`; for Dyck the brackets,
with ``[CLS]`` read after each word) or a stated one, and, when the reachable set closed, reports

* the minimal DFA after readout (:func:`commcomp.automata.minimize`), as JSON and DOT;
* with ``against``: the product with the target language's DFA, which either proves that the
  model decides the target at every length (``equivalent: true``) or gives the shortest
  counterexample, re-run through the unsplit model token by token; ``against="task"`` takes the
  task's own predicate where it is a regular language of every length (``Task.language``: Dyck's
  ``dyck-k-D``), and the JSON's ``against`` names the language used;
* the transition monoid of the minimal DFA: ``aperiodic`` (the language is star-free,
  Schützenberger) or a ``period_witness`` (a word acting as a cycle of length k > 1), and in
  ``state_tracking`` the results on state tracking that verdict speaks to
  (:data:`commcomp.automata.results.STATE_TRACKING_RESULTS`: Sarrof, Veitsman, Hahn; Grazzi et al.;
  each with its evidence tag).

Examples
--------
>>> out = automaton_analysis("dyck", "rnn", "fixed:2:0", weights="construction", against="dyck-2-2")
>>> out["closed"], out["reachable_states"], out["minimal_states"], out["equivalent"], out["aperiodic"]
(True, 33, 8, True, True)
>>> automaton_analysis("dyck", "rnn", "fixed:2:0", weights="construction", against="dyck-2-3")["counterexample"]["word"]
'((()))'
"""

from __future__ import annotations

import time

import numpy as np

from commcomp.automata import LANGUAGES, language_dfa, minimize, shortest_difference, to_dot, to_json, transition_monoid
from commcomp.automata.dfa import DFA
from commcomp.automata.monoid import DEFAULT_MAX_ELEMENTS
from commcomp.automata.results import results_for
from commcomp.backend import to_numpy
from commcomp.errors import InvalidParameterError, TooLargeError

from ...simulate.outputs import answers_from_logits
from .build import task_model
from .extract import DEFAULT_MAX_STATES, extract_automaton

__all__ = ["automaton_analysis", "automaton_of_model", "write_dot", "write_dfa_json", "MAX_GRAPH_STATES", "MONOID_WORK", "DEFAULT_N"]

MONOID_WORK = 1 << 24  # monoid elements x states the closure may build
MAX_GRAPH_STATES = 4096  # the minimal DFA goes into the JSON up to this many states
DEFAULT_N = 4  # the task size a model is built (or its file checked) for; the automaton is length-free


def _task_alphabet(task, task_n: int, alphabet, suffix=None):
    """``(letters, suffix, names)``: the tokens read, the closing tokens (default: the task's
    ``[CLS]`` where it has one, else none), a name per token."""
    vocab = task.vocabulary(task_n)
    cls = getattr(task, "cls", None)
    if suffix is None:
        suffix = [] if cls is None else [int(cls)]
    suffix = [int(t) for t in suffix]
    if alphabet is None:
        letters = [t for t in range(task.vocab_size(task_n)) if t not in suffix]
    else:
        letters = [int(t) for t in alphabet]
    bad = [t for t in letters + suffix if not 0 <= t < task.vocab_size(task_n)]
    if bad:
        raise InvalidParameterError(f"alphabet or suffix tokens {bad} are outside the task's vocabulary "
                                    f"0..{task.vocab_size(task_n) - 1}")
    names = [vocab[t] if t < len(vocab) else str(t) for t in range(task.vocab_size(task_n))]
    return letters, suffix, names


def _task_language(task, alphabet, suffix) -> str:
    """``--against task``: the task's own predicate as a language of every length (``Task.language``),
    over the task's default letters only (another alphabet would change what the letters mean)."""
    if task.language is None:
        raise InvalidParameterError(f"--against task: {task.name}'s predicate is defined at one size n, not a "
                                    f"language of every length; name a language ({', '.join(LANGUAGES)})")
    if alphabet is not None or suffix is not None:
        raise InvalidParameterError("--against task reads the task's own letters: leave out --alphabet and --suffix")
    return task.language


def _word_text(names, word) -> str:
    parts = [names[t] for t in word]
    return "".join(parts) if all(len(p) == 1 for p in parts) else " ".join(parts)


def _rerun(model, tokens, suffix, classes, answer_kind) -> int:
    """The unsplit model's answer on one word (tokens, then the suffix), from its initial state."""
    row = np.asarray([list(tokens) + list(suffix)], dtype=np.int64)
    if row.shape[1] == 0:
        logits = model.readout(model.init_state(1))
    else:
        _, logits = model.run_with_output(model.xp.asarray(row))
    return int(np.asarray(answers_from_logits(to_numpy(logits)[:, None, :], answer_kind, classes))[0, 0])


def automaton_of_model(model, letters, suffix=(), names=None, *, classes=2, answer_kind="bool", against=None,
                       max_states=None, max_monoid=None) -> dict:
    """The ``automaton`` fields for a ready recurrent model over ``letters`` (module docstring)."""
    start = time.perf_counter()
    auto = extract_automaton(model, letters, suffix, classes=classes, answer_kind=answer_kind,
                             max_states=max_states or DEFAULT_MAX_STATES)
    names = list(names) if names is not None else [str(t) for t in range(max(letters) + 1)]
    out = {"letters": [names[t] for t in auto.letters], "tokens": list(auto.letters), "suffix": list(suffix),
           "closed": auto.closed, "closed_at_length": auto.closed_at_length,
           "reachable_states": auto.reachable_states, "roundtrip_failures": auto.roundtrip_failures,
           "stopped": auto.stopped, "seconds_explore": auto.seconds, "minimal_states": None,
           "against": against, "equivalent": None, "counterexample": None, "aperiodic": None,
           "period_witness": None, "monoid_size": None, "monoid_note": None, "minimal_dfa": None,
           "state_tracking": []}
    if not auto.closed:
        out["note"] = f"the reachable set did not close ({auto.stopped}): nothing holds at every length"
        out["seconds"] = time.perf_counter() - start
        return out, None
    named = DFA(auto.dfa.delta, 0, auto.dfa.output, tuple(out["letters"]))
    minimal = minimize(named)
    out["minimal_states"] = minimal.states
    out["accepting_minimal_states"] = int((minimal.output == 1).sum())
    if minimal.states <= MAX_GRAPH_STATES:
        out["minimal_dfa"] = to_json(minimal)
    if against is not None:
        target = language_dfa(against, out["letters"])
        word = shortest_difference(minimal, target)
        out["equivalent"] = word is None
        if word is not None:
            tokens = auto.tokens(word)
            model_answer = _rerun(model, tokens, suffix, classes, answer_kind)
            out["counterexample"] = {
                "word": _word_text(names, tokens), "tokens": tokens, "length": len(word),
                "model_answer": model_answer, "automaton_answer": int(minimal.output[_state_of(minimal, word)]),
                "in_language": bool(target.output[_state_of(target, word)] == 1)}
    try:
        # each element is a map of the S states: budget the work (elements x S), not only the elements
        budget = min(max_monoid or DEFAULT_MAX_ELEMENTS, max(1, MONOID_WORK // minimal.states))
        mon = transition_monoid(minimal, budget)
        out["monoid_size"], out["aperiodic"] = mon.size, mon.aperiodic
        if mon.period_witness is not None:
            w = mon.period_witness
            tokens = auto.tokens(w["word"])
            out["period_witness"] = {"word": _word_text(names, tokens), "tokens": tokens, "period": w["period"],
                                     "index": w["index"], "cycle": w["cycle"]}
    except TooLargeError as exc:
        out["monoid_note"] = str(exc)
    out["state_tracking"] = [{"id": r.id, "arxiv": r.arxiv, "evidence": r.evidence, "statement": r.statement}
                             for r in results_for(out["aperiodic"])]
    out["seconds"] = time.perf_counter() - start
    return out, minimal


def _state_of(dfa, word) -> int:
    q = dfa.start
    for a in word:
        q = int(dfa.delta[q, a])
    return q


def automaton_analysis(task, arch, precision, *, width=None, layers=None, weights="random", seed=0, n=None,
                       against=None, alphabet=None, suffix=None, max_states=None, max_monoid=None, model=None,
                       dot=False, dfa=False) -> dict:
    """The ``automaton`` JSON (module docstring; fields in docs/CONVENTIONS and the issue's list).

    Raises
    ------
    UnsupportedSplitError
        For a model that is not recurrent (a Transformer's state grows with the input).
    UnknownNameError
        For an unknown task, architecture or language.
    """
    tm = task_model(task, arch, n or DEFAULT_N, precision, width=width, layers=layers, weights=weights, seed=seed,
                    model=model)
    task_n = tm.reduction.task_size(tm.n)
    if against is not None and str(against).strip().lower() == "task":
        against = _task_language(tm.task, alphabet, suffix)
    letters, suffix, names = _task_alphabet(tm.task, task_n, alphabet, suffix)
    out = {"task": tm.task.name, "arch": tm.arch, "precision": tm.precision.name, "width": tm.width,
           "layers": tm.layers, "weights": tm.weights, "seed": tm.seed, "n": tm.n}
    fields, minimal = automaton_of_model(tm.model, letters, suffix, names, classes=tm.classes,
                                         answer_kind=tm.task.answer_kind, against=against,
                                         max_states=max_states, max_monoid=max_monoid)
    out.update(fields)
    if dot and minimal is not None:
        out["dot"] = to_dot(minimal, f"{tm.task.name} {tm.arch} {tm.precision.name}")
    if dfa and minimal is not None:
        out["dfa_file"] = to_json(minimal)  # whatever its size (the JSON's minimal_dfa stops at MAX_GRAPH_STATES)
    return out


def write_dfa_json(out: dict, path) -> None:
    """Write ``out["dfa_file"]`` (the minimal DFA, :func:`commcomp.automata.to_json`'s fields: a DFA
    file that ``against`` reads back) to ``path`` atomically and drop it from ``out``; as
    :func:`write_dot` otherwise."""
    if path is None:
        return
    import json

    from commcomp.output import write_text

    data = out.pop("dfa_file", None)
    if data is None:
        raise InvalidParameterError(f"no DFA written: the reachable set did not close ({out.get('stopped')})")
    write_text(path, json.dumps(data) + "\n")


def write_dot(out: dict, path) -> None:
    """Write ``out["dot"]`` (the minimal DFA) to ``path`` atomically and drop it from ``out``; nothing
    without a path. A state set that did not close has no DFA: then an error, before anything is written."""
    if path is None:
        return
    from commcomp.output import write_text

    text = out.pop("dot", None)
    if text is None:
        raise InvalidParameterError(f"no DOT written: the reachable set did not close ({out.get('stopped')})")
    write_text(path, text)
