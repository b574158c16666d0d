"""The ladders built in worker processes are the ladders built in this one (seeded, independent)."""

import pytest

from commcomp.errors import InvalidParameterError
from reductions.separations.rows import default_workers, separation_ladders


def _without_times(ladders):
    out = []
    for lad in ladders:
        data = lad.to_json()
        for row in data["rows"]:
            row.pop("seconds")
        out.append(data)
    return out


def test_two_workers_give_the_same_rows_in_the_same_order():
    kwargs = dict(tasks=["index-lookup", "string-equality"], precision="bfloat16", samples=8, budget=256,
                  check_max_length=800)
    one = separation_ladders(**kwargs, workers=1)
    labels = []
    two = separation_ladders(**kwargs, workers=2, progress=labels.append)
    assert len(one) >= 3 and labels == [lad.separation.label for lad in one]
    assert _without_times(one) == _without_times(two)
    assert any(c.status == "passed" for lad in two for r in lad.rows for c in r.checks)  # checks ran there


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_workers_refused(bad):
    with pytest.raises(InvalidParameterError):
        separation_ladders(["index-lookup"], workers=bad)


def test_default_workers_at_most_two():
    assert 1 <= default_workers() <= 2
