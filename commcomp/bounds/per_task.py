"""The catalogue per task instance: what N is, which parameters a task fixes, the bound for one row.

The catalogue's formulas use each paper's N (:attr:`Bound.n_means`): the sequence length in tokens
for every task except Index Lookup and Multi-Index Lookup, whose N counts the data symbols
s_1..s_N (BHBK).  :func:`catalogue_N` converts a task's sequence length to that N, and
:func:`bound_parameters` gives the bound parameters a task instance fixes (qSA's q and d', the
number k of indices of Multi-Index Lookup), so a table evaluates every entry at the task it runs.

Examples
--------
>>> catalogue_N("multi-index-lookup", 32), catalogue_N("index-lookup", 9), catalogue_N("dyck", 33)
(16, 8, 33)
>>> bound_parameters("qsa", 17)
{'q': 8, 'dprime': 2}
>>> best_lower_bound("multi-index-lookup", "elman", 32, 32).value     # D^{A->B}(DISJ_8) = 8
8
>>> [w.width for w in qsa_construction_widths(8, 2, 17)]
[19, 19, 19]
"""

from __future__ import annotations

from dataclasses import dataclass

from commcomp.bounds.calculator import BoundRow, compute_bounds, precision_bits
from commcomp.bounds.catalogue import evaluate_bound, get_bound
from commcomp.bounds.records import resolve_task
from commcomp.errors import InvalidParameterError

__all__ = ["QsaWidth", "SPECIAL_ROWS", "SpecialRow", "best_construction", "best_lower_bound",
           "bound_parameters", "catalogue_N", "protocol_lower_bound_bits", "qsa_construction_widths",
           "qsa_explicit_width"]

#: Defaults of the registered tasks (reductions/tasks): qSA's value dimension, MIL's data factor.
QSA_DIM = 2
MIL_DATA_FACTOR = 2


def _length(length: object) -> int:
    if isinstance(length, bool) or not hasattr(length, "__index__") or int(length) < 2:
        raise InvalidParameterError(f"sequence length must be an integer >= 2, got {length!r}")
    return int(length)


def catalogue_N(task: str, length: int, *, k: int | None = None) -> int:
    """The N the catalogue's formulas use for an instance of ``task`` with ``length`` tokens.

    Index Lookup: ``length - 1`` (N symbols, then the query).  Multi-Index Lookup: ``length - 2k``
    (k indices before and after the N data symbols; ``k`` defaults to the registered task's
    ``length // (2 + data_factor)`` = ``length // 4``).  Every other task: ``length``.

    Raises
    ------
    InvalidParameterError
        A length below 2, or a Multi-Index Lookup length that leaves no data symbol.
    """
    task, length = resolve_task(task), _length(length)
    if task == "index-lookup":
        return length - 1
    if task == "multi-index-lookup":
        k = length // (2 + MIL_DATA_FACTOR) if k is None else int(k)
        if k < 1 or length - 2 * k < 2:
            raise InvalidParameterError(f"multi-index-lookup: {length} tokens and k = {k} leave no data")
        return length - 2 * k
    return length


def bound_parameters(task: str, length: int, *, dim: int = QSA_DIM, k: int | None = None) -> dict:
    """Bound parameters a task instance of ``length`` tokens fixes (keywords of ``compute_bounds``).

    qSA: ``q = (length - 1) // 2`` (N = 2q + 1 rows) and ``dprime = dim`` (the task's value
    dimension, default 2).  Multi-Index Lookup: ``k`` (indices).  Induction heads: ``alphabet = 3`` (the
    INDEX partition writes a0, a1 and a2).  Other tasks: none (the Dyck
    reductions use Dyck-(2,2) and Dyck-(2,1), the catalogue's default types and depth).
    """
    task, length = resolve_task(task), _length(length)
    if task == "qsa":
        return {"q": (length - 1) // 2, "dprime": int(dim)}
    if task == "multi-index-lookup":
        return {"k": length // (2 + MIL_DATA_FACTOR) if k is None else int(k)}
    if task == "induction-heads":  # the INDEX partition's alphabet (reductions.composition)
        return {"alphabet": 3}
    return {}


def _rows(task, arch, length, precision, heads, layers, kind, task_params, **options) -> list[BoundRow]:
    k = task_params.get("k")
    params = bound_parameters(task, length, **task_params)
    return compute_bounds(catalogue_N(task, length, k=k), precision, heads=heads, task=task, arch=arch,
                          layers=layers, kind=kind, **options, **params)


def best_lower_bound(task: str, arch: str, length: int, precision: object, heads: int = 1, *,
                     layers: int | None = None, problem: str | None = None, deterministic: bool = True,
                     **task_params) -> BoundRow | None:
    """The strongest lower bound (largest minimum width) for one table row, or None.

    Evaluated at :func:`catalogue_N` with :func:`bound_parameters`; ``problem`` keeps only the
    entries about that embedded problem (the reduction the row runs), so a Dyck row that runs
    DISJ -> Dyck-(2,2) cites a Disjointness bound.  ``deterministic=False`` keeps randomized forms.

    Examples
    --------
    >>> r = best_lower_bound("dyck", "transformer", 33, 16, layers=1, problem="disjointness")
    >>> r.theorem, r.problem
    ('COMMCOMP-DYCK22-1TF-1W', 'disjointness')
    """
    rows = _rows(task, arch, length, precision, heads, layers, "lower", task_params,
                 include_randomized=not deterministic)
    rows = [r for r in rows if r.min_width is not None and (problem is None or r.problem == problem)]
    return max(rows, key=lambda r: (r.min_width, r.value or 0), default=None)


def best_construction(task: str, arch: str, length: int, precision: object, heads: int = 1, *,
                      layers: int | None = None, allow_infinite_precision: bool = False,
                      **task_params) -> BoundRow | None:
    """The narrowest construction with a width for one table row, or None.

    Constructions stated at infinite precision (SHT Thm 3) are skipped unless asked for.

    Examples
    --------
    >>> r = best_construction("qsa", "transformer", 17, 32, layers=1)
    >>> r.min_width, r.precision_model
    (19, 'p-bit numbers')
    """
    rows = _rows(task, arch, length, precision, heads, layers, "upper", task_params)
    rows = [r for r in rows if r.min_width is not None
            and (allow_infinite_precision or r.precision_model != "infinite precision")]
    return min(rows, key=lambda r: r.min_width, default=None)


@dataclass(frozen=True)
class QsaWidth:
    """One qSA construction's width at the task's q and d'."""

    name: str
    theorem: str
    width: int
    precision_model: str
    label: str


def qsa_explicit_width(q: int, dprime: int) -> int:
    """Width of commcomp's explicit qSA construction (moment-curve keys): ``d' + 2q + 1``.

    Examples
    --------
    >>> qsa_explicit_width(8, 2)
    19
    """
    return int(dprime) + 2 * int(q) + 1


def qsa_construction_widths(q: int, dprime: int, length: int | None = None) -> list[QsaWidth]:
    """The qSA construction widths at the task's ``q`` and ``d'`` (N = ``length``, default 2q + 1).

    C7a (random keys, SHT Thm 2 at fixed precision), commcomp's explicit moment-curve construction
    (finite precision; its margin needs about 2q log2 N bits, checked where it runs), and SHT Thm 3
    (the same width, proved for infinite precision only: labelled so).
    """
    length = 2 * int(q) + 1 if length is None else _length(length)
    out = []
    for name, theorem in (("qsa-random-keys (C7a)", "SHT-qSA-UB-p"),
                          ("qsa-moment-curve (commcomp)", "COMMCOMP-qSA-explicit"),
                          ("SHT Thm 3", "SHT-qSA-UB-inf")):
        bound = get_bound(theorem)
        width = evaluate_bound(bound, N=length, q=q, dprime=dprime)
        out.append(QsaWidth(name, theorem, int(width), bound.precision_model or "p-bit numbers", bound.label))
    return out


def protocol_lower_bound_bits(problem: str, n: int, rounds: int) -> int:
    """Bits any protocol of this shape must send when Bob alone learns f(x, y).

    ``rounds == 1`` (Alice -> Bob): ``D^{A->B}(f)``.  ``rounds >= 2``: ``D(f) - 1`` (appending
    Bob's answer bit turns such a protocol into one where both learn it), so EQ_n and DISJ_n need
    ``n``, not ``D(f) = n + 1``.

    Examples
    --------
    >>> protocol_lower_bound_bits("equality", 8, 2), protocol_lower_bound_bits("index", 8, 1)
    (8, 8)
    """
    from commcomp.problems import get_problem

    prob = get_problem(problem)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise InvalidParameterError(f"rounds must be an integer >= 1, got {rounds!r}")
    if rounds == 1:
        return prob.deterministic_one_way_bits(n)
    return max(0, prob.deterministic_bits(n) - 1)


@dataclass(frozen=True)
class SpecialRow:
    """A row for an entry that is not a plain (task, architecture) bound: k-DNF, CoT, RAG, hybrid."""

    key: str
    task: str | None
    arch: str
    layers: int
    theorems: tuple[str, ...]
    construction: str | None
    cot: bool
    note: str
    confirmable: str


SPECIAL_ROWS: tuple[SpecialRow, ...] = (
    SpecialRow("k-dnf", None, "transformer", 2, ("BHBK-kDNF-2TF", "COMMCOMP-kDNF-2TF", "BHBK-Bool-LB-1TF-1W"),
               "k-dnf-2tf", False,
               "k-DNF with at most N terms, N input bits then [CLS] (models/constructions/dnf.py); 1 layer: "
               "BHBK-Bool-LB with C = D^{A->B}(f) of the formula",
               "the construction on every input for N <= 10, at the stated precision"),
    SpecialRow("cot-rnn", "istree", "recurrent", 1, ("COMMCOMP-ISTREE-RNN", "WDL-IsTree-RNN"), None, True,
               "RNN lower bounds hold with chain of thought of any length: every generated token is a function "
               "of the state after the input (§8.2)",
               "the one-way protocol with Bob generating the CoT (reductions.simulate, cot=True)"),
    SpecialRow("cot-transformer", "istree", "transformer", 2, ("WDL-IsTree-TF",), None, True,
               "Transformer with a CoT of length O(n) (DFS Euler tour): constant size [P][R]",
               "not checked: no explicit construction"),
    SpecialRow("rag", "istree", "recurrent", 1, ("WDL-RAG",), None, True,
               "RNN + In-context RAG + CoT solves every polynomial-time problem: the retrieved tokens depend "
               "on Alice's prefix, so the one-way protocol and its bound do not apply",
               "not checked: no retrieval model"),
    SpecialRow("hybrid", "string-equality", "hybrid", 1,
               ("COMMCOMP-HYBRID-EQ", "COMMCOMP-HYBRID-DISJ", "COMMCOMP-HYBRID-MATCH3", "COMMCOMP-HYBRID-ISTREE"),
               None, False,
               "without CoT: the three-message split S(m)p + H m p + H(m+1)(p + ceil(log2 N)) >= D(f) - 1, "
               "so the width grows with N; with CoT one round per generated token, no bound (WDL-Hybrid)",
               "the hybrid split bit for bit against the unsplit model (reductions.simulate.hybrid)"),
    SpecialRow("hybrid-cot", None, "hybrid", 1, ("WDL-Hybrid",), None, True,
               "RNN + one attention layer + CoT solves every polynomial-time problem [P]",
               "not checked: a statement"),
)
