"""Bounds computed from a task itself at small N: no reduction, no theorem.

For a task of length N and a cut t (Alice holds positions < t, Bob the rest), the communication
matrix has a row for every prefix and a column for every suffix, holding the task's answer. Two
prefixes with equal rows are Myhill–Nerode equivalent at that length; so the number of distinct rows
at cut t is the number of states any recurrent model (any transition function) must be able to tell
apart after t tokens, and

    exact minimum state bits = max over cuts t of ceil(log2(#distinct rows at t)).

It is exact in both directions: a model whose state is the class of its prefix solves the task with
that many bits. The input domain is the product of each position's token set, read off the task's
sampler (the positions' alphabets) and enumerated; it is used only for tasks where every such
sequence is a valid input (:data:`PRODUCT_DOMAIN_TASKS`), and users can pass their own domain.

Examples
--------
>>> rows = computed_state_bits("index-lookup", 4)      # 4 symbols, then the query
>>> rows.max_state_bits, rows.classes_per_cut[-1]
(4, 16)
>>> computed_state_bits("dyck", 3).max_state_bits      # Dyck-(2,2): at most 8 DFA states, 3 bits
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError, TooLargeError
from commcomp.limits import TOKEN_BYTES, check_memory

__all__ = ["ComputedBound", "computed_state_bits", "product_domain", "PRODUCT_DOMAIN_TASKS",
           "MAX_DOMAIN", "catalogue_check", "computed_bounds"]

#: Tasks whose every sequence in the product of per-position alphabets is a valid input.
PRODUCT_DOMAIN_TASKS = ("index-lookup", "string-equality", "string-disjointness", "dyck", "match2", "match3")
MAX_DOMAIN = 1 << 20


@dataclass(frozen=True)
class ComputedBound:
    """Distinct rows (Myhill–Nerode classes) at every prefix/suffix cut of one task length."""

    task: str
    n: int
    length: int
    domain_size: int
    classes_per_cut: tuple[int, ...]   # cut t = 1 .. N-1
    max_state_bits: int
    worst_cut: int

    def to_json(self) -> dict:
        return {"task": self.task, "n": self.n, "length": self.length, "domain_size": self.domain_size,
                "classes_per_cut": list(self.classes_per_cut), "max_state_bits": self.max_state_bits,
                "worst_cut": self.worst_cut, "kind": "lower", "quantity": "state_bits",
                "label": "computed (exact, Myhill-Nerode classes)", "theorem": "computed"}


def product_domain(task, n: int, samples: int = 4096, seed: int = 0) -> np.ndarray:
    """Every sequence in the product of the per-position token sets seen in ``samples`` samples."""
    n = task.check_n(n) if hasattr(task, "check_n") else n
    # the samples are drawn at once (commcomp.limits); the domain limit is checked on them below
    check_memory(f"computed bounds for {task.name}", "n", n, lambda v: TOKEN_BYTES * samples * task.length(v),
                 low=getattr(task, "min_n", 1), detail=f"{samples} sampled sequences, {TOKEN_BYTES} bytes a token")
    batch = task.sample(n, samples, np.random.default_rng(seed))
    tokens = np.asarray(batch.tokens)
    alphabets = [np.unique(tokens[:, j]) for j in range(tokens.shape[1])]
    size = math.prod(len(a) for a in alphabets)
    if size > MAX_DOMAIN:
        raise TooLargeError(f"{task.name} at n = {n} has {size} inputs; the limit is {MAX_DOMAIN}")
    grids = np.meshgrid(*alphabets, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1).astype(np.int64)  # (D, N)


def computed_state_bits(task, n: int, inputs=None) -> ComputedBound:
    """Exact minimum state bits of a recurrent model for ``task`` at size ``n`` (see module doc).

    Parameters
    ----------
    task : str or Task
    n : int
        The task's size parameter.
    inputs : array (D, N), optional
        The input domain; it must be a product set over the cut (every prefix with every suffix).
        Default: :func:`product_domain` for the tasks in :data:`PRODUCT_DOMAIN_TASKS`.
    """
    from reductions.registry import get_task

    task = get_task(task) if isinstance(task, str) else task
    if inputs is None:
        if task.name not in PRODUCT_DOMAIN_TASKS:
            raise InvalidParameterError(
                f"computed bounds need an input domain that is a product over positions; {task.name} "
                f"is not one (supported: {', '.join(PRODUCT_DOMAIN_TASKS)}; pass inputs= for your own)")
        inputs = product_domain(task, n)
    inputs = np.asarray(inputs, dtype=np.int64)
    D, N = inputs.shape
    answers = np.asarray(task.ground_truth(task.make_batch(n, inputs)))
    answers = answers.reshape(D, -1)
    _, answer_ids = np.unique(answers, axis=0, return_inverse=True)
    answer_ids = answer_ids.reshape(-1)
    classes = []
    for cut in range(1, N):
        _, prefix_ids = np.unique(inputs[:, :cut], axis=0, return_inverse=True)
        _, suffix_ids = np.unique(inputs[:, cut:], axis=0, return_inverse=True)
        prefix_ids, suffix_ids = prefix_ids.reshape(-1), suffix_ids.reshape(-1)
        R, C = prefix_ids.max() + 1, suffix_ids.max() + 1
        if R * C != D:
            raise InvalidParameterError(f"the domain is not a product set at cut {cut} ({R} x {C} != {D})")
        matrix = np.full((R, C), -1, dtype=np.int64)
        matrix[prefix_ids, suffix_ids] = answer_ids  # (R, C): the task's communication matrix at this cut
        classes.append(int(np.unique(matrix, axis=0).shape[0]))
    bits = [math.ceil(math.log2(c)) if c > 1 else 0 for c in classes]
    worst = int(np.argmax(bits)) + 1 if bits else 0
    return ComputedBound(task.name, int(n), int(N), int(D), tuple(classes), max(bits, default=0), worst)


def catalogue_check(bound: ComputedBound, precision=32) -> dict:
    """The catalogue's strongest deterministic recurrent lower bound at this task length, against the
    exact count: a check that can fail.

    The catalogue is evaluated at its own N for the task (:func:`commcomp.bounds.catalogue_N`: the
    symbol count for Index Lookup, the sequence length otherwise).  The computed bits are exact over
    the whole product domain, which contains every input a reduction embeds, so a valid lower bound
    on state bits can never exceed them: ``consistent`` is False exactly when it does.

    Examples
    --------
    >>> check = catalogue_check(computed_state_bits("index-lookup", 4))
    >>> check["catalogue_N"], check["catalogue_state_bits"], check["consistent"]   # BHBK-IL-RNN: N = 4
    (4, 4, True)
    """
    from commcomp.bounds import bound_parameters, catalogue_N, compute_bounds

    N = catalogue_N(bound.task, bound.length)
    rows = [r for r in compute_bounds(max(2, N), precision, task=bound.task, arch="elman", kind="lower",
                                      include_randomized=False, **bound_parameters(bound.task, bound.length))
            if r.value is not None]
    best = max(rows, key=lambda r: r.value, default=None)
    value = None if best is None else best.value
    return {"catalogue_N": N, "catalogue_state_bits": value,
            "catalogue_theorem": None if best is None else f"{best.theorem} {best.tag}",
            "consistent": None if value is None else bool(value <= bound.max_state_bits)}


def computed_bounds(tasks=None, sizes=(3,), precision=32) -> list[dict]:
    """``bounds --computed``: for each task (default :data:`PRODUCT_DOMAIN_TASKS`) and size, the exact
    minimum state bits (:func:`computed_state_bits`) beside the catalogue's bound (:func:`catalogue_check`).

    >>> [r["max_state_bits"] for r in computed_bounds(["index-lookup"], [2, 3])]
    [2, 3]
    """
    results = []
    for task in tasks or PRODUCT_DOMAIN_TASKS:
        for n in sizes:
            bound = computed_state_bits(task, n)
            results.append({**bound.to_json(), **catalogue_check(bound, precision)})
    return results
