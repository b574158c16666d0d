"""What a search of the attention engine returns (:class:`AttentionCollision`) and the solvers it runs.

Shared by :mod:`.api` (1-layer Transformer splits) and :mod:`.hybrid` (the hybrid's attention layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .lattice import lattice_available, lattice_search
from .sorting import MAX_SUBSET_SIZE, sorting_search

__all__ = ["AttentionCollision", "DEFAULT_SUMS", "AUTO_SUBSET_SIZE"]

DEFAULT_SUMS = 1 << 21     # sums sorted per phase of the sorting solver
AUTO_SUBSET_SIZE = 2       # auto: the sorting phases up to pairs, then the lattice


@dataclass(frozen=True, eq=False)
class AttentionCollision:
    """The outcome of one search (module docstring). ``x, x_prime, y`` are None when nothing was found.

    ``messages_equal`` compares Alice's packed messages from the real protocol run on both inputs
    (``message`` is their hex); ``outputs_identical`` compares the unsplit model's logits bit for bit.
    ``searches`` are the solvers' reports (what each tried); ``candidates`` the solutions examined,
    ``rejected`` those the protocol re-run or the unsplit model contradicted (0 unless a defect).
    """

    found: bool
    complete: bool
    method: str
    x: np.ndarray | None
    x_prime: np.ndarray | None
    y: np.ndarray | None
    messages_equal: bool
    outputs_identical: bool
    confirmation: dict
    searches: tuple
    candidates: int
    rejected: int
    instance: dict
    note: str
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def truth_x(self):
        return self.confirmation.get("truth_x")

    @property
    def truth_x_prime(self):
        return self.confirmation.get("truth_x_prime")

    def to_json(self) -> dict:
        """The ``witness`` fields of DESIGN §4 this search fills, plus its own (``zero_sum``)."""
        out = {"found": self.found, "complete": self.complete, "method": self.method, "search": "zero-sum",
               "tried": int(sum(_covered(s) for s in self.searches)), "messages_equal": self.messages_equal,
               "outputs_identical": self.outputs_identical,
               "zero_sum": {"instance": self.instance, "candidates": self.candidates, "rejected": self.rejected,
                            "searches": [s.to_json() for s in self.searches]}}
        if self.found:
            out.update(self.confirmation)
            out["messages_equal"] = self.messages_equal
        else:
            out.update({"x": None, "x_prime": None, "y": None, "model_answer_x": None,
                        "model_answer_x_prime": None, "truth_x": None, "truth_x_prime": None, "wrong_on": None})
        out["note"] = self.note
        return out


def _covered(search) -> int:
    """Inputs of Alice whose sums a search compared (sorted sums, or the lattice's kernel vectors)."""
    t = search.tried
    if t.get("exhaustive"):
        return int(t["sums"])
    if "phases" in t:
        return int(sum(p["sums"] for p in t["phases"]))
    return int(sum(a["kernel_vectors"] for a in t.get("attempts", ())))


def _solve(D, method: str, budget: int, seed: int, include=(), deadline=None) -> list:
    """The solvers ``method`` asks for, in turn (the lattice only while nothing is found or proved)."""
    searches = []
    if method in ("auto", "sorting"):
        size = AUTO_SUBSET_SIZE if method == "auto" and lattice_available() else MAX_SUBSET_SIZE
        searches.append(sorting_search(D, budget=budget, max_size=size))
    if method == "lattice" or (method == "auto" and not searches[-1].found and not searches[-1].proved_none
                               and lattice_available()):
        searches.append(lattice_search(D, seed=seed, include=include, deadline=deadline))
    return searches
