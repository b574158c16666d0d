"""The registries: names users type, defaults, errors, and each reduction's declared metadata."""

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError, UnknownNameError, UnsupportedSplitError
from reductions import (ALICE, BOB, DEFAULT_PROBLEM, PUBLIC, REDUCTIONS, SPLIT_KINDS, TASKS,
                        get_reduction, get_task, list_reductions, list_tasks)

REQUIRED_TASKS = ["index-lookup", "multi-index-lookup", "nearest-neighbour", "mqar", "string-equality",
                  "string-disjointness", "dyck", "qsa", "match2", "match3", "istree",
                  "induction-heads", "function-composition", "copy"]  # the last three: issue 23

# (problem, task) -> (split, source, section) as the issue and the reference catalogue ask
REQUIRED = {
    ("index", "index-lookup"): ("prefix-suffix", "BHBK-IL-RNN", "§8.4"),
    ("disjointness", "multi-index-lookup"): ("prefix-suffix", "BHBK-MIL-RNN", "§8.8"),
    ("index", "nearest-neighbour"): ("prefix-suffix", "BHBK-NN-RNN", "§8.4"),
    ("index", "mqar"): ("prefix-suffix", "BHBK-MQAR-RNN", "§4.1"),
    ("disjointness", "mqar"): ("prefix-suffix", "BHBK-MQAR-RNN", "§4.1"),
    ("equality", "string-equality"): ("prefix-suffix", "BHBK-EQ-RNN", "§8.5"),
    ("disjointness", "string-disjointness"): ("prefix-suffix", "BHBK-DISJ-RNN", "§8.5"),
    ("equality", "dyck"): ("interleaved-partition", "BHBK-Dyck-1TF", "§8.9"),
    ("disjointness", "dyck"): ("interleaved-partition", "BHBK-Dyck-1TF", "§8.9"),
    ("disjointness", "qsa"): ("partition", "SHT-qSA-LB", "§8.7"),
    ("disjointness", "match3"): ("prefix-suffix", "SHT-Match3-LB", "§8.6"),
    ("disjointness", "istree"): ("prefix-suffix", "WDL-IsTree-RNN", "§8.10"),
    ("index", "induction-heads"): ("partition", "SHT24-IH-1TF", "SHT 2024 §2 [D]"),
    ("index@prefix", "induction-heads"): ("prefix-suffix", "COMMCOMP-IH-RNN", "SHT 2024 §2 [D]"),
    ("index", "function-composition"): ("prefix-suffix", "COMMCOMP-FC-RNN", "PNP 2024 Thm 1 [D]"),
    ("index@split", "function-composition"): ("partition", "SAF-FE-split-1TF", "Strobl et al. 2025 [D]"),
    ("index@bits", "function-composition"): ("prefix-suffix", "COMMCOMP-FC-bits-1TF", "PNP 2024 Thm 1 [D]"),
    ("index", "copy"): ("prefix-suffix", "JBKM-copy-GSSM", "JBKM 2024 §2 [D]"),
}


def test_every_required_task_name_resolves():
    assert sorted(REQUIRED_TASKS) == list(list_tasks())
    for name in REQUIRED_TASKS:
        assert get_task(name).name == name
        assert get_reduction(name).task_name == name  # every task has a default reduction


@pytest.mark.parametrize("alias, name", [("IL", "index-lookup"), ("nearest_neighbor", "nearest-neighbour"),
                                         ("associative-recall", "mqar"), ("is-tree", "istree"),
                                         ("q-sparse-averaging", "qsa"), ("MIL", "multi-index-lookup")])
def test_task_aliases(alias, name):
    assert get_task(alias).name == name


def test_required_reductions_with_source_and_tag():
    for (problem, task), (split, source, section) in REQUIRED.items():
        red = REDUCTIONS[(problem, task)]
        assert (red.split, red.source, red.section) == (split, source, section)
        assert red.tag.startswith("[") and red.name == f"{problem}->{task}"
        assert red.output_owner == BOB
    # a second split of one (problem, task) is keyed problem@split, and its name says so
    assert {(r.name.split("->")[0], r.task_name) for r in list_reductions()} == set(REDUCTIONS)
    assert all(key[0].split("@")[0] == r.problem for key, r in REDUCTIONS.items())
    assert all(r.split in SPLIT_KINDS for r in list_reductions())


def test_problem_option_picks_a_reduction():
    assert get_reduction("mqar").problem == "index"
    assert get_reduction("mqar", problem="disj").problem == "disjointness"
    assert get_reduction("dyck").task.depth == 2 and get_reduction("dyck", "eq").task.depth == 1
    for task, problem in DEFAULT_PROBLEM.items():
        assert (problem, task) in REDUCTIONS


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownNameError, match="index-lookup"):
        get_task("no-such-task")
    with pytest.raises(UnknownNameError, match="disjointness, equality"):
        get_reduction("dyck", problem="index")
    with pytest.raises(UnknownNameError, match="known"):
        get_reduction("dyck", problem="no-such-problem")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_sizes_raise(bad):
    with pytest.raises(InvalidParameterError):
        get_reduction("index-lookup").encode(np.zeros((1, 1), np.uint8), np.zeros(1, np.int64), bad)
    with pytest.raises(InvalidParameterError):
        get_task("dyck").length(bad)


def test_mismatched_input_shapes_raise():
    red = get_reduction("string-equality")
    with pytest.raises(InvalidParameterError):
        red.encode(np.zeros((2, 3), np.uint8), np.zeros((2, 3), np.uint8), 4)
    with pytest.raises(InvalidParameterError):
        get_task("istree").sample(3, 4, np.random.default_rng(0))  # no simple non-tree on 3 nodes


def test_split_point_of_prefix_suffix_reductions():
    assert get_reduction("index-lookup").split_point(5) == 5
    assert get_reduction("istree").split_point(3) == 1 + 3 * 2 + 1  # after u of Alice's 3rd edge
    assert get_reduction("multi-index-lookup").split_point(4) == 8
    with pytest.raises(UnsupportedSplitError):
        get_reduction("dyck").split_point(3)


def test_owner_codes():
    assert (PUBLIC, ALICE, BOB) == (0, 1, 2)
    for red in list_reductions():
        owners = red.owners(3)
        assert owners.dtype == np.int8 and owners.shape == (red.length(3),)


def test_default_task_instances_are_the_registry_ones():
    assert TASKS["mqar"].num_queries == 1
    assert (TASKS["dyck"].types, TASKS["dyck"].depth) == (2, 2)
