"""Two recent results on state tracking, as data: what each says, and how far it was checked.

The transition monoid of a model's minimal DFA (:mod:`.monoid`) is the finite-precision reading of
these results: at p bits a model is a finite automaton, aperiodic monoid = star-free language
(Schützenberger), and a word acting as a k-cycle is the concrete obstruction (parity: "1", k = 2).

Each entry carries its ``evidence`` tag (the catalogue's: [P] checked against the paper's own text,
[S] a secondary source, [R] recalled, not checked) and ``checked``: what was read, where. Checked on
2026-12-06 against the arXiv abstracts (2405.17394 v1 and v3; 2411.12537 v2 and v5) and, for what
the abstracts do not say, secondary summaries; the theorem texts and numbers inside the papers
were *not* available here, and no entry quotes one.

Examples
--------
>>> [r.id for r in STATE_TRACKING_RESULTS][:2]
['SVH24-star-free', 'SVH24-parity']
>>> results_for(aperiodic=False)[0].id
'SVH24-parity'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["StateTrackingResult", "STATE_TRACKING_RESULTS", "results_for", "EVIDENCE"]

EVIDENCE = {"[P]": "checked against the paper's own text (its abstract)",
            "[S]": "stated by a secondary source (named in checked)",
            "[R]": "recalled, not checked against any text"}

_SVH = "Sarrof, Veitsman, Hahn (NeurIPS 2024), The Expressive Capacity of State Space Models: A Formal Language Perspective"
_GSZ = ("Grazzi, Siems, Zela, Franke, Hutter, Pontil (ICLR 2025), Unlocking State-Tracking in Linear RNNs "
        "Through Negative Eigenvalues")


@dataclass(frozen=True)
class StateTrackingResult:
    """One statement of a paper (module docstring).

    Attributes
    ----------
    id, source, arxiv : str
    statement : str  what the paper says, in its terms
    evidence : str  ``[P]``, ``[S]`` or ``[R]`` (:data:`EVIDENCE`)
    checked : str  what text the statement was checked against
    side : str  ``"star-free"`` (speaks for an aperiodic monoid) or ``"group"`` (about a period witness)
    """

    id: str
    source: str
    arxiv: str
    statement: str
    evidence: str
    checked: str
    side: str


STATE_TRACKING_RESULTS = (
    StateTrackingResult(
        "SVH24-star-free", _SVH, "2405.17394",
        "In star-free state tracking, SSMs implement straightforward and exact solutions (v3: "
        "length-generalizing solutions) to problems that transformers struggle to represent exactly; "
        "they model bounded hierarchical structure (bounded-depth Dyck) with optimal memory without a stack.",
        "[P]", "the abstract, v1 and v3 (the words in parentheses are v3's)", "star-free"),
    StateTrackingResult(
        "SVH24-parity", _SVH, "2405.17394",
        "A design choice in current SSMs limits their expressive power: with non-negative diagonal "
        "state transitions (gates in [0, 1], their NONNEGATIVE condition) an SSM cannot recognize PARITY "
        "at arbitrary input lengths at finite precision; negative values resolve this.",
        "[S]", "the abstract says only 'a design choice in current SSMs limits their expressive power'; "
        "parity, [0, 1] and the negative-values remedy are as Grazzi et al.'s abstract (2411.12537) "
        "reports this paper, and a secondary review (liner.com) names the NONNEGATIVE condition", "group"),
    StateTrackingResult(
        "SVH24-only-star-free", _SVH, "2405.17394",
        "Finite-precision SSMs with non-negative diagonal transitions recognize only star-free "
        "languages (with the previous entries: exactly the star-free ones).",
        "[R]", "not checked: recalled; neither abstract states this converse", "group"),
    StateTrackingResult(
        "GSZ25-parity", _GSZ, "2411.12537",
        "Finite precision linear RNNs with state-transition matrices having only positive eigenvalues "
        "cannot solve parity; non-triangular matrices are needed to count modulo 3 (v2: complex "
        "eigenvalues are needed).",
        "[P]", "the abstract, v2 and v5 (the parity sentence is the same in both; the modulo-3 clause "
        "changed between them)", "group"),
    StateTrackingResult(
        "GSZ25-regular", _GSZ, "2411.12537",
        "Linear RNNs can learn any regular language when their state-transition matrices are products "
        "of identity minus vector outer product matrices, each with eigenvalues in [-1, 1].",
        "[P]", "the abstract, v5", "group"),
)


def results_for(aperiodic: bool | None) -> list:
    """The entries a monoid verdict speaks to: an aperiodic monoid (star-free language) to the
    star-free side, a period witness to the parity / group side; none for no verdict."""
    if aperiodic is None:
        return []
    side = "star-free" if aperiodic else "group"
    return [r for r in STATE_TRACKING_RESULTS if r.side == side]
