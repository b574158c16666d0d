"""The ladders and claims built in worker processes are those built in this one (seeded,
independent), and each worker's BLAS gets its share of the cores."""

import pytest

from commcomp.blas import blas_threads
from commcomp.errors import InvalidParameterError
from reductions.separations.claims import evaluate_claims
from reductions.separations.pipeline import ladders_and_claims
from reductions.separations.rows import default_workers, map_in_order, separation_ladders


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
    with pytest.raises(InvalidParameterError):
        evaluate_claims([], "bfloat16", workers=bad)


def test_default_workers_at_most_two():
    assert 1 <= default_workers() <= 2


def test_claims_in_two_workers_are_the_claims_in_one():
    kwargs = dict(tasks=["index-lookup", "string-equality"], precision="bfloat16", samples=8, budget=256,
                  check_max_length=800)
    ladders = separation_ladders(**kwargs, workers=1)
    claims = {w: evaluate_claims(ladders, "bfloat16", tasks=kwargs["tasks"], samples=8, budget=256,
                                 check_max_length=800, workers=w) for w in (1, 2)}

    def without_times(results):
        return [{k: v for k, v in c.to_json().items() if k != "seconds"} for part in results for c in part]

    assert without_times(claims[1]) == without_times(claims[2])
    assert any(c.verdict == "shown" for c in claims[2][0])          # the checks ran in the workers


def _threads_here(_):
    return blas_threads()


def test_each_worker_gets_its_share_of_blas_threads():
    """Two workers on the cores this process may use: one BLAS thread each when there are at most
    three cores (OpenBLAS's default would start one per core in each), and the parent is untouched."""
    before = blas_threads()
    if before is None:
        pytest.skip("numpy's BLAS here is not OpenBLAS")
    from reductions.separations.rows import _usable_cores

    got = list(map_in_order(_threads_here, range(4), 2))
    assert got == [max(1, _usable_cores() // 2)] * 4
    assert blas_threads() == before


def test_pipeline_gives_the_ladders_then_claims_of_the_two_steps():
    """Ladders and claims in one pool, each claim as soon as its ladder is built: the same ladders,
    lines and progress order as separation_ladders then evaluate_claims in this process, with the
    claim that reads no ladder (qSA) and one whose ladder has no strong side (Match3) among them."""
    tasks = ["index-lookup", "qsa", "match3"]
    kwargs = dict(samples=8, budget=256, check_max_length=800)
    ladders = separation_ladders(tasks, "bfloat16", workers=1, **kwargs)
    claims = evaluate_claims(ladders, "bfloat16", tasks=tasks, workers=1, **kwargs)
    labels = []
    got = ladders_and_claims(tasks, "bfloat16", workers=2, progress=labels.append, **kwargs)
    assert _without_times(got[0]) == _without_times(ladders)
    assert labels == [lad.separation.label for lad in ladders]

    def without_times(results):
        return [{k: v for k, v in c.to_json().items() if k != "seconds"} for part in results for c in part]

    assert without_times(got[1:]) == without_times(claims)
    verdicts = {c.spec.claim: c.verdict for part in got[1:] for c in part}
    assert verdicts["retrieval-qSA"] == "shown" and verdicts["retrieval-IL"] == "shown"
    assert verdicts["derived-Match3-RNN"] == "not shown" and len(verdicts) >= 5
