"""A small forward DRAT checker: does a SAT solver's proof show that a CNF is unsatisfiable?

A DRAT proof lists lemmas (clauses the solver learnt) and deletions (``d ...``). Each lemma must be
RUP (asserting the negation of each of its literals and unit-propagating over the clauses so far
reaches a conflict) or, failing that, RAT on its first literal l (for every clause D holding -l,
the lemma together with D minus -l is RUP). The proof shows unsatisfiability when, at its end,
unit propagation alone reaches a conflict (the empty clause is RUP). Every step only adds clauses
implied (RUP) or satisfiability-preserving (RAT), so a proof that checks refutes the formula
(Wetzler, Heule & Hunt, "DRAT-trim", SAT 2014). Propagation uses two watched literals per clause.

Examples
--------
>>> check_drat([[1, 2], [-1, 2], [1, -2], [-1, -2]], ["2 0", "0"])
(True, 'refuted: 2 lemmas RUP, 0 RAT, 0 deletions')
>>> check_drat([[1, 2], [-1, 2]], ["0"])[0]
False
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["check_drat", "MAX_PROOF_LINES"]

MAX_PROOF_LINES = 200_000  # longer proofs are not kept (the bound is then "unverified"); ~1000-5000 lines/s


class _Database:
    def __init__(self):
        self.clauses: list[list[int] | None] = []
        self.watch: dict[int, list[int]] = {}
        self.units: dict[int, int] = {}  # clause id -> literal of a one-literal clause
        self.by_key: dict[tuple, list[int]] = {}
        self.empty = False

    def add(self, clause: Sequence[int]) -> None:
        lits = list(dict.fromkeys(clause))
        if any(-x in lits for x in lits):
            return  # a tautology constrains nothing
        cid = len(self.clauses)
        self.clauses.append(lits)
        self.by_key.setdefault(tuple(sorted(lits)), []).append(cid)
        if not lits:
            self.empty = True
        elif len(lits) == 1:
            self.units[cid] = lits[0]
        else:
            for x in lits[:2]:
                self.watch.setdefault(x, []).append(cid)

    def delete(self, clause: Sequence[int]) -> None:
        ids = self.by_key.get(tuple(sorted(dict.fromkeys(clause))))
        if ids:
            cid = ids.pop()
            self.clauses[cid] = None
            self.units.pop(cid, None)

    def propagates_to_conflict(self, assumed: Iterable[int]) -> bool:
        """Whether the units plus ``assumed`` literals propagate to a conflict."""
        value: dict[int, bool] = {}
        trail: list[int] = []

        def assign(x: int) -> bool:
            v = value.get(abs(x))
            if v is not None:
                return v == (x > 0)
            value[abs(x)] = x > 0
            trail.append(x)
            return True

        if self.empty:
            return True
        for x in list(self.units.values()) + list(assumed):
            if not assign(x):
                return True
        head = 0
        while head < len(trail):
            false_lit = -trail[head]
            head += 1
            watchers = self.watch.get(false_lit, [])
            keep = []
            i = 0
            while i < len(watchers):
                cid = watchers[i]
                i += 1
                lits = self.clauses[cid]
                if lits is None:
                    continue  # deleted: drop the watch
                if lits[0] == false_lit:
                    lits[0], lits[1] = lits[1], lits[0]
                other = lits[0]
                if value.get(abs(other)) == (other > 0):
                    keep.append(cid)
                    continue
                for k in range(2, len(lits)):
                    x = lits[k]
                    if value.get(abs(x)) != (x < 0):  # not false: watch it instead
                        lits[1], lits[k] = x, lits[1]
                        self.watch.setdefault(x, []).append(cid)
                        break
                else:
                    keep.append(cid)
                    if not assign(other):
                        keep.extend(watchers[i:])
                        self.watch[false_lit] = keep
                        return True
            self.watch[false_lit] = keep
        return False


def check_drat(clauses: Sequence[Sequence[int]], proof: Sequence[str]) -> tuple[bool, str]:
    """Check a DRAT proof (lines as DIMACS text, ``d`` for deletions) against a CNF.

    Returns
    -------
    (ok, detail)
        ``ok`` true when every lemma is RUP or RAT and the proof ends in a conflict.
    """
    if len(proof) > MAX_PROOF_LINES:
        return False, f"proof longer than {MAX_PROOF_LINES} lines (not checked)"
    db = _Database()
    for cl in clauses:
        db.add(cl)
    rup = rat = deleted = 0
    for number, line in enumerate(proof, 1):
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "d":
            db.delete([int(x) for x in fields[1:] if x != "0"])
            deleted += 1
            continue
        lemma = [int(x) for x in fields if x != "0"]
        if db.propagates_to_conflict(-x for x in lemma):
            rup += 1
        elif lemma and _is_rat(db, lemma):
            rat += 1
        else:
            return False, f"proof line {number} is neither RUP nor RAT"
        db.add(lemma)
        if not lemma:
            break
    if not db.propagates_to_conflict(()):
        return False, "the proof does not end in a conflict"
    return True, f"refuted: {rup} lemmas RUP, {rat} RAT, {deleted} deletions"


def _is_rat(db: _Database, lemma: list[int]) -> bool:
    pivot = lemma[0]
    for lits in db.clauses:
        if lits is None or -pivot not in lits:
            continue
        resolvent = lemma + [x for x in lits if x != -pivot]
        if any(-x in resolvent for x in resolvent):
            continue  # a tautology: nothing to show
        if not db.propagates_to_conflict(-x for x in resolvent):
            return False
    return True
