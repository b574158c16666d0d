"""The split interface (reductions.simulate.splits) and its registry (reductions.simulate.registry)."""

from __future__ import annotations

import math
import pathlib
import re
from types import SimpleNamespace

import numpy as np
import pytest

from commcomp.architectures import list_architectures
from commcomp.bounds import get_bound
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.matrix import measure_problem
from reductions.registry import get_reduction, list_reductions
from reductions.simulate import simulate, verify
from reductions.simulate.batch import run_batch
from reductions.simulate.registry import (SPLITS, bob_step_text, kind_class, refuse_unsplittable, split_class,
                                          simulation_text, verify_note)
from reductions.simulate.setup import prepare
from reductions.simulate.splits import Split, find_theorem

ROOT = pathlib.Path(__file__).resolve().parents[2]

# one simulation per family (and both Transformer shapes)
CASES = {
    "recurrent": dict(task="index-lookup", arch="lstm", n=5, precision="fixed:8:4", width=2),
    "transformer-1": dict(task="string-equality", arch="transformer", n=3, precision="fixed:8:4", width=2),
    "transformer-2": dict(task="index-lookup", arch="transformer", n=4, precision="fixed:8:4", width=2),
    "hybrid": dict(task="string-equality", arch="hybrid", n=3, precision="fixed:8:4", width=2),
    "attention-row": dict(task="qsa", arch="transformer", n=3, precision="fixed:8:4", weights="construction"),
}


def _sim(case):
    c = dict(CASES[case])
    return prepare(c.pop("task"), c.pop("arch"), c.pop("n"), c.pop("precision"), **c)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_message_layout_is_what_the_protocol_sends(case):
    """Each message of ``split.messages`` is sent, in order, by the party it names, with the bits it
    names; their sum is what every instance pays."""
    sim = _sim(case)
    x, y = sim.problem.sample(sim.n, 6, np.random.default_rng(1))
    res = run_batch(sim, x, y)
    got = [(m.sender, m.receiver, m.label, m.rows.array.shape[1]) for m in res.transcript.messages]
    want = [(m.sender, m.receiver, m.label, m.bits) for m in sim.split.messages]
    assert got == want
    assert sim.split.bits_per_instance == sum(w[3] for w in want) == res.bits_sent
    assert len(want) == {"transformer-1": 1, "transformer-2": 2, "hybrid": 3}.get(case, 1) == sim.split.rounds
    assert isinstance(sim.split, Split) and split_class(sim.arch, sim.model) is type(sim.split)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_lower_bound_bits_are_the_exact_communication_complexity(case):
    """One message: D^{A->B}(f) = ceil(log2(distinct rows)) of the problem's matrix; more: D(f) - 1, D
    from the optimal protocol tree (commcomp.matrix, certificates checked)."""
    sim = _sim(case)
    report = measure_problem(sim.problem.name, sim.n)
    assert report.certificates_checked
    want = math.ceil(math.log2(report.distinct_rows)) if sim.split.rounds == 1 else report.deterministic_cc - 1
    bound = sim.split.lower_bound()
    assert (bound.bits, bound.rounds) == (want, sim.split.rounds)
    assert sim.lower_bound_bits == want and sim.theorem == bound.theorem
    get_bound(bound.theorem)  # a catalogue entry


# The ids the splits reported before they came from catalogue queries (typed into setup.py then):
# every registered reduction, every family, unchanged.
EXPECTED_THEOREMS = {
    "disjointness->dyck": ("BHBK-Dyck-1TF", "CC-DISJ", "COMMCOMP-DYCK22-1TF-1W", "COMMCOMP-DYCK22-1TF-2R"),
    "equality->dyck": ("BHBK-Dyck-1TF", "CC-EQ", "COMMCOMP-DYCK21-1TF-1W", "COMMCOMP-DYCK21-1TF-2R"),
    "index->index-lookup": ("BHBK-IL-RNN", "CC-INDEX-2way", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "disjointness->istree": ("WDL-IsTree-RNN", "COMMCOMP-HYBRID-ISTREE", "BHBK-Bool-LB-1TF-1W",
                             "BHBK-Bool-LB-1TF-2R"),
    "index->match2": ("CC-INDEX", "CC-INDEX-2way", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "disjointness->match3": ("SHT-Match3-LB", "COMMCOMP-HYBRID-MATCH3", "COMMCOMP-MATCH3-1TF",
                             "BHBK-Bool-LB-1TF-2R"),
    "disjointness->mqar": ("BHBK-MQAR-RNN", "CC-DISJ", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "index->mqar": ("BHBK-MQAR-RNN", "CC-INDEX-2way", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "disjointness->multi-index-lookup": ("BHBK-MIL-RNN", "CC-DISJ", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "index->nearest-neighbour": ("BHBK-NN-RNN", "CC-INDEX-2way", "BHBK-Bool-LB-1TF-1W", "BHBK-Bool-LB-1TF-2R"),
    "disjointness->qsa": ("SHT-qSA-LB", "CC-DISJ", "SHT-qSA-LB", "BHBK-Bool-LB-1TF-2R"),
    "disjointness->string-disjointness": ("BHBK-DISJ-RNN", "COMMCOMP-HYBRID-DISJ", "BHBK-DISJ-1TF",
                                          "BHBK-DISJ-1TF-2R"),
    "equality->string-equality": ("BHBK-EQ-RNN", "COMMCOMP-HYBRID-EQ", "BHBK-EQ-1TF", "BHBK-EQ-1TF-2R"),
}


def _theorems(red):
    """What each family's ``theorem()`` queries, for ``red`` (recurrent, hybrid, 1-layer one-way, two-round)."""
    return (find_theorem(red, "lstm", own_source=True),
            find_theorem(red, "hybrid", split_words="three messages", rounds=3),
            find_theorem(red, "transformer", layers=1, split_words="one-way", rounds=1),
            find_theorem(red, "transformer", layers=1, split_words="two-round", rounds=2))


def test_every_reduction_keeps_its_theorem_ids():
    """The reductions that existed before the split registry keep the ids once typed into setup.py."""
    names = {r.name for r in list_reductions()}
    assert set(EXPECTED_THEOREMS) <= names
    for red in list_reductions():
        got = _theorems(red)
        if red.name in EXPECTED_THEOREMS:
            assert got == EXPECTED_THEOREMS[red.name], red.name
        for tid in got:
            get_bound(tid)  # every one a catalogue entry


def test_a_newer_reductions_theorems_are_about_its_task_or_general():
    """Reductions added later (induction heads, composition, copy) have no typed-in ids to keep: each id the
    catalogue query gives is a row for the reduction's own task, or a general row (no task)."""
    newer = [r for r in list_reductions() if r.name not in EXPECTED_THEOREMS]
    assert newer, "no reduction beyond the pinned ones: this test checks nothing"
    for red in newer:
        for tid in _theorems(red):
            assert get_bound(tid).task in (red.task_name, None), (red.name, tid)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_split_reports_its_familys_query(case):
    sim = _sim(case)
    recurrent, hybrid, one_way, two_round = EXPECTED_THEOREMS[sim.reduction.name]
    want = {"recurrent": recurrent, "hybrid": hybrid, "transformer-1": one_way, "transformer-2": two_round,
            "attention-row": one_way}[case]
    assert sim.split.theorem() == want


def test_queries_fall_back_to_general_entries_and_standard_facts():
    """A reduction of a task the catalogue does not know: the general 1-layer rows, then the problem's
    standard two-way fact; a reduction naming its own label keeps it; nothing known: None."""
    def user(problem):
        return SimpleNamespace(task_name="palindrome", problem=problem, source="user")

    assert find_theorem(user("equality"), "transformer", layers=1, split_words="one-way", rounds=1) == \
        "BHBK-Bool-LB-1TF-1W"
    assert find_theorem(user("equality"), "transformer", layers=1, split_words="two-round", rounds=2) == \
        "BHBK-Bool-LB-1TF-2R"
    hybrid = {p: find_theorem(user(p), "hybrid", split_words="three messages", rounds=3)
              for p in ("index", "equality", "disjointness", "inner-product", "greater-than")}
    assert hybrid == {"index": "CC-INDEX-2way", "equality": "CC-EQ", "disjointness": "CC-DISJ",
                      "inner-product": "CC-IP2", "greater-than": None}
    assert find_theorem(user("equality"), "lstm", own_source=True) == "user"
    assert find_theorem(user("equality"), "lstm", split_words="one-way", rounds=1) == "BHBK-Bool-LB-RNN"


def test_the_registry_decides_every_architecture_once():
    """``list archs``' simulation column as it was written by hand in the CLI, now from the registry."""
    old_table = {"recurrent": "one-way, state", "hybrid": "prefix/suffix, 3 messages",
                 "transformer": "partition, 1 layer: partial sums; 2+ layers: keys and values"}
    for spec in list_architectures():
        assert simulation_text(spec.name) == old_table.get(spec.arch_class, "refused"), spec.name
        if spec.arch_class in old_table:
            assert split_class(spec).arch_class == spec.arch_class
        else:
            with pytest.raises(UnsupportedSplitError, match="has no protocol simulation"):
                refuse_unsplittable(spec.name, 1)
    assert {cls.kind for cls in SPLITS} == {"recurrent", "transformer", "transformer-layers", "hybrid",
                                            "attention-row"}
    assert all(kind_class(cls.kind) is cls for cls in SPLITS)


@pytest.mark.parametrize("arch, layers, task, match", [
    ("lstm", 1, "dyck", "simulated one way only.*bounded Dyck language is regular"),
    ("hybrid", 1, "qsa", "a hybrid is split only with Alice's prefix and Bob's suffix"),
    ("feedforward", 1, "index-lookup", r"feedforward \(feedforward\) has no protocol simulation"),
])
def test_refused_architectures_say_why_before_any_model_is_built(arch, layers, task, match):
    red = None if task is None else get_reduction(task)
    with pytest.raises(UnsupportedSplitError, match=match):
        refuse_unsplittable(arch, layers, red)
    if task is not None:
        with pytest.raises(UnsupportedSplitError, match=match):
            prepare(task, arch, 3, "float32", layers=layers)


def test_chain_of_thought_is_refused_by_the_families_that_cannot_run_it():
    with pytest.raises(UnsupportedSplitError, match="a hybrid with chain of thought"):
        prepare("istree", "hybrid", 3, "float32", cot=True)
    with pytest.raises(InvalidParameterError, match="chain of thought is simulated for recurrent models only"):
        prepare("istree", "transformer", 3, "float32", cot=True)
    assert prepare("istree", "lstm", 3, "float32", width=2, cot=True).split.cot is not None


@pytest.mark.parametrize("case", sorted(CASES))
def test_bobs_step_in_words_from_the_json(case):
    c = dict(CASES[case])
    out = simulate(c.pop("task"), c.pop("arch"), c.pop("n"), c.pop("precision"), **c)
    cont = out["continuation"]
    if case == "attention-row":
        want = out["bob_step"]
        assert want.startswith("Bob computes the keys and values")
    elif case == "recurrent":
        assert cont["positions"] == list(range(out["split_at"], len(out["tokens"])))
        want = (f"Bob decodes the state and continues over positions {cont['positions'][0]}.."
                f"{cont['positions'][-1]}: " + " ".join(cont["tokens"]))
    else:
        want = (f"Bob adds his partial sums over positions {cont['positions']} (" + " ".join(cont["tokens"])
                + ") and finishes the layer")
    assert bob_step_text(out) == want


def test_only_the_row_family_adds_a_note_to_verify_rows():
    out = verify("qsa", "transformer", 3, "fixed:8:4", weights="construction", instances=4)
    assert verify_note(out) == (f"one round: Alice sends her row's query, key and value, "
                                f"{out['bits_per_message']} bits; Bob attends over all rows")
    assert verify_note(verify("index-lookup", "gru", 3, "fixed:6:3", width=2, instances=4)) is None
    assert verify_note({"bits_per_message": 3}) is None


def test_capabilities_not_kinds_outside_the_families():
    """Outside the four family modules and the JSON field, no code branches on a split's kind."""
    families = {"recurrent.py", "transformer.py", "hybrid.py", "qsa.py", "splits.py", "registry.py"}
    pattern = re.compile(r"""split\.kind\s*(==|!=|in\b|not\s+in\b)|["']split_kind["']\)?\]?\s*(==|!=|in\b)""")
    offenders = []
    for path in [ROOT / "cli.py", *sorted((ROOT / "reductions").rglob("*.py"))]:
        if path.parent.name == "simulate" and path.name in families:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_capabilities_agree_with_what_each_split_accepts(case):
    """``groups_by_x``: party inputs in groups of G work exactly where it is set; ``runners``: the
    prefix tree gives the plain runner's transcript where it is listed."""
    sim = _sim(case)
    x, y = sim.problem.sample(sim.n, 2, np.random.default_rng(3))
    x, y = np.repeat(x[:1], 2, axis=0), y  # one x, two y's: a group of 2
    encoded = sim.reduction.encode(x, y, sim.n)
    if sim.split.groups_by_x:
        sim.split.party_inputs(encoded, y, group=2)
    else:
        with pytest.raises((ValueError, InvalidParameterError)):
            sim.split.party_inputs(encoded, y, group=2)
    if "prefix-tree" in sim.split.runners:
        a = run_batch(sim, x, y, alice_runner="prefix-tree", reference_runner="prefix-tree")
        b = run_batch(sim, x, y)
        assert [m.rows.array.tolist() for m in a.transcript.messages] == \
            [m.rows.array.tolist() for m in b.transcript.messages]
    assert sim.split.state_message == (case == "recurrent")
    assert sim.split.partial_sums_message == case.startswith("transformer")
