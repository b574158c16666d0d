"""Exact analysis over all inputs at any length: a model at precision p is a finite automaton.

A recurrent model rounds its carried state to a finite number format after every step, so the
messages Alice can send in the one-way split are the states reachable over her positions; most
models a lower bound is about collapse to few of them. This package explores them level by level
and turns "exhaustive over all 2^n inputs" into "exhaustive over the reachable states":

* :mod:`.letters`: Alice's positions as per-position token choices, probed from the reduction;
* :mod:`.stepping`: batch-shape-invariant steps (fixed row blocks) and the message code;
* :mod:`.engine`: :func:`explore` (classes merged by bit-equal messages, exact Python-int
  counts, collisions kept, a budget of states and bytes);
* :mod:`.analyses` / :mod:`.separate`: Bob's side from every class, faithfulness, the exact
  correctness count (INDEX-type problems), separating y's;
* :mod:`.api`: :func:`reachable_analysis`, and the engine behind ``verify --exhaustive`` and
  ``witness`` (``method: "reachable-states"``, falling back with the reason);
* :mod:`.transformer`: the same for the 1-layer Transformer's exact partial sums;
* :mod:`.trajectory`, :mod:`.plot`, :mod:`.render`: ``simulate --trajectory``, the information
  curve, the CLI rows.

Examples
--------
>>> out = reachable_analysis("index-lookup", "gru", 500, "fixed:4:2", width=2, seed=1)
>>> out["complete"], out["distinct_messages"] < 2 ** 16, out["witness"]["complete"]
(True, True, True)
"""

from .api import ReachableFallback, reachable_analysis, reachable_verify, reachable_witness
from .engine import ReachableStates, explore, explore_model
from .letters import AliceLetters, NotPositionwiseError, alice_letters
from .transformer import reachable_partial_sums

__all__ = ["explore", "explore_model", "ReachableStates", "alice_letters", "AliceLetters", "NotPositionwiseError",
           "reachable_analysis", "reachable_verify", "reachable_witness", "ReachableFallback",
           "reachable_partial_sums"]
