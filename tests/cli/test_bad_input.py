"""Bad input over every subcommand, in process through ``cli.main``.

Every row is one class of bad input: a bad output destination (a symbolic link, a folder, a
missing or read-only folder, a dangling link, a block device), a size past its documented limit,
a negative or absurd seed/count, an out-of-range number format. Each must end with exit
status 2, exactly one line on stderr naming what was wrong, nothing on stdout, no traceback,
and no file left behind (the folder is compared before and after; a link's target is unchanged).
"""

import os
import stat

import pytest

import cli

# commands that run quickly when their arguments are good, so that a bad destination is the only fault
QUICK = {
    "list": ["list", "tasks"],
    "bounds": ["bounds", "--n", "16", "--task", "index-lookup", "--arch", "elman"],
    "bounds-computed": ["bounds", "--n", "3", "--computed", "--task", "index-lookup"],
    "simulate": ["simulate", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "float32"],
    "verify": ["verify", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "float32",
               "--instances", "8"],
    "witness": ["witness", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "fixed:4:2",
                "--width", "1"],
    "construct": ["construct", "index-lookup", "--n", "4", "--check", "0"],
    "matrix": ["matrix", "index", "--n", "2"],
    "separations": ["separations", "--n", "2", "--task", "index-lookup", "--arch", "recurrent",
                    "--instances", "2"],
    "sweep-run": ["sweep", "run", "--op", "selftest", "--axis", "n=1,2", "--workers", "0"],
    "sweep-ops": ["sweep", "ops"],
    "import": ["import", "torch", os.path.join(os.path.dirname(__file__), "..", "fixtures",
                                               "tiny_lstm_index_lookup.state_dict.npz"), "--arch", "lstm"],
}


def _listing(folder):
    return sorted(os.listdir(folder))


def _expect_one_line_exit_2(capsys, argv, folder, *needles):
    before = _listing(folder)
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (argv, code, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert _listing(folder) == before  # nothing left behind: no output, no temporary, no database
    return lines[0]


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A folder holding a regular file, a link to it, a dangling link and a subfolder; cwd there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", "1G")
    (tmp_path / "target.txt").write_text("keep\n")
    os.symlink("target.txt", tmp_path / "link.txt")
    os.symlink("nowhere.txt", tmp_path / "dangling.txt")
    (tmp_path / "folder").mkdir()
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o555)  # read-only for a user; root writes anyway, so root uses /sys below
    yield tmp_path
    os.chmod(tmp_path / "ro", 0o755)


READ_ONLY = "/sys/commcomp-out.txt" if os.geteuid() == 0 else "ro/out.txt"


# -- output destinations: every command that writes, every class ------------------------------
DESTINATIONS = [  # (class, path relative to the fixture folder, words the message must hold)
    ("symlink", "link.txt", ("link.txt", "symbolic link")),
    ("dangling symlink", "dangling.txt", ("dangling.txt", "does not exist")),
    ("folder as the file", "folder", ("folder", "is a folder")),
    ("missing folder", "no/such/out.txt", ("no/such/out.txt", "does not exist")),
    ("read-only folder", READ_ONLY, (READ_ONLY, "not writable")),
]


@pytest.mark.parametrize("command", sorted(QUICK))
@pytest.mark.parametrize("kind,path,needles", DESTINATIONS, ids=[d[0] for d in DESTINATIONS])
def test_bad_out_destination(capsys, place, command, kind, path, needles):
    argv = QUICK[command] + ["--out", path]
    _expect_one_line_exit_2(capsys, argv, place, *needles)
    assert os.path.islink(place / "link.txt") and (place / "target.txt").read_text() == "keep\n"


@pytest.mark.parametrize("argv", [
    QUICK["bounds"] + ["--plot", "folder"],
    QUICK["sweep-run"] + ["--plot", "no/such/p.png"],
    QUICK["sweep-run"] + ["--db", "folder"],
    QUICK["sweep-run"] + ["--db", "no/such/r.sqlite"],
    QUICK["sweep-run"] + ["--db", "-"],
    QUICK["sweep-run"] + ["--db", "dangling.txt"],
], ids=["bounds-plot-folder", "sweep-plot-missing", "sweep-db-folder", "sweep-db-missing", "sweep-db-stdout",
        "sweep-db-dangling"])
def test_bad_plot_and_database_destinations(capsys, place, argv):
    _expect_one_line_exit_2(capsys, argv, place)


def test_block_device_is_refused(capsys, place):
    devices = [os.path.join("/dev", d) for d in sorted(os.listdir("/dev"))
               if stat.S_ISBLK(os.stat(os.path.join("/dev", d)).st_mode)] if os.path.isdir("/dev") else []
    if not devices:
        pytest.skip("no block device here")
    line = _expect_one_line_exit_2(capsys, QUICK["list"] + ["--out", devices[0]], place, "block device")
    assert stat.S_ISBLK(os.stat(devices[0]).st_mode)  # still a device node
    assert devices[0] in line


# -- optional extras and destinations are checked before any work (nothing left behind) --------
def test_sweep_plot_without_matplotlib_stops_before_the_sweep(capsys, place, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    _expect_one_line_exit_2(capsys, QUICK["sweep-run"] + ["--plot", "p.png", "--db", "r.sqlite"], place,
                            "matplotlib")


def test_scheduler_without_dask_leaves_no_database(capsys, place, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    _expect_one_line_exit_2(capsys, QUICK["sweep-run"] + ["--scheduler", "tcp://127.0.0.1:1", "--db", "r.sqlite"],
                            place, "Dask")


def test_sweep_out_into_missing_folder_runs_nothing(capsys, place):
    _expect_one_line_exit_2(capsys, QUICK["sweep-run"] + ["--db", "r.sqlite", "--out", "no/t.txt"], place,
                            "no/t.txt")


# -- sizes and values: every class, the limit in the message ----------------------------------
VALUES = [
    ("automaton task", ["automaton", "--task", "no-such-task", "--arch", "rnn", "--precision", "fixed:2:0"],
     ("unknown task 'no-such-task'",)),
    ("automaton language", ["automaton", "--task", "dyck", "--arch", "rnn", "--weights", "construction",
                            "--precision", "fixed:2:0", "--against", "no-such-lang"], ("unknown language",)),
    ("separations n", ["separations", "--n", "1000000000"], ("n <= 1048576",)),
    ("separations n memory", ["separations", "--n", "1000000", "--instances", "1000", "--task", "index-lookup"],
     ("n = 1000000", "limit n <=", "memory limit is 1.0 GiB")),
    ("separations width", ["separations", "--width", "1000000000", "--task", "index-lookup"], ("width <= 4096",)),
    ("separations seed", ["separations", "--seed", "-1"], ("seed", "0..")),
    ("separations instances", ["separations", "--instances", "0"], ("--instances",)),
    ("separations sizes", ["separations", "--task", "index-lookup", "--sizes", "0"], ("--sizes",)),
    ("separations ladder size", ["separations", "--task", "index-lookup", "--sizes", "1000000000"], ("--sizes <= ",)),
    ("separations weak width", ["separations", "--weak-width", "1000000000"], ("--weak-width <= 4096",)),
    ("separations samples", ["separations", "--samples", "-3"], ("--samples",)),
    ("separations check length", ["separations", "--check-max-length", "1000000"],
     ("check-max-length = 1000000", "memory limit")),
    ("construct n", ["construct", "index-lookup", "--n", "1000000000"], ("limit n <=", "memory limit")),
    ("construct check", ["construct", "index-lookup", "--n", "4", "--check", "-1"], ("--check", ">= 0")),
    ("construct seed", ["construct", "index-lookup", "--n", "4", "--seed", "-5"], ("seed",)),
    ("construct precision", ["construct", "index-lookup", "--n", "4", "--precision", "fixed:99:3"],
     ("fixed:99:3", "2 <= P <= 53")),
    ("bounds computed n", ["bounds", "--n", "1000000000", "--computed", "--task", "index-lookup"],
     ("limit n <=",)),
    ("bounds precision", ["bounds", "--n", "8", "--precision", "2000"], ("1..1024",)),
    ("verify instances", QUICK["verify"][:-2] + ["--instances", "1000000000000"], ("instances <= ",)),
    ("verify instances memory", QUICK["verify"][:-2] + ["--instances", "100000000"],
     ("instances = 100000000", "memory limit")),
    ("verify seed", QUICK["verify"] + ["--seed", "-1"], ("seed",)),
    ("verify width", QUICK["verify"] + ["--width", "100000"], ("width <= 4096",)),
    ("verify layers", QUICK["verify"] + ["--layers", "1000"], ("layers <= 64",)),
    ("verify n", ["verify", "index-lookup", "--arch", "elman", "--n", "2000000", "--precision", "float32",
                  "--instances", "8"], ("n <= 1048576",)),
    ("verify precision F", ["verify", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "fixed:8:2000",
                            "--instances", "8"], ("fixed:8:2000", "P-1024 <= F <= 1022")),
    ("simulate seed", QUICK["simulate"] + ["--seed", "99999999999999999999"], ("seed",)),
    ("simulate precision P", QUICK["simulate"][:-1] + ["99"], ("precision 99", "2 <= P <= 53")),
    ("simulate heads", ["simulate", "index-lookup", "--arch", "transformer", "--n", "4", "--precision", "float32",
                        "--heads", "5000"], ("heads <= 1024",)),
    ("witness budget", QUICK["witness"] + ["--budget", "1000000000000"], ("budget <= ",)),
    ("witness seed", QUICK["witness"] + ["--seed", "-1"], ("seed",)),
    ("witness time limit 0", QUICK["witness"] + ["--time-limit", "0"], ("positive number of seconds",)),
    ("witness time limit nan", QUICK["witness"] + ["--time-limit", "nan"], ("positive number of seconds",)),
    ("witness time limit text", QUICK["witness"] + ["--time-limit", "soon"], ("positive number of seconds",)),
    ("matrix n", ["matrix", "index", "--n", "100"], ("n <= 14",)),
    ("import missing file", ["import", "torch", "no-such.pt", "--arch", "lstm", "--out", "m.npz"], ("no-such.pt",)),
    ("import wrong arch", QUICK["import"][:-1] + ["gru", "--out", "m.npz"], ("nn.GRU", "use --arch lstm")),
    ("sweep seed", QUICK["sweep-run"] + ["--seed", "-1", "--db", "r.sqlite"], ("seed",)),
    ("sweep workers", QUICK["sweep-run"][:-2] + ["--workers", "-1", "--db", "r.sqlite"], ("--workers",)),
    ("sweep workers absurd", QUICK["sweep-run"][:-2] + ["--workers", "100000", "--db", "r.sqlite"], ("1024",)),
    ("sweep repeats", QUICK["sweep-run"] + ["--repeats", "1000000000", "--db", "r.sqlite"],
     ("sweep points <= 1048576",)),
    ("sweep axes", ["sweep", "run", "--op", "selftest", "--axis", "n=" + ",".join(map(str, range(1100))),
                    "--axis", "m=" + ",".join(map(str, range(1000))), "--db", "r.sqlite"], ("sweep points <= ",)),
]


@pytest.mark.parametrize("argv,needles", [v[1:] for v in VALUES], ids=[v[0] for v in VALUES])
def test_bad_value(capsys, place, argv, needles):
    _expect_one_line_exit_2(capsys, argv, place, *needles)


def test_every_subcommand_has_a_row():
    """The tables above cover every subcommand the parser knows."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    covered = {argv[0] for argv in QUICK.values()} | {row[1][0] for row in VALUES}
    assert set(sub.choices) <= covered, set(sub.choices) - covered


# -- issue 25: the last bad inputs (each: exit 2, one line, nothing written) -------------------
TINY_SD = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tiny_lstm_index_lookup.state_dict.npz")


@pytest.fixture
def trust_files(place):
    """Bad files of every kind named by issue 25, made in the fixture folder."""
    import sqlite3

    import numpy as np

    from models.files import save_model
    from models.registry import build_model

    elman = build_model("elman", vocab_size=6, width=4, n_outputs=2, seed=0)
    save_model(elman, place / "good.npz")
    raw = bytearray((place / "good.npz").read_bytes())
    for i in range(len(raw) // 2, len(raw) // 2 + 40):
        raw[i] ^= 0xFF
    (place / "corrupt.npz").write_bytes(bytes(raw))
    (place / "garbage.npz").write_text("not a model\n")
    save_model(build_model("lstm", vocab_size=6, width=4, n_outputs=2, seed=0), place / "lstm.npz")
    sd = dict(np.load(TINY_SD))
    np.savez(place / "nan_sd.npz", **{k: np.full_like(v, np.nan) for k, v in sd.items()})
    np.savez(place / "no_bias_sd.npz", **{k: v for k, v in sd.items() if k != "rnn.bias_hh_l0"})
    (place / "corrupt.pt").write_bytes(b"PK\x03\x04 not a checkpoint")
    con = sqlite3.connect(place / "foreign.sqlite")
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    assert cli.main(QUICK["sweep-run"] + ["--db", "sweep.sqlite", "--format", "json"]) == 0
    os.symlink("sweep.sqlite", place / "sweep-link.sqlite")
    (place / "spec.txt").write_text('[sweep]\nname = "s"\noperation = "selftest"\n[axes]\nn = [1, 2]\n')
    np.save(place / "F.npy", np.eye(4, dtype=np.int64))
    yield place


SIM = ["simulate", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "float32"]
VER = ["verify", "index-lookup", "--arch", "elman", "--n", "4", "--precision", "float32", "--instances", "4"]
SEP = ["separations", "--task", "index-lookup", "--weak", "elman", "--sizes", "4"]
SWEEP = QUICK["sweep-run"]
ISSUE25 = [  # (case, environment, argv, words the message must hold)
    ("corrupt npz simulate", {}, SIM + ["--weights", "corrupt.npz"], ("corrupt.npz", "corrupt")),
    ("corrupt npz verify", {}, VER + ["--weights", "corrupt.npz"], ("corrupt.npz", "corrupt")),
    ("corrupt npz separations", {}, SEP + ["--weights", "corrupt.npz"], ("corrupt.npz", "corrupt")),
    ("db symlink", {}, SWEEP + ["--db", "sweep-link.sqlite"], ("symbolic link",)),
    ("db foreign sqlite", {}, SWEEP + ["--db", "foreign.sqlite"], ("not a commcomp results database",)),
    ("db not sqlite", {}, SWEEP + ["--db", "garbage.npz"], ("not an SQLite database",)),
    ("db empty name", {}, SWEEP + ["--db", ""], ("--db ''",)),
    ("import NaN state dict", {}, ["import", "torch", "nan_sd.npz", "--arch", "lstm", "--out", "m.npz"],
     ("non-finite weights",)),
    ("import missing bias", {}, ["import", "torch", "no_bias_sd.npz", "--arch", "lstm", "--out", "m.npz"],
     ("rnn.bias_hh_l0",)),
    ("import corrupt pt", {}, ["import", "torch", "corrupt.pt", "--arch", "lstm", "--out", "m.npz"], ("corrupt.pt",)),
    ("import problem without task", {}, ["import", "torch", TINY_SD, "--arch", "lstm", "--problem", "bogus",
                                         "--out", "m.npz"], ("--problem",)),
    ("import gru bidirectional", {}, ["import", "torch", TINY_SD, "--arch", "gru", "--bidirectional",
                                      "--out", "m.npz"], ("--bidirectional does not apply",)),
    ("separations weights garbage", {}, SEP + ["--weights", "garbage.npz"], ("garbage.npz", "not a commcomp model")),
    ("separations weights other arch", {}, SEP + ["--weights", "lstm.npz"], ("holds an lstm", "--weak lstm")),
    ("separations n with sizes", {}, ["separations", "--n", "8", "--sizes", "64"], ("--sizes is not used",)),
    ("separations empty precision", {}, ["separations", "--precision", ""], ("precision ''",)),
    ("separations spaced precision", {}, SEP + ["--precision", " float32"], ("spaces",)),
    ("full-width digit", {}, SIM[:-1] + ["fixed:\uff18:4"], ("non-ASCII",)),
    ("spaced precision simulate", {}, SIM[:-1] + [" float32"], ("spaces",)),
    ("bounds n 1e100", {}, ["bounds", "--n", "1e100"], ("--n",)),
    ("bounds n 10^100", {}, ["bounds", "--n", str(10 ** 100)], ("N <= 2^64",)),
    ("matrix file with n", {}, ["matrix", "--matrix", "F.npy", "--n", "3"], ("leave --n out",)),
    ("sweep spec txt", {}, ["sweep", "run", "spec.txt", "--workers", "0", "--db", "s.sqlite"], ("spec.txt", ".toml")),
    ("backend bogus sweep", {"COMMCOMP_BACKEND": "bogus"}, SWEEP + ["--db", "b.sqlite"], ("bogus",)),
]
for _value in ("garbage", "1", "-5", ""):
    for _name, _argv in (("simulate", SIM), ("sweep run", SWEEP + ["--db", "m.sqlite"])):
        ISSUE25.append((f"memory limit {_value!r} {_name}", {"COMMCOMP_MEMORY_LIMIT": _value}, _argv,
                        ("COMMCOMP_MEMORY_LIMIT",)))


@pytest.mark.parametrize("env,argv,needles", [c[1:] for c in ISSUE25], ids=[c[0] for c in ISSUE25])
def test_issue25_bad_input(capsys, trust_files, monkeypatch, env, argv, needles):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capsys.readouterr()
    _expect_one_line_exit_2(capsys, argv, trust_files, *needles)
    assert os.path.islink(trust_files / "sweep-link.sqlite")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only file anyway")
def test_read_only_database_is_refused(capsys, trust_files):
    os.chmod(trust_files / "sweep.sqlite", 0o444)
    try:
        _expect_one_line_exit_2(capsys, SWEEP + ["--db", "sweep.sqlite"], trust_files, "not writable")
    finally:
        os.chmod(trust_files / "sweep.sqlite", 0o644)


def test_a_whole_pickled_module_is_refused_without_torch_advice(capsys, trust_files):
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.LSTM(3, 4), trust_files / "module.pt")
    line = _expect_one_line_exit_2(capsys, ["import", "torch", "module.pt", "--arch", "lstm", "--out", "m.npz"],
                                   trust_files, "pickled object")
    assert "weights_only=False" not in line and "\x1b" not in line
