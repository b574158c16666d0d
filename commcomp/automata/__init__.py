"""Finite automata and their transition monoids (no models, no reductions).

* :mod:`.dfa`: complete DFAs with outputs, minimisation, shortest differences, graphs;
* :mod:`.languages`: parity, mod-m counting, bounded Dyck and DFA files by name;
* :mod:`.monoid`: the transition monoid, aperiodicity and the period witness;
* :mod:`.results`: the state-tracking results the monoid verdict speaks to, with their evidence.

Examples
--------
>>> d = language_dfa("mod-3", ("0", "1"))
>>> minimize(d).states, transition_monoid(d).aperiodic
(3, False)
"""

from .dfa import DFA, accepts, from_json, minimize, run_word, shortest_difference, to_dot, to_json, to_networkx
from .languages import LANGUAGES, language_dfa
from .monoid import Monoid, transition_monoid
from .results import STATE_TRACKING_RESULTS, results_for

__all__ = ["DFA", "accepts", "run_word", "minimize", "shortest_difference", "to_dot", "to_json", "from_json",
           "to_networkx", "language_dfa", "LANGUAGES", "Monoid", "transition_monoid", "STATE_TRACKING_RESULTS",
           "results_for"]
