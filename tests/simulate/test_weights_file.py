"""``--weights FILE``: the file is checked against the run before anything runs, sets its own sizes, and
its saturations are counted on the Precision that ran."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cli
from models.files import ModelFileError, save_model
from models.registry import build_model
from reductions.registry import get_reduction
from reductions.simulate import verify
from reductions.simulate.setup import answer_classes
from reductions.search.witness import find_witness


def _vocab(task, n):
    red = get_reduction(task)
    return red.task.vocab_size(red.task_size(n)), answer_classes(red, n)


@pytest.fixture()
def lstm_file(tmp_path):
    vocab, classes = _vocab("index-lookup", 6)
    path = tmp_path / "lstm.npz"
    save_model(build_model("lstm", vocab_size=vocab, width=3, n_outputs=classes, seed=1), path,
               about={"task": "index-lookup", "n": 6})
    return path


def _cli_error(capsys, argv, *needles):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


BASE = ["verify", "index-lookup", "--n", "6", "--precision", "fixed:8:4", "--instances", "4"]


def test_arch_must_match_the_file(capsys, lstm_file):
    with pytest.raises(ModelFileError, match="holds an lstm model .* not elman: run it with --arch lstm"):
        verify("index-lookup", "elman", 6, "fixed:8:4", weights=str(lstm_file), instances=4)
    _cli_error(capsys, BASE + ["--arch", "elman", "--weights", str(lstm_file)], "holds an lstm model", "--arch lstm")


def test_transformer_file_run_as_lstm(capsys, tmp_path):
    vocab, classes = _vocab("index-lookup", 6)
    path = tmp_path / "tf.npz"
    save_model(build_model("transformer", vocab_size=vocab, width=4, n_outputs=classes, max_len=16), path)
    _cli_error(capsys, BASE + ["--arch", "lstm", "--weights", str(path)], "holds a transformer model",
               "--arch transformer")


def test_size_recorded_in_the_file_must_match(capsys, lstm_file):
    _cli_error(capsys, ["verify", "index-lookup", "--n", "5", "--precision", "fixed:8:4", "--instances", "4",
                        "--arch", "lstm", "--weights", str(lstm_file)], "made for index-lookup at n = 6",
               "not n = 5")


def test_vocabulary_checked_when_the_file_records_no_task(capsys, tmp_path):
    vocab10, classes = _vocab("index-lookup", 10)
    vocab8, _ = _vocab("index-lookup", 8)
    assert vocab10 != vocab8
    path = tmp_path / "plain.npz"
    save_model(build_model("gru", vocab_size=vocab10, width=3, n_outputs=classes), path)
    _cli_error(capsys, ["verify", "index-lookup", "--n", "8", "--precision", "fixed:8:4", "--instances", "4",
                        "--arch", "gru", "--weights", str(path)], f"vocabulary {vocab10}",
               f"index-lookup at n = 8 has vocabulary {vocab8}")


def test_outputs_and_transformer_length_checked(tmp_path):
    vocab, classes = _vocab("index-lookup", 6)
    path = tmp_path / "wide.npz"
    save_model(build_model("lstm", vocab_size=vocab, width=3, n_outputs=classes + 1), path)
    with pytest.raises(ModelFileError, match=f"needs {classes} outputs"):
        verify("index-lookup", "lstm", 6, "fixed:8:4", weights=str(path), instances=2)
    short = tmp_path / "short.npz"
    save_model(build_model("transformer", vocab_size=vocab, width=4, n_outputs=classes, max_len=4), short)
    with pytest.raises(ModelFileError, match="inputs up to 4 tokens.* has inputs of 7 tokens"):
        verify("index-lookup", "transformer", 6, "fixed:8:4", weights=str(short), instances=2)


@pytest.mark.parametrize("kind", ["pickle", "text", "npy", "raw-state-dict", "torch-zip"])
def test_files_that_are_not_model_files(capsys, tmp_path, kind):
    path = tmp_path / f"bad.{kind}"
    if kind == "pickle":
        path.write_bytes(pickle.dumps({"a": 1}))
    elif kind == "text":
        path.write_text("hello\n")
    elif kind == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    elif kind == "raw-state-dict":
        with open(path, "wb") as fh:
            np.savez(fh, **{"rnn.weight_ih_l0": np.zeros((4, 2))})
    else:  # what torch.save writes: a zip with data.pkl
        import zipfile

        with zipfile.ZipFile(path, "w") as z:
            z.writestr("m/data.pkl", b"x")
    with pytest.raises(ModelFileError, match="not a commcomp model file|a torch checkpoint"):
        verify("index-lookup", "lstm", 6, "fixed:8:4", weights=str(path), instances=2)
    _cli_error(capsys, BASE + ["--arch", "lstm", "--weights", str(path)], str(path))


def test_sizes_come_from_the_file_and_conflicts_are_errors(capsys, lstm_file):
    out = verify("index-lookup", "lstm", 6, "fixed:8:4", weights=str(lstm_file), instances=4)
    assert (out["width"], out["layers"]) == (3, 1)
    w = find_witness("index-lookup", "lstm", 6, "fixed:2:1", weights=str(lstm_file))
    assert w["width"] == 3
    # witness needs no --width with a file ...
    assert cli.main(["witness", "index-lookup", "--arch", "lstm", "--n", "6", "--precision", "fixed:2:1",
                     "--weights", str(lstm_file), "--format", "json"]) == 0
    capsys.readouterr()
    # ... but does with random weights
    _cli_error(capsys, ["witness", "index-lookup", "--arch", "lstm", "--n", "6", "--precision", "fixed:2:1"],
               "--width is required with random weights")
    for option, value, held in (("--width", "5", "width 3"), ("--layers", "2", "layers 1"),
                                ("--heads", "2", "heads 1")):
        _cli_error(capsys, BASE + ["--arch", "lstm", "--weights", str(lstm_file), option, value],
                   f"{option} {value} conflicts with the file's {held}")
    # the same value as the file's is fine
    assert cli.main(BASE + ["--arch", "lstm", "--weights", str(lstm_file), "--width", "3", "--layers", "1",
                            "--format", "json"]) == 0


def test_saturations_counted_on_the_precision_that_ran(tmp_path):
    """The issue's repro: an LSTM scaled by 20 at fixed:4:3 saturates; the file reports what the object does."""
    vocab, classes = _vocab("index-lookup", 6)
    model = build_model("lstm", vocab_size=vocab, width=3, n_outputs=classes, seed=2, precision="fixed:4:3")
    model = model.with_params({k: 20.0 * v for k, v in model.params.items()})
    path = tmp_path / "big.npz"
    save_model(model, path)
    from_object = verify("index-lookup", model=model, n=6, exhaustive=True)["saturations"]
    from_file = verify("index-lookup", "lstm", 6, "fixed:4:3", weights=str(path), exhaustive=True)["saturations"]
    assert from_object > 0
    assert from_file == from_object


def test_construct_out_records_its_task_size(capsys, tmp_path):
    path = tmp_path / "c10.npz"
    assert cli.main(["construct", "index-lookup", "--arch", "transformer", "--n", "10", "--precision", "fixed:8:4",
                     "--out", str(path)]) == 0
    capsys.readouterr()
    out = verify("index-lookup", "transformer", 10, "fixed:8:4", weights=str(path), exhaustive=True)
    assert out["correct"] == 1.0  # at its own size it runs (and is right everywhere)
    # at n = 8 the table still fits (11 >= 9 tokens) and the vocabulary differs; the recorded size speaks first
    _cli_error(capsys, ["verify", "index-lookup", "--arch", "transformer", "--n", "8", "--precision", "fixed:8:4",
                        "--instances", "4", "--weights", str(path)],
               "made for index-lookup at task size 10 (from construction index-lookup-1tf)", "not task size 8")
