"""The values of the claims table: a claim's evaluated points and checks, and the verdict rule
((a)-(d) all pass: ``shown``), shared by :mod:`.claims` and :mod:`.claims_qsa`.

>>> from reductions.separations.checks import Check
>>> claim_verdict({n: Check(n, "passed", "") for n in ("construction", "witness", "protocol", "widths")})
('shown', '')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .checks import Check
from .claim_specs import ClaimSpec

__all__ = ["ClaimPoint", "ClaimResult", "claim_verdict", "widths_check"]

_LETTER = {"construction": "a", "witness": "b", "protocol": "c", "widths": "d"}
_GOOD = {"passed", "found", "not applicable"}



def claim_verdict(checks: dict) -> tuple[str, str]:
    """``("shown", "")`` when (a)-(d) all pass, else ``("not shown", why)`` (module docstring)."""
    named = [(name, checks.get(name)) for name in ("construction", "witness", "protocol", "widths")]
    failed = [f"({_LETTER[n]}) {n}: {c.detail}" for n, c in named if c is not None and c.status == "FAILED"]
    if failed:
        return "not shown", "FAILED " + "; ".join(failed)
    for name, c in named:
        if c is None:
            return "not shown", f"({_LETTER[name]}) {name} not run"
        if c.status not in _GOOD:
            return "not shown", (f"no witness: {c.detail}" if name == "witness" and c.status == "not found"
                                 else c.detail)
    return "shown", ""


@dataclass(frozen=True)
class ClaimPoint:
    """Both sides at one N: the weak side's minimum width (the strongest bound, and the one of
    ``beside_bound`` where it differs), the strong side's explicit width and the catalogue's
    construction width."""

    N: int
    n: int
    length: int
    weak_width: int | None
    weak_theorem: str | None
    weak_evidence: str | None
    beside_width: int | None
    beside_theorem: str | None
    beside_evidence: str | None
    strong_width: int | None
    catalogue_width: int | None
    crossover: bool = False


@dataclass(frozen=True)
class ClaimResult:
    """One evaluated claim (JSON: :meth:`to_json`)."""

    spec: ClaimSpec
    precision: str
    crossover_n: int | None
    crossover_N: int | None
    points: tuple = ()
    checks: tuple = ()
    checked_N: int | None = None
    verdict: str = "not shown"
    reason: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        s = self.spec
        return {"claim": s.claim, "group": s.group, "statement": s.statement, "source": s.source,
                "asymptotic": s.asymptotic, "task": s.task, "weak_arch": s.weak_arch,
                "weak_layers": s.weak_layers, "strong_arch": s.strong_arch, "strong_layers": s.strong_layers,
                "construction": s.construction, "q": s.q, "precision": self.precision,
                "crossover_n": self.crossover_n, "crossover_N": self.crossover_N, "checked_N": self.checked_N,
                "verdict": self.verdict, "reason": self.reason,
                "points": [asdict(p) for p in self.points],
                "checks": {c.name: c.to_json() for c in self.checks}, "seconds": round(self.seconds, 3),
                **self.extra}


def widths_check(lower: int | None, strong: int | None, N: int) -> Check:
    if lower is None or strong is None:
        return Check("widths", "not checked", f"no {'bound' if lower is None else 'explicit width'} at N = {N}")
    if lower > strong:
        return Check("widths", "passed", f"weak m >= {lower} > explicit m = {strong} at N = {N}",
                     {"weak_width": lower, "strong_width": strong})
    return Check("widths", "FAILED", f"weak m >= {lower} does not exceed explicit m = {strong} at N = {N}",
                 {"weak_width": lower, "strong_width": strong})
