"""Rows for the entries that are not a plain (task, architecture) pair: k-DNF, chain of thought,
In-context RAG and the hybrid, each with what can be confirmed here.

The entries come from the catalogue (``commcomp.bounds.SPECIAL_ROWS`` when it has them; else the
few fields used here, below).  What each row runs:

* ``k-dnf`` — (a) the 2-layer construction ``k-dnf-2tf`` on every input (n <= 10) and random ones;
* ``cot-rnn`` — chain of thought does not lift the RNN bound (each generated token is a function
  of the state after the input): (c) the one-way protocol with Bob generating the CoT, faithful,
  and (b) a witness on a 1-wide Elman with the CoT;
* ``hybrid`` — (c) the three-message hybrid split bit for bit against the unsplit model, where
  this version of the simulator has it (else ``not checked`` with its refusal);
* ``cot-transformer``, ``rag``, ``hybrid-cot`` — statements with no model to run: ``not checked``.

Examples
--------
>>> rows = special_rows("fixed:8:4", keys=["rag"])
>>> rows[0].key, [c.status for c in rows[0].checks]
('rag', ['not checked'])
"""

from __future__ import annotations

from dataclasses import dataclass

from commcomp.errors import CommcompError

from .checks import Check, construction_check, witness_check

__all__ = ["SpecialResult", "special_rows", "SPECIAL_KEYS"]

try:
    from commcomp.bounds import SPECIAL_ROWS as _CATALOGUE_ROWS
except ImportError:  # pragma: no cover - depends on the catalogue version
    _CATALOGUE_ROWS = None

#: key -> (task, arch, layers, theorems, note) used when the catalogue has no special rows.
_FALLBACK = {
    "k-dnf": (None, "transformer", 2, ("BHBK-kDNF-2TF",), "k-DNF formulas: a 2-layer construction"),
    "cot-rnn": ("istree", "elman", 1, ("WDL-IsTree-RNN",), "RNN bounds hold with any chain of thought"),
    "cot-transformer": ("istree", "transformer", 2, ("WDL-IsTree-TF",), "CoT of length O(n): constant size"),
    "rag": ("istree", "elman", 1, ("WDL-RAG",), "RNN + In-context RAG: the one-way protocol does not apply"),
    "hybrid": ("string-equality", "hybrid", 1, ("WDL-Hybrid",), "hybrid without CoT: a three-message split"),
    "hybrid-cot": (None, "hybrid", 1, ("WDL-Hybrid",), "hybrid + CoT: one round per generated token"),
}
SPECIAL_KEYS = tuple(_FALLBACK)


@dataclass(frozen=True)
class SpecialResult:
    """One special row: its entry, the size it ran at, and its checks."""

    key: str
    task: str | None
    arch: str
    layers: int
    theorems: tuple
    note: str
    n: int | None
    checks: tuple

    def to_json(self) -> dict:
        from .rows import row_status

        return {"key": self.key, "task": self.task, "arch": self.arch, "layers": self.layers,
                "theorems": list(self.theorems), "note": self.note, "n": self.n,
                "checks": {c.name: c.to_json() for c in self.checks}, "status": row_status(self.checks)}


def _entries():
    if _CATALOGUE_ROWS is not None:
        return [(r.key, r.task, "elman" if r.arch == "recurrent" else r.arch, r.layers, tuple(r.theorems), r.note)
                for r in _CATALOGUE_ROWS]
    return [(k, *v) for k, v in _FALLBACK.items()]


def _hybrid_split(task, n, precision, seed) -> Check:
    from reductions.simulate import verify

    try:
        out = verify(task, "hybrid", n, precision, width=2, instances=16, seed=seed)
    except CommcompError as exc:
        return Check("protocol", "not checked", (str(exc).splitlines() or ["refused"])[0])
    ok = out.get("faithful") == 1.0
    return Check("protocol", "passed" if ok else "FAILED",
                 f"{out['bits_per_message']} bits vs {out['lower_bound_bits']}, faithful {out.get('faithful')}",
                 {"bits": out["bits_per_message"], "lower_bound_bits": out["lower_bound_bits"],
                  "faithful": out.get("faithful"), "rounds": out.get("protocol_rounds")})


def _cot_rnn(task, n, precision, seed) -> tuple[Check, ...]:
    from reductions.simulate import verify

    try:
        out = verify(task, "elman", n, precision, width=2, cot=True, instances=16, seed=seed)
        proto = Check("protocol", "passed" if out.get("faithful") == 1.0 else "FAILED",
                      f"one-way with CoT: {out['bits_per_message']} bits, faithful {out.get('faithful')}",
                      {"bits": out["bits_per_message"], "faithful": out.get("faithful")})
    except CommcompError as exc:
        proto = Check("protocol", "not checked", (str(exc).splitlines() or ["refused"])[0])
    wit = witness_check(task, "elman", 1, n, precision, lower_width=2, weak_width=1, budget=4096, seed=seed,
                        cot=True)
    return wit, proto


def special_rows(precision, *, keys=None, seed: int = 0, samples: int = 32) -> list[SpecialResult]:
    """The special rows (module docstring), optionally only ``keys``."""
    out = []
    for key, task, arch, layers, theorems, note in _entries():
        if keys is not None and key not in keys:
            continue
        n = None
        if key == "k-dnf":
            n = 8
            checks = (construction_check(None, "k-dnf-2tf", n, precision, samples=samples, seed=seed),)
        elif key == "cot-rnn":
            n = 8
            checks = _cot_rnn(task or "istree", n, "fixed:4:2", seed)
        elif key == "hybrid":
            n = 4
            checks = (_hybrid_split(task or "string-equality", n, precision, seed),)
        else:
            checks = (Check("statement", "not checked", "a statement: no model of it to run"),)
        out.append(SpecialResult(key, task, arch, layers, theorems, note, n, checks))
    return out
