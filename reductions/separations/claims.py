"""The papers' claims, each with both sides run at the N where it bites, and a verdict that can fail.

For every :class:`~.claim_specs.ClaimSpec`, :func:`evaluate_claims` reads the weak side's lower bound
and the strong side's explicit width at the crossover and beyond (from the separation ladders of
:mod:`.rows`, which it reuses, so nothing is computed twice), runs the checks at the crossover and
gives a verdict.  A claim is ``shown`` at N only when all four pass:

(a) ``construction`` — the strong side's explicit weights are correct at that N and precision (every
    input when few, else random plus adversarial inputs: :func:`.checks.construction_check`);
(b) ``witness`` — a model of the weak architecture whose message bits are below the bound is
    exhibited failing: an exact (x, x', y), re-run through the unsplit model
    (:func:`reductions.search.witness.find_witness`, or a finder registered for the architecture
    with :func:`register_witness_finder`).  A *complete* search that finds no collision while the
    bits are below what the problem needs contradicts the theorem: ``FAILED``, not "none";
(c) ``protocol`` — the strong side's split is faithful bit for bit and sends at least what the
    problem needs with that many rounds (``not applicable`` only where a split of the strong side
    cannot exist: a recurrent model under an interleaved split);
(d) ``widths`` — the weak bound at N exceeds the explicit width at N.

A check that did not run, or found nothing, makes the verdict ``not shown: <why>``; one that failed
makes it ``not shown: FAILED ...``.  Never ``shown`` beside a failed check.

Examples
--------
>>> from .checks import Check
>>> ok = {"construction": Check("construction", "passed", "45/45"), "witness": Check("witness", "found", "x"),
...       "protocol": Check("protocol", "passed", "faithful"), "widths": Check("widths", "passed", "21 > 20")}
>>> claim_verdict(ok)
('shown', '')
>>> claim_verdict({**ok, "witness": Check("witness", "not found", "none among 1024 inputs")})
('not shown', 'no witness: none among 1024 inputs')
>>> claim_verdict({**ok, "construction": Check("construction", "FAILED", "54/81 correct")})[1]
'FAILED (a) construction: 54/81 correct'
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Callable

from commcomp.errors import CommcompError

from .checks import Check, adversarial_budget, construction_check, protocol_check, witness_check
from .claim_results import ClaimPoint, ClaimResult, claim_verdict, widths_check as _widths_check  # noqa: F401
from .claim_specs import CLAIMS, DERIVED, ClaimSpec
from .rows import DEFAULT_CHECK_MAX_LENGTH

__all__ = ["ClaimPoint", "ClaimResult", "evaluate_claims", "claim_verdict", "register_witness_finder",
           "WITNESS_FINDERS"]

#: (arch, layers) -> a witness finder for that weak architecture, called as
#: ``finder(task, n, precision, *, width, heads, budget, seed)`` and returning what
#: :func:`reductions.search.witness.find_witness` returns (``found``, ``complete``, ``x``, ``x_prime``,
#: ``y``, ``wrong_on``: the answer that is wrong when both inputs are re-run through the unsplit model,
#: ``bits_per_message``, ``lower_bound_bits``, ``method``, ``tried``).  Empty by default: the
#: 1-layer Transformer's collision finder is reached through find_witness's ``auto`` method already.
WITNESS_FINDERS: dict[tuple[str, int], Callable] = {}

def register_witness_finder(arch: str, layers: int, finder: Callable) -> None:
    """Use ``finder`` for check (b) of every claim whose weak side is ``arch`` with ``layers``."""
    WITNESS_FINDERS[(str(arch), int(layers))] = finder


def _same_sides(spec: ClaimSpec, sep) -> bool:
    return (sep.task, sep.weak_arch, sep.weak_layers) == (spec.task, spec.weak_arch, spec.weak_layers) and (
        spec.strong_arch is None or (sep.strong_arch, sep.strong_layers, sep.construction)
        == (spec.strong_arch, spec.strong_layers, spec.construction))


def _paper(spec: ClaimSpec, task: str, length: int, bits: int, heads: int):
    """The bound shown beside the strongest (``spec.beside_bound``) at this instance."""
    if spec.beside_bound is None:
        return None
    from commcomp.bounds import bound_parameters, catalogue_N, compute_bounds

    try:
        rows = compute_bounds(catalogue_N(task, length), bits, heads=heads, task=task, arch=spec.weak_arch,
                              layers=spec.weak_layers, kind="lower", include_randomized=False,
                              **bound_parameters(task, length))
    except CommcompError:
        return None
    return next((r for r in rows if r.theorem == spec.beside_bound and r.min_width is not None), None)


def _point(spec, row, bits, heads, crossing) -> ClaimPoint:
    paper = _paper(spec, row.task, row.length, bits, heads)
    same = paper is not None and paper.theorem == row.lower_bound_theorem
    return ClaimPoint(row.N, row.n, row.length, row.lower_bound_width, row.lower_bound_theorem,
                      row.lower_bound_evidence, None if paper is None or same else paper.min_width,
                      None if paper is None or same else paper.theorem,
                      None if paper is None or same else paper.evidence, row.construction_width,
                      row.catalogue_construction_width, crossing)


def _strict_witness(check: Check, spec: ClaimSpec, n, fmt, *, weak_width, budget, seed, heads) -> Check:
    """(b) as the claims read it: a complete search below the bound with no collision is a FAIL; a
    registered finder is tried when the generic search found nothing."""
    if check.status == "not found" and check.data.get("complete"):
        bits, need = check.data.get("bits_per_message"), check.data.get("lower_bound_bits")
        if bits is not None and need is not None and bits < need:
            return Check("witness", "FAILED", f"a complete search found no collision with {bits} bits < {need}: "
                         "this contradicts the bound", check.data)
    finder = WITNESS_FINDERS.get((spec.weak_arch, spec.weak_layers))
    if check.status == "found" or finder is None:
        if check.status == "not found" and spec.weak_arch == "transformer" and spec.weak_layers == 1:
            return Check("witness", "not found", f"{check.detail}; the zero-sum search of the attention sums "
                         "(reductions.search.attention, run by find_witness) found no collision either", check.data)
        return check
    try:
        out = finder(spec.task, n, fmt, width=weak_width, heads=heads, budget=budget, seed=seed)
    except CommcompError as exc:
        return Check("witness", "not checked", f"the registered finder refused: {(str(exc).splitlines() or ['-'])[0]}")
    data = {k: out.get(k) for k in ("method", "complete", "found", "x", "x_prime", "y", "wrong_on", "tried",
                                    "bits_per_message", "lower_bound_bits", "width")}
    bits, need = out.get("bits_per_message"), out.get("lower_bound_bits")
    below = bits is not None and need is not None and bits < need
    if out.get("found") and out.get("wrong_on") in ("x", "x_prime") and not below:
        return Check("witness", "not checked", f"m = {out.get('width')} sends {bits} bits, not below the {need} "
                     f"the problem needs: a wrong answer there witnesses no bound ({out.get('method')})", data)
    if out.get("found") and out.get("wrong_on") in ("x", "x_prime"):
        return Check("witness", "found", f"m = {out.get('width')}, {bits} bits < {need}: wrong on "
                     f"{out['wrong_on']} ({out.get('method')})", data)
    if out.get("complete") and below:
        return Check("witness", "FAILED", f"a complete search found no collision with {bits} bits < {need}: "
                     "this contradicts the bound", data)
    return Check("witness", "not found", f"the registered finder found none ({out.get('method')})", data)


def _run_checks(spec, sep, curves, n, fmt, lower_width, *, samples, budget, weak_width, weights, seed,
                heads) -> tuple[Check, ...]:
    a = construction_check(sep.task, sep.construction, n, fmt, samples=samples, seed=seed)
    b = witness_check(sep.task, sep.weak_arch, sep.weak_layers, n, fmt, lower_width=lower_width,
                      weak_width=weak_width, weights=weights, budget=budget, seed=seed, heads=heads,
                      cot=spec.cot)
    c = protocol_check(sep.task, sep.strong_arch, sep.strong_layers, n, fmt, construction=sep.construction,
                       instances=min(samples, 32), seed=seed, heads=heads)
    return a, b, c


def _protocol_applies(check: Check, spec: ClaimSpec) -> Check:
    """(c) for a recurrent strong side under an interleaved split: no such split can exist (a
    bounded Dyck language is regular), so there is nothing to check."""
    if check.status == "not checked" and spec.strong_arch in ("rnn", "elman", "lstm", "gru") and \
            "interleaved" in check.detail:
        return Check("protocol", "not applicable", "the strong side is recurrent and the reduction's split "
                     "interleaved: the constant-size RNN has no such protocol to check (a bounded Dyck "
                     "language is regular)")
    return check


def _ladder_for(spec: ClaimSpec, ladders):
    at = separation_for(spec, [lad.separation for lad in ladders])
    return None if at is None else ladders[at]


def separation_for(spec: ClaimSpec, separations) -> int | None:
    """The index of the separation whose ladder ``spec``'s line reads, or None: the one with the
    claim's sides, else (a claim with no strong side to run) the first with its weak side."""
    exact = next((i for i, sep in enumerate(separations) if _same_sides(spec, sep)), None)
    if exact is not None or spec.construction is not None:
        return exact
    return next((i for i, sep in enumerate(separations) if (sep.task, sep.weak_arch, sep.weak_layers)
                 == (spec.task, spec.weak_arch, spec.weak_layers)), None)


def reads_a_ladder(spec: ClaimSpec) -> bool:
    """Whether ``spec``'s line is read off a separation's ladder (qSA's and the average-case and
    read-twice lines build their own)."""
    return spec.q is None and spec.claim not in _own_lines()


def _own_lines() -> dict:
    """The lines that are not separations and evaluate themselves: claim id -> evaluator."""
    from .claims_average import AVERAGE_CLAIMS
    from .claims_jrt import JRT_CLAIMS

    return {**AVERAGE_CLAIMS, **JRT_CLAIMS}


def _lower_only(spec, lad, fmt, bits, heads, **witness_options) -> ClaimResult:
    """A claim whose strong side cannot be run: the weak bound on the ladder's sizes, the witness
    where the ladder ran one (on the claim's own reduction when it names one: ``problem``), and why
    it is not shown."""
    rows = lad.rows[:3] if lad is not None else ()
    points = tuple(_point(spec, r, bits, heads, False) for r in rows)
    points = tuple(ClaimPoint(**{**asdict(p), "strong_width": None, "catalogue_width": None}) for p in points)
    ran = next((r for r in rows if any(c.ran for c in r.checks)), None)
    wit = next((c for c in ran.checks if c.name == "witness"), None) if ran is not None else None
    if spec.problem is not None and ran is not None:
        from reductions.registry import get_reduction

        size = _same_length_size(spec.task, spec.problem, ran.n)
        wit = witness_check(spec.task, spec.weak_arch, spec.weak_layers, size, fmt, lower_width=ran.lower_bound_width,
                            heads=heads, cot=spec.cot, problem=spec.problem, **witness_options)
        at = int(get_reduction(spec.task, spec.problem).length(size))
        wit = Check(wit.name, wit.status, f"{wit.detail} ({spec.problem} at N = {at}, beside N = {ran.length})",
                    wit.data)
    why = spec.missing or "lower bound only: no strong side in the sources"
    checks = (Check("construction", "not checked", why), wit or Check("witness", "not checked", "no row checked"),
              Check("protocol", "not checked", why), Check("widths", "not checked", why))
    return ClaimResult(spec, fmt.name, None, None, points, checks, None if ran is None else ran.N,
                       "not shown", why)


def _same_length_size(task: str, problem: str, n: int) -> int:
    """The largest size of ``problem``'s reduction of ``task`` whose input is at most as long as the
    default reduction's at size n (the crossover's N): as long where the reduction's lengths allow it
    (induction heads' prefix split, composition's ``index@bits``), else the nearest shorter one
    (composition's ``index@split``: N = 4n + 1); 1 when even size 1 is longer."""
    from reductions.registry import get_reduction

    length, own = int(get_reduction(task).length(n)), get_reduction(task, problem)
    lo, hi = 1, max(1, length)
    while lo < hi:  # lengths grow with the size: the largest size not longer
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if int(own.length(mid)) <= length else (lo, mid - 1)
    return lo


def _separation_claim(spec, lad, fmt, bits, *, heads, samples, budget, weak_width, weights, seed,
                      check_max_length) -> ClaimResult:
    from .ladder import WidthCurves

    x = lad.crossover_n_explicit
    if x is None:
        where = (f"the catalogue's formula crosses at N = {lad.crossover_N_catalogue}, beyond the explicit "
                 "weights built (--max-n, EXPLICIT_MAX_LENGTH)" if lad.crossover_N_catalogue else
                 "no crossover in range")
        points = tuple(_point(spec, r, bits, heads, r.n == lad.crossover_n_catalogue) for r in lad.rows[:3])
        skip = tuple(Check(name, "not checked", f"no crossover with the explicit weights: {where}")
                     for name in ("construction", "witness", "protocol", "widths"))
        return ClaimResult(spec, fmt.name, None, lad.crossover_N_catalogue, points, skip, None, "not shown",
                           f"no crossover with the explicit weights: {where}")
    beyond = [r for r in lad.rows if r.n >= x][:3]
    if not beyond or beyond[0].n != x:  # sizes asked for (--sizes) that skip the crossover
        why = f"the crossover (problem size n = {x}) is not among the ladder's sizes"
        points = tuple(_point(spec, r, bits, heads, False) for r in lad.rows[:3])
        skip = tuple(Check(name, "not checked", why) for name in ("construction", "witness", "protocol", "widths"))
        return ClaimResult(spec, fmt.name, x, lad.crossover_N_explicit, points, skip, None, "not shown", why)
    points = tuple(_point(spec, r, bits, heads, r.n == x) for r in beyond)
    row = beyond[0]
    checks = {c.name: c for c in row.checks}
    if not any(c.ran for c in row.checks):
        if row.length > check_max_length:
            why = (f"the crossover has {row.length} tokens > {check_max_length}: --check-max-length "
                   f"{row.length} runs its checks ({samples} random + up to "
                   f"{adversarial_budget(row.length)} adversarial inputs of {row.length} tokens)")
            checks = {name: Check(name, "not checked", why) for name in ("construction", "witness", "protocol")}
        else:
            curves = WidthCurves(lad.separation, bits, heads)
            checks = {c.name: c for c in _run_checks(spec, lad.separation, curves, x, fmt, row.lower_bound_width,
                                                     samples=samples, budget=budget, weak_width=weak_width,
                                                     weights=weights, seed=seed, heads=heads)}
    if spec.problem is not None and row.length <= check_max_length:  # the weak side's own reduction
        checks["witness"] = witness_check(spec.task, spec.weak_arch, spec.weak_layers,
                                          _same_length_size(spec.task, spec.problem, x), fmt,
                                          lower_width=row.lower_bound_width, weak_width=weak_width, weights=weights,
                                          budget=budget, seed=seed, heads=heads, cot=spec.cot, problem=spec.problem)
    checks["witness"] = _strict_witness(checks["witness"], spec, x, fmt, weak_width=weak_width, budget=budget,
                                        seed=seed, heads=heads)
    checks["protocol"] = _protocol_applies(checks["protocol"], spec)
    checks["widths"] = _widths_check(row.lower_bound_width, row.construction_width, row.N)
    ordered = tuple(checks[name] for name in ("construction", "witness", "protocol", "widths"))
    verdict, reason = claim_verdict(checks)
    return ClaimResult(spec, fmt.name, x, row.N, points, ordered, row.N, verdict, reason)


def evaluate_claims(ladders, precision, *, tasks=None, heads: int = 1, samples: int = 32, budget: int = 1024,
                    weak_width: int = 1, weights: str = "random", seed: int = 0,
                    check_max_length: int = DEFAULT_CHECK_MAX_LENGTH,
                    workers: int | None = None) -> tuple[list[ClaimResult], list[ClaimResult]]:
    """``(claims, derived)``: every claim of :data:`.claim_specs.CLAIMS` and :data:`.claim_specs.DERIVED`
    (those of ``tasks`` only, when given), read off ``ladders`` (:func:`.rows.separation_ladders` at
    ``precision``), with checks (a)-(d) and a verdict (module docstring).  ``workers``: processes
    that evaluate the claims, as :func:`.rows.separation_ladders`'s (None or 0:
    :func:`.rows.default_workers`; 1: this process only); each claim is independent given the
    ladders and seeded, so the results are the same for any number."""
    from .rows import map_in_order, resolve_workers

    workers = resolve_workers(workers)
    specs, one = claim_jobs(precision, tasks=tasks, heads=heads, samples=samples, budget=budget,
                            weak_width=weak_width, weights=weights, seed=seed, check_max_length=check_max_length)
    return split_claims(specs, map_in_order(partial(one, ladders=ladders), specs, workers))


def claim_jobs(precision, *, tasks=None, heads: int = 1, samples: int = 32, budget: int = 1024,
               weak_width: int = 1, weights: str = "random", seed: int = 0,
               check_max_length: int = DEFAULT_CHECK_MAX_LENGTH) -> tuple[list[ClaimSpec], Callable]:
    """``(specs, one)``: the claims of ``tasks`` (all by default), and ``one(spec, ladders=...)`` that
    evaluates one of them (:func:`evaluate_claims`, :func:`.pipeline.ladders_and_claims`)."""
    from commcomp.precision import parse_precision

    from reductions.registry import get_task

    fmt = parse_precision(precision)
    wanted = None if tasks is None else {get_task(t).name for t in tasks}
    specs = [spec for spec in CLAIMS + DERIVED if wanted is None or spec.task in wanted]
    return specs, partial(_evaluate_claim, fmt=fmt, heads=heads, samples=samples, budget=budget,
                          weak_width=weak_width, weights=weights, seed=seed, check_max_length=check_max_length)


def split_claims(specs, results) -> tuple[list[ClaimResult], list[ClaimResult]]:
    """``(claims, derived)``: the results of ``specs``, in order, by the table each belongs to."""
    out: dict[str, list] = {"claims": [], "derived": []}
    for spec, result in zip(specs, results):
        out[spec.table].append(result)
    return out["claims"], out["derived"]


def _evaluate_claim(spec, *, ladders, fmt, heads, samples, budget, weak_width, weights, seed,
                    check_max_length) -> ClaimResult:
    """One claim's line (:func:`evaluate_claims`), its own seconds included."""
    import time

    from .claims_qsa import qsa_claim

    start = time.perf_counter()
    if spec.q is not None:
        result = qsa_claim(spec, fmt, heads=heads, samples=samples, seed=seed, weak_width=weak_width,
                           weights=weights, budget=budget)
    elif not reads_a_ladder(spec):
        result = _own_lines()[spec.claim](spec, fmt, seed=seed, heads=heads)
    else:
        lad = _ladder_for(spec, ladders)
        if lad is None:
            result = ClaimResult(spec, fmt.name, None, None, verdict="not shown",
                                 reason=spec.missing or "no ladder for these sides (run without --weak / "
                                 "--task subsets)")
        elif spec.construction is None or lad.separation.strong_arch is None:
            result = _lower_only(spec, lad, fmt, fmt.bits, heads, weak_width=weak_width, weights=weights,
                                 budget=budget, seed=seed)
        else:
            result = _separation_claim(spec, lad, fmt, fmt.bits, heads=heads, samples=samples, budget=budget,
                                       weak_width=weak_width, weights=weights, seed=seed,
                                       check_max_length=check_max_length)
    return ClaimResult(**{**result.__dict__, "seconds": time.perf_counter() - start})
