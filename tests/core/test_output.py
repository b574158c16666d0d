"""The output-file policy of commcomp.output: what is written into, replaced or refused, and how."""

import os
import stat
import threading

import numpy as np
import pytest

import cli
from commcomp.errors import MissingDependencyError, OutputError
from commcomp.output import atomic_output, check_database, check_destination, require_module, write_text


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_new_file_honours_the_umask(tmp_path, umask_027):
    path = tmp_path / "t.txt"
    write_text(str(path), "x")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640  # 0666 & ~027, not mkstemp's 0600


def test_cli_out_and_construct_out_honour_the_umask(tmp_path, umask_027, capsys):
    assert cli.main(["list", "tasks", "--out", str(tmp_path / "t.txt")]) == 0
    assert cli.main(["construct", "index-lookup", "--n", "4", "--check", "0", "--out", str(tmp_path / "m.npz")]) == 0
    for name in ("t.txt", "m.npz"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["m.npz", "t.txt"]  # no temporary left


def test_replaced_file_keeps_its_mode_and_is_replaced_whole(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("old and much longer text\n")
    os.chmod(path, 0o604)
    write_text(str(path), "new")
    assert path.read_text() == "new\n" and stat.S_IMODE(os.stat(path).st_mode) == 0o604


def test_failed_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_output(str(path)) as tmp:
            open(tmp, "w").write("half")
            raise RuntimeError("writer failed")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["t.txt"]


def test_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()))
    reader.start()
    write_text(str(fifo), "through the pipe")
    reader.join(10)
    assert received == ["through the pipe\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_character_devices_and_dash(capsys):
    assert check_destination("/dev/null").action == "stream"
    write_text("/dev/null", "discarded")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    assert check_destination("-").action == "stdout" and check_destination("/dev/stdout").action == "stdout"
    assert cli.main(["list", "tasks", "--out", "-", "--format", "json"]) == 0
    assert capsys.readouterr().out.startswith("[")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_device_that_fails_is_one_line_and_stays_a_device(capsys):
    assert cli.main(["list", "tasks", "--out", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/dev/full" in err
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_link_to_a_fifo_is_followed(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    os.symlink("pipe", tmp_path / "link")
    assert check_destination(str(tmp_path / "link")).action == "stream"


def test_link_to_a_file_is_refused_and_left_alone(tmp_path):
    (tmp_path / "target").write_text("keep")
    os.symlink("target", tmp_path / "link")
    with pytest.raises(OutputError, match="symbolic link"):
        write_text(str(tmp_path / "link"), "x")
    assert os.path.islink(tmp_path / "link") and (tmp_path / "target").read_text() == "keep"


def test_read_only_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "t.txt"
    path.write_text("keep")
    os.chmod(path, 0o444)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(path) else real_access(p, mode))
    with pytest.raises(OutputError, match="read-only"):
        write_text(str(path), "x")
    assert path.read_text() == "keep"


def test_database_rules(tmp_path):
    db = tmp_path / "r.sqlite"
    assert check_database(str(db)) == str(db) and not db.exists()
    for bad, words in ((str(tmp_path), "folder"), ("-", "standard output"), (str(tmp_path / "x" / "r.sqlite"),
                                                                               "does not exist")):
        with pytest.raises(OutputError, match=words):
            check_database(bad)


def test_require_module():
    require_module("numpy", "never raised")
    with pytest.raises(MissingDependencyError, match="needs it"):
        require_module("no_such_module_commcomp", "needs it")


def test_model_file_written_atomically_loads_back(tmp_path):
    from models.files import load_model

    path = tmp_path / "m.npz"
    assert cli.main(["construct", "index-lookup", "--n", "4", "--check", "0", "--out", str(path)]) == 0
    model = load_model(path)
    assert all(np.isfinite(np.asarray(v, dtype=float)).all() for v in model.params.values())


def test_construct_model_to_stdout_keeps_the_summary_off_it(tmp_path):
    import subprocess
    import sys

    from models.files import load_model

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, os.path.join(root, "cli.py"), "construct", "index-lookup", "--n", "4",
                           "--check", "0", "--out", "-"], capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and done.stdout[:2] == b"PK"  # the .npz (a zip) alone on stdout
    (tmp_path / "m.npz").write_bytes(done.stdout)
    assert load_model(tmp_path / "m.npz").arch == "transformer" and b"construction" in done.stderr


def test_run_sweep_with_a_scheduler_and_no_dask_creates_no_database(tmp_path, monkeypatch):
    import sys

    from commcomp.sweep.runner import run_sweep
    from commcomp.sweep.spec import SweepSpec

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match="Dask"):
        run_sweep(SweepSpec("selftest", name="d", axes={"n": (1,)}), str(tmp_path / "r.sqlite"),
                  scheduler="tcp://127.0.0.1:1")
    assert os.listdir(tmp_path) == []
