"""Issue 23 claim rows (reductions/separations/claims_newer.py): well-formed, every id and construction
they name exists, and the depth claim's two sides cross where the catalogue says."""

import re

from commcomp.bounds import best_construction, best_lower_bound, get_bound
from models.constructions import get_construction
from reductions import get_task
from reductions.separations.claims_newer import FIELDS, NEWER_CLAIMS, NEWER_DERIVED


def test_rows_have_the_claim_fields_and_name_real_things():
    for row in NEWER_CLAIMS + NEWER_DERIVED:
        assert tuple(row) == FIELDS
        assert get_task(row["task"]).name == row["task"]
        for bound_id in re.findall(r"[A-Z][A-Z0-9]+(?:-[A-Za-z0-9]+)+", row["source"]):
            assert get_bound(bound_id).task == row["task"], bound_id
        if row["construction"]:
            assert get_construction(row["construction"]).task == row["task"]
        assert best_lower_bound(row["task"], row["weak_arch"], 4097, 16, layers=row["weak_layers"]) is not None


def test_depth_claim_crosses_at_the_catalogue_crossover():
    lower = [best_lower_bound("induction-heads", "transformer", N, 16, layers=1).min_width for N in (1837, 1839)]
    upper = [best_construction("induction-heads", "transformer", N, 16, layers=2).min_width for N in (1837, 1839)]
    assert lower[0] <= upper[0] and lower[1] > upper[1]  # 33 <= 33, then 34 > 33


def test_the_rows_are_in_the_claims_table():
    from reductions.separations.claim_specs import CLAIMS, DERIVED, GROUPS

    names = {c.claim for c in CLAIMS + DERIVED}
    assert {row["claim"] for row in NEWER_CLAIMS + NEWER_DERIVED} <= names and "newer" in GROUPS
    ih_rnn = next(c for c in CLAIMS if c.claim == "newer-IH-RNN")
    assert ih_rnn.problem == "index@prefix" and ih_rnn.construction == "induction-heads-2tf"


def test_copy_claim_runs_all_four_checks_at_its_crossover():
    from reductions.separations.claims import evaluate_claims
    from reductions.separations.rows import separation_ladders

    ladders = separation_ladders(["copy"], "bfloat16")
    claims, _ = evaluate_claims(ladders, "bfloat16", tasks=["copy"])
    (copy,) = claims
    checks = {c.name: c for c in copy.checks}
    assert copy.crossover_N == 739 and copy.verdict == "shown"   # 369 bits / 16 = 23.06 -> 24 > 23
    assert checks["witness"].data["bits_per_message"] < checks["witness"].data["lower_bound_bits"] == 369
    assert checks["protocol"].data["instances"] == 4              # 739 tokens x 369 outputs: the cap
    assert checks["construction"].data["adversarial"] == 1        # INDEX pairs all encode the same string


def test_ih_rnn_witness_runs_on_the_prefix_reduction():
    from reductions.separations.checks import witness_check

    default = witness_check("induction-heads", "elman", 1, 40, "bfloat16", lower_width=3)
    prefix = witness_check("induction-heads", "elman", 1, 40, "bfloat16", lower_width=3, problem="index@prefix")
    assert default.status == "not checked"   # the partition split has no recurrent protocol
    assert prefix.status == "found" and prefix.data["bits_per_message"] < prefix.data["lower_bound_bits"]
