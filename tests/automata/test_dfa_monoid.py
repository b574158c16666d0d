"""DFAs, minimisation, products and monoids against brute force and known answers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from commcomp.automata import (DFA, accepts, language_dfa, minimize, shortest_difference, to_dot, to_json,
                               from_json, to_networkx, transition_monoid)
from commcomp.automata.dfa import words_up_to
from commcomp.errors import TooLargeError, UnknownNameError


def _random_dfa(rng, S, A):
    return DFA(rng.integers(0, S, size=(S, A)), 0, rng.integers(0, 2, size=S), tuple("ab"[:A] if A <= 2 else
                                                                                   map(str, range(A))))


def _nerode_classes(dfa, length):
    """Reachable states grouped by their accepted suffixes up to ``length`` (brute force)."""
    from commcomp.automata.dfa import run_word
    reach = {run_word(dfa, w) for w in words_up_to(dfa.delta.shape[1], dfa.states)}
    suffixes = list(words_up_to(dfa.delta.shape[1], length))
    def row(q):
        out = []
        for w in suffixes:
            r = q
            for a in w:
                r = int(dfa.delta[r, a])
            out.append(int(dfa.output[r]))
        return tuple(out)
    return len({row(q) for q in reach})


@pytest.mark.parametrize("seed", range(12))
def test_minimize_keeps_the_language_and_has_one_state_per_nerode_class(seed):
    rng = np.random.default_rng(seed)
    d = _random_dfa(rng, int(rng.integers(2, 9)), 2)
    m = minimize(d)
    for w in words_up_to(2, 8):
        assert accepts(m, w) == accepts(d, w)
    assert m.states == _nerode_classes(d, d.states)  # suffixes of length < S separate all classes
    assert minimize(m).delta.tolist() == m.delta.tolist()  # canonical: minimising again changes nothing


def test_classic_textbook_minimisation():
    # Hopcroft-Ullman style: words over {a, b} ending in "ab", built with 5 redundant states
    delta = np.array([[1, 2], [1, 3], [1, 2], [1, 4], [1, 2]])  # 3 and 4 both 'just read ab'? 4 = "abb"
    d = DFA(delta, 0, np.array([0, 0, 0, 1, 0]), ("a", "b"))
    m = minimize(d)
    assert m.states == 3  # {start, b-states}, {last a}, {ends in ab}
    for w in words_up_to(2, 7):
        assert accepts(m, w) == (len(w) >= 2 and w[-2:] == (0, 1))


@pytest.mark.parametrize("seed", range(10))
def test_shortest_difference_is_the_first_differing_word_in_enumeration_order(seed):
    rng = np.random.default_rng(100 + seed)
    a, b = _random_dfa(rng, 4, 2), _random_dfa(rng, 3, 2)
    want = next((w for w in words_up_to(2, 12) if accepts(a, w) != accepts(b, w)), None)
    assert shortest_difference(a, b) == want
    assert shortest_difference(a, minimize(a)) is None


def test_dyck_2_2_against_2_3_differs_first_at_depth_three():
    letters = ("(", "[", ")", "]")
    d22, d23 = language_dfa("dyck-2-2", letters), language_dfa("dyck-2-3", letters)
    assert minimize(d22).states == 8 and minimize(d23).states == 16
    assert shortest_difference(d22, d23) == (0, 0, 0, 2, 2, 2)


def test_languages_against_their_definitions():
    letters = ("(", "[", ")", "]")
    d = language_dfa("dyck-2-2", letters)
    for w in words_up_to(4, 6):
        stack, ok = [], True
        for a in w:
            if a < 2:
                stack.append(a)
                ok &= len(stack) <= 2
            elif stack and stack[-1] == a - 2:
                stack.pop()
            else:
                ok = False
        assert accepts(d, w) == (ok and not stack), w
    for w in words_up_to(2, 7):
        assert accepts(language_dfa("mod-3", "01"), w) == (sum(w) % 3 == 0)
        assert accepts(language_dfa("parity", "01"), w) == (sum(w) % 2 == 0)
    with pytest.raises(UnknownNameError):
        language_dfa("palindromes", "01")


def test_cyclic_groups_are_not_aperiodic_and_name_their_period():
    for m in (2, 3, 5):
        mon = transition_monoid(language_dfa(f"mod-{m}", "01"))
        assert mon.size == m and mon.group_elements == m  # Z_m: every element a permutation
        assert not mon.aperiodic and mon.period_witness["word"] == (1,) and mon.period_witness["period"] == m
        assert len(mon.period_witness["cycle"]) == m


def test_aperiodic_monoids():
    reset = DFA(np.array([[0, 1], [0, 1]]), 0, np.array([0, 1]), ("0", "1"))  # remembers the last letter
    mon = transition_monoid(reset)
    assert mon.aperiodic and mon.period_witness is None and mon.size == 3  # identity, const-0, const-1
    # "contains ab" (star-free), and Dyck-(1, 2) (star-free: bounded depth)
    contains = DFA(np.array([[1, 0], [1, 2], [2, 2]]), 0, np.array([0, 0, 1]), ("a", "b"))
    assert transition_monoid(contains).aperiodic
    assert transition_monoid(minimize(language_dfa("dyck-1-2", "()"))).aperiodic
    # (aa)*: not star-free although no letter permutes... a acts as a 2-cycle
    assert not transition_monoid(DFA(np.array([[1], [0]]), 0, np.array([1, 0]), ("a",))).aperiodic


def test_monoid_brute_force_size_and_budget():
    rng = np.random.default_rng(7)
    d = _random_dfa(rng, 4, 2)
    maps = set()
    for w in words_up_to(2, 10):  # the monoid of a 4-state DFA has at most 4^4 elements, words <= 10 reach them
        q = np.arange(4)
        for a in w:
            q = d.delta[q, a]
        maps.add(tuple(q.tolist()))
    assert transition_monoid(d).size == len(maps)
    with pytest.raises(TooLargeError):
        transition_monoid(d, max_elements=1)


def test_graph_exports():
    d = language_dfa("mod-3", "01")
    g = to_networkx(d)
    assert g.number_of_nodes() == 3 and g.number_of_edges() == 6
    assert sorted(g.nodes[q]["output"] for q in g) == [0, 0, 1]
    assert "doublecircle" in to_dot(d) and to_dot(d).count("->") == 1 + 6
    assert from_json(to_json(d)).delta.tolist() == d.delta.tolist()


def test_monoids_of_known_size():
    """Known monoids, by size and aperiodicity (not by the closure's own enumeration):

    * T_3, the full transformation monoid of 3 points (3^3 = 27 maps), generated by a transposition,
      a 3-cycle and a map that merges two points: not aperiodic (it holds the group S_3, 6 permutations);
    * the syntactic monoid of (ab)*, B_2 with an identity: {1, a, b, ab, ba, 0}, 6 elements, aperiodic
      ((ab)* is star-free), from its minimal DFA (3 states: start/accept, after a, sink);
    * U_1 = {1, 0} from "no b yet" (2 states): aperiodic, 2 elements.
    """
    t3 = DFA(np.array([[1, 1, 0], [0, 2, 0], [2, 0, 2]]), 0, np.array([1, 0, 0]), ("swap01", "cycle", "merge"))
    mon = transition_monoid(t3)
    assert mon.size == 27 and mon.group_elements == 6 and not mon.aperiodic
    ab = minimize(DFA(np.array([[1, 2], [2, 0], [2, 2]]), 0, np.array([1, 0, 0]), ("a", "b")))
    assert ab.states == 3
    mon = transition_monoid(ab)
    assert mon.size == 6 and mon.aperiodic and mon.group_elements == 1
    u1 = DFA(np.array([[0, 1], [1, 1]]), 0, np.array([1, 0]), ("a", "b"))
    assert transition_monoid(u1).size == 2 and transition_monoid(u1).aperiodic


def test_a_period_that_is_the_lcm_of_two_cycles():
    """One letter acting as (0 1)(2 3 4): the monoid is Z_6, the witness's period 6 = lcm(2, 3), and
    its cycle a real orbit (of length 3): q, q·w, q·w^2 with q·w^3 = q; w^i != w^(i+1) for all i."""
    perm = np.array([[1], [0], [3], [4], [2]])
    d = DFA(perm, 0, np.array([1, 0, 0, 0, 0]), ("a",))
    mon = transition_monoid(d)
    w = mon.period_witness
    assert mon.size == 6 and w["word"] == (0,) and w["period"] == 6 and w["index"] == 1
    cyc = w["cycle"]
    assert len(cyc) == 3 and all(perm[cyc[j], 0] == cyc[(j + 1) % 3] for j in range(3))
    power = np.arange(5)
    for _ in range(12):  # no power of w is idempotent-stable: w^i != w^(i+1)
        assert not np.array_equal(perm[power, 0], power)
        power = perm[power, 0]
