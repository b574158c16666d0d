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
    lower = [best_lower_bound("induction-heads", "transformer", N, 16, layers=1).min_width for N in (1891, 1893)]
    upper = [best_construction("induction-heads", "transformer", N, 16, layers=2).min_width for N in (1891, 1893)]
    assert lower[0] <= upper[0] and lower[1] > upper[1]  # 34 <= 34, then 35 > 34
