import numpy as np
import pytest

from commcomp.sweep.engine import WORKER_DIED, EngineError, LocalEngine, make_engine
from commcomp.sweep.grid import expand_grid
import reductions.operations  # noqa: F401 - registers verify, witness, reachable, construct
from commcomp.errors import UnknownNameError
from commcomp.sweep.operations import get_operation, run_operation
from commcomp.sweep.runner import run_sweep
from commcomp.sweep.spec import SweepSpec
from commcomp.sweep.store import ResultStore

from sweep_helpers import signature


def spec(**axes):
    return SweepSpec("selftest", name="t", params={"seconds": 0.0}, axes={k: tuple(v) for k, v in axes.items()},
                     seed=9)


def test_results_are_the_operation_on_the_derived_seed(tmp_path):
    db = str(tmp_path / "r.sqlite")
    s = spec(n=range(6))
    summary = run_sweep(s, db, workers=2)
    assert (summary.points, summary.ran, summary.skipped, summary.failed) == (6, 6, 0, 0)
    with ResultStore(db, readonly=True) as store:
        rows = {r.point: r for r in store.rows()}
    for p in expand_grid(s):
        row = rows[p.key]
        assert row.seed == p.seed and row.status == "ok" and row.version and row.wall_seconds >= 0
        assert row.result["draw"] == float(np.random.default_rng(p.seed).random())  # independent recomputation


def test_resume_skips_done_points_and_force_recomputes(tmp_path):
    db = str(tmp_path / "r.sqlite")
    assert run_sweep(spec(n=[0, 1, 2]), db, workers=0).ran == 3
    again = run_sweep(spec(n=[0, 1, 2, 3, 4]), db, workers=0)
    assert (again.ran, again.skipped) == (2, 3)
    with ResultStore(db, readonly=True) as store:
        before = {r.point: r.finished_at for r in store.rows()}
    forced = run_sweep(spec(n=[0, 1, 2, 3, 4]), db, workers=0, force=True)
    assert (forced.ran, forced.skipped) == (5, 0)
    with ResultStore(db, readonly=True) as store:
        rows = store.rows()
    assert len(rows) == 5 and all(r.finished_at >= before[r.point] for r in rows)
    assert run_sweep(spec(n=[0, 1, 2, 3, 4]), db, workers=0).ran == 0


def test_failing_points_are_recorded_and_do_not_stop_the_sweep(tmp_path):
    db = str(tmp_path / "r.sqlite")
    s = SweepSpec("selftest", name="t", axes={"fail": (False, True), "seconds": (0, -1, 0.01)})
    summary = run_sweep(s, db, workers=2)
    assert (summary.ran, summary.failed) == (6, 4)
    with ResultStore(db, readonly=True) as store:
        rows = store.rows()
    errors = {(r.params["fail"], r.params["seconds"]): r.error for r in rows if r.status == "error"}
    assert set(errors) == {(True, 0), (True, -1), (True, 0.01), (False, -1)}
    assert errors[(True, 0)].startswith("InvalidParameterError: selftest: asked to fail")
    assert errors[(False, -1)].startswith("InvalidParameterError: selftest: seconds must be")
    assert all(r.traceback and "Traceback" in r.traceback for r in rows if r.status == "error")
    assert sorted(r.params["seconds"] for r in rows if r.status == "ok") == [0, 0.01]
    # errors count as done; --retry-errors reruns them (they fail again, deterministically)
    assert run_sweep(s, db, workers=0).ran == 0
    retried = run_sweep(s, db, workers=0, retry_errors=True)
    assert (retried.ran, retried.failed, retried.skipped) == (4, 4, 2)


def test_a_job_that_kills_its_worker_is_recorded_and_the_others_finish(tmp_path):
    db = str(tmp_path / "r.sqlite")
    s = SweepSpec("selftest", name="t", params={"seconds": 0.05}, axes={"crash": (False, True), "n": (1, 2, 3)})
    summary = run_sweep(s, db, engine=LocalEngine(2))
    assert (summary.ran, summary.failed) == (6, 3)
    with ResultStore(db, readonly=True) as store:
        rows = store.rows()
    assert {(r.params["crash"], r.status) for r in rows} == {(False, "ok"), (True, "error")}
    assert all(r.error == WORKER_DIED for r in rows if r.status == "error")


def test_local_pool_and_in_process_give_the_same_rows(tmp_path):
    s = spec(n=range(5), mode=["sleep", "spin"])
    run_sweep(s, str(tmp_path / "a.sqlite"), workers=0)
    run_sweep(s, str(tmp_path / "b.sqlite"), workers=2)
    assert signature(str(tmp_path / "a.sqlite")) == signature(str(tmp_path / "b.sqlite"))


def test_callbacks_and_summary(tmp_path):
    seen, started = [], []
    summary = run_sweep(spec(n=range(4)), str(tmp_path / "r.sqlite"), workers=0,
                        on_start=lambda todo, skipped: started.append((todo, skipped)),
                        on_result=lambda point, record, counts: seen.append(dict(counts)))
    assert started == [(4, 0)]
    assert [c["done"] for c in seen] == [1, 2, 3, 4] and all(c["total"] == 4 for c in seen)
    assert summary.job_seconds >= 0 and summary.to_dict()["ran"] == 4


def test_unknown_operation_and_bad_engine_options(tmp_path):
    with pytest.raises(UnknownNameError, match="unknown operation 'nosuch'"):
        run_sweep(SweepSpec("nosuch", axes={"n": (4,)}), str(tmp_path / "r.sqlite"))
    assert not (tmp_path / "r.sqlite").exists()  # refused before the database was made
    with pytest.raises(EngineError):
        make_engine(workers=-1)


def test_accepted_parameters_are_the_wrapped_functions_keywords():
    """Read from the signatures, so they cannot drift: every keyword but seed/model/progress."""
    import inspect

    from reductions.search.witness import find_witness
    from reductions.simulate import verify

    for name, function in (("verify", verify), ("witness", find_witness)):
        keywords = set(inspect.signature(function).parameters) - {"seed", "model", "progress"}
        assert get_operation(name).accepted_names() == keywords
    from commcomp.bounds import compute_bounds
    from commcomp.matrix.measures import measure, measure_problem

    handed_on = set(inspect.signature(measure).parameters) - {"matrix", "names", "problem", "n"}
    assert get_operation("matrix").accepted_names() == {"problem", "n", "measures"} | handed_on
    assert "solver" in handed_on  # the keyword the hand-typed list had dropped
    named = {p.name for p in inspect.signature(compute_bounds).parameters.values() if p.kind != p.VAR_KEYWORD}
    assert named - {"n_values", "precision"} <= get_operation("bounds").accepted_names()
    assert get_operation("construct").accepted_names() is None  # **options: a construction's own
    assert get_operation("selftest").accepted_names() is None


def test_bounds_operation_headline_fields():
    from commcomp.bounds import compute_bounds

    out = run_operation("bounds", {"n": 1024, "precision": 16, "task": "index-lookup", "arch": "lstm"}, 0)
    rows = compute_bounds(1024, 16, task="index-lookup", arch="lstm")
    assert out["rows_count"] == len(rows) == len(out["rows"])
    assert out["lower_bound_width"] == max(r.min_width for r in rows if r.kind == "lower" and r.min_width)


def test_the_repeat_axis_is_not_passed_to_the_operation(tmp_path):
    s = SweepSpec("bounds", params={"precision": 8, "task": "index-lookup", "arch": "gru"}, axes={"n": (64,)},
                  repeats=2)
    summary = run_sweep(s, str(tmp_path / "r.sqlite"), workers=0)
    assert (summary.ran, summary.failed) == (2, 0)
    with ResultStore(str(tmp_path / "r.sqlite"), readonly=True) as store:
        rows = store.rows()
    assert [r.params["repeat"] for r in rows] == [0, 1] and rows[0].seed != rows[1].seed
    assert rows[0].result == rows[1].result  # the calculator ignores the seed


def _untimed(result):
    return {k: v for k, v in result.items() if "second" not in k}


@pytest.mark.parametrize("op, target, params", [
    ("verify", "reductions.simulate:verify",
     {"task": "string-equality", "arch": "elman", "n": 2, "precision": "fixed:4:2", "width": 1, "exhaustive": True}),
    ("witness", "reductions.search.witness:find_witness",
     {"task": "index-lookup", "arch": "lstm", "n": 8, "precision": "fixed:4:2", "width": 1}),
    ("construct", "reductions.search.construction:minimal_width",
     {"task": "index-lookup", "n": 4, "search_precision": False}),
    ("matrix", "commcomp.matrix:measure_problem", {"problem": "equality", "n": 2}),
])
def test_library_operations_return_the_library_json(op, target, params):
    """Each wrapper is the library function at the point's seed, its JSON unchanged (timings aside)."""
    import importlib

    from commcomp.jsonable import jsonable

    module, _, name = target.partition(":")
    function = getattr(importlib.import_module(module), name)
    direct = function(**params) if op == "matrix" else function(**params, seed=123)  # matrix: no randomness
    direct = jsonable(direct.to_json() if hasattr(direct, "to_json") else direct)
    assert _untimed(run_operation(op, params, 123)) == _untimed(direct)
