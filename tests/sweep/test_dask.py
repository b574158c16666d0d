"""The Dask engine on a LocalCluster gives the same rows as the local process pool."""

import pytest

distributed = pytest.importorskip("distributed")

from commcomp.sweep.runner import run_sweep  # noqa: E402
from commcomp.sweep.spec import SweepSpec  # noqa: E402

from sweep_helpers import signature  # noqa: E402

SPEC = SweepSpec("selftest", name="dask", params={"seconds": 0.01}, seed=3,
                 axes={"n": (1, 2, 3, 4, 5, 6), "fail": (False, True)})


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        yield cluster


def test_dask_scheduler_gives_the_same_rows_as_the_local_pool(tmp_path, cluster):
    local, remote = str(tmp_path / "local.sqlite"), str(tmp_path / "dask.sqlite")
    run_sweep(SPEC, local, workers=2)
    summary = run_sweep(SPEC, remote, scheduler=cluster.scheduler_address)
    assert (summary.engine, summary.workers, summary.ran, summary.failed) == ("dask", 2, 12, 6)
    assert signature(remote) == signature(local) and len(signature(local)) == 12
    again = run_sweep(SPEC, remote, scheduler=cluster.scheduler_address)  # resumes like the local engine
    assert (again.ran, again.skipped) == (0, 12)


def test_cli_scheduler_option(tmp_path, cluster, capsys):
    import cli

    db = tmp_path / "cli.sqlite"
    code = cli.main(["sweep", "run", "--op", "selftest", "--axis", "n=1,2,3", "--seed", "3", "--db", str(db),
                     "--scheduler", cluster.scheduler_address, "--format", "json"])
    assert code == 0, capsys.readouterr().err
    reference = tmp_path / "ref.sqlite"
    run_sweep(SweepSpec("selftest", axes={"n": (1, 2, 3)}, seed=3), str(reference), workers=0)
    assert signature(str(db)) == signature(str(reference))


def test_unreachable_scheduler_is_an_engine_error():
    from commcomp.sweep.engine import DaskEngine, EngineError

    with pytest.raises(EngineError, match="cannot reach the Dask scheduler"):
        DaskEngine("tcp://127.0.0.1:9", timeout=1)
