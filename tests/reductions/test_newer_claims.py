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


def test_depth_fc_witness_runs_on_the_one_bit_reduction_at_the_crossover_length():
    from reductions import get_reduction
    from reductions.separations.checks import witness_check
    from reductions.separations.claims import _same_length_size

    default, bits = get_reduction("function-composition"), get_reduction("function-composition", "index@bits")
    k = next(k for k in range(1, 2000) if default.length(k) == 187)   # the claim's crossover N at bfloat16
    assert bits.length(_same_length_size("function-composition", "index@bits", k)) == 187
    assert _same_length_size("induction-heads", "index@prefix", 40) == 40    # same lengths: same size
    split = get_reduction("function-composition", "index@split")            # N = 4n + 1: the nearest shorter
    assert split.length(_same_length_size("function-composition", "index@split", k)) == 185
    refused = witness_check("function-composition", "transformer", 1, k, "bfloat16", lower_width=38)
    assert refused.status == "not checked" and "several bits" in refused.detail
    found = witness_check("function-composition", "transformer", 1, 93, "bfloat16", lower_width=38,
                          problem="index@bits")
    assert found.status == "found" and found.data["bits_per_message"] < found.data["lower_bound_bits"] == 93


def test_depth_ih_witness_runs_at_its_crossover():
    """The partition split of induction heads runs the attention engine (no (B, N, N) arrays): N = 1839."""
    from reductions.separations.checks import witness_check

    found = witness_check("induction-heads", "transformer", 1, 919, "bfloat16", lower_width=34)
    assert found.status == "found" and found.data["bits_per_message"] < found.data["lower_bound_bits"] == 919


def test_derived_split_line_runs_its_witness_on_the_split_layout_partition():
    from reductions.separations.claims import evaluate_claims
    from reductions.separations.rows import separation_ladders

    ladders = separation_ladders(["function-composition"], "bfloat16")
    _, derived = evaluate_claims(ladders, "bfloat16", tasks=["function-composition"])
    (split,) = [c for c in derived if c.spec.claim == "derived-FC-split"]
    witness = {c.name: c for c in split.checks}["witness"]
    # the checked row is N = 187: the split layout at N = 185 holds 46 bits, a width-1 layer sends 48, so a
    # wrong answer there is no witness of the bound, and the line says so instead of "found"
    assert witness.status == "not checked" and "48 bits, not below the 46 the problem needs" in witness.detail
    assert "index@split at N = 185" in witness.detail
    assert witness.data["found"] and witness.data["bits_per_message"] >= witness.data["lower_bound_bits"]
