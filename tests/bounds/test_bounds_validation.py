"""Bad input raises the library's exceptions with one-line messages; filters and options behave."""

import pytest

from commcomp.bounds import compute_bounds, evaluate_bound, get_bound, list_bounds, precision_bits
from commcomp.errors import CommcompError, InvalidParameterError, UnknownNameError

BAD = [
    (InvalidParameterError, lambda: compute_bounds(1, 32)),
    (InvalidParameterError, lambda: compute_bounds([400, 1], 32)),
    (InvalidParameterError, lambda: compute_bounds(2.5, 32)),
    (InvalidParameterError, lambda: compute_bounds([], 32)),
    (InvalidParameterError, lambda: compute_bounds(400, 0)),
    (InvalidParameterError, lambda: compute_bounds(400, -3)),
    (InvalidParameterError, lambda: compute_bounds(400, "0")),
    (InvalidParameterError, lambda: compute_bounds(400, "not-a-format")),
    (InvalidParameterError, lambda: compute_bounds(400, True)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, heads=0)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, heads=[1, 2])),
    (InvalidParameterError, lambda: compute_bounds(400, 32, width=0)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, layers=0)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, eps=1.5)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, gamma=0)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, q=2.5)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, d_stat=16)),
    (InvalidParameterError, lambda: compute_bounds(400, 32, arch="mamba", d_state=0)),
    (UnknownNameError, lambda: compute_bounds(400, 32, task="sorting")),
    (UnknownNameError, lambda: compute_bounds(400, 32, arch="gpt")),
    (UnknownNameError, lambda: compute_bounds(400, 32, kind="sideways")),
    (UnknownNameError, lambda: get_bound("BHBK-IL-CNN")),
    (UnknownNameError, lambda: list_bounds(task="sorting")),
    (UnknownNameError, lambda: list_bounds(kind="middle")),
    (InvalidParameterError, lambda: evaluate_bound("BHBK-IL-RNN", N=1)),
    (InvalidParameterError, lambda: evaluate_bound("BHBK-Dyck-1TF", N=400)),          # p missing
    (InvalidParameterError, lambda: evaluate_bound("BHBK-Bool-LB-RNN", N=400)),       # C missing
    (InvalidParameterError, lambda: evaluate_bound("SHT-qSA-FFN", N=5, q=3)),         # q <= N/2 fails
    (InvalidParameterError, lambda: evaluate_bound("BHBK-IL-RNN", N=400, colour=3)),
]


@pytest.mark.parametrize("error, call", BAD)
def test_bad_input_raises_one_line(error, call):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, CommcompError)
    message = str(info.value)
    assert message and "\n" not in message


def test_unknown_name_message_is_plain():
    with pytest.raises(UnknownNameError) as info:
        compute_bounds(400, 32, arch="gpt")
    assert str(info.value).startswith("unknown architecture 'gpt'")


def test_precision_forms():
    assert precision_bits(32) == 32 and precision_bits("64") == 64
    assert precision_bits("float16") == 16 and precision_bits("float64") == 64
    assert compute_bounds(400, "float32", task="il", arch="gru")[0].precision == 32


def test_names_aliases_and_lists():
    rows = compute_bounds((400,), 32, task=["IL", "nearest_neighbor"], arch=["rnn", "s4d"])
    assert {r.task for r in rows} == {"index-lookup", "nearest-neighbour"}
    assert {r.arch for r in rows} == {"elman", "dss"}


def test_filters():
    rows = compute_bounds(400, 32, task="index-lookup", arch="elman")
    assert {r.theorem for r in rows} == {"BHBK-IL-RNN", "BHBK-IL-RNN-rand"}
    assert all(not r.randomized for r in compute_bounds(400, 32, task="index-lookup", include_randomized=False))
    variants = compute_bounds(400, 32, task="index-lookup", arch="elman", include_variants=True)
    assert {"BHBK-IL-order", "BHBK-IL-RNN-alphabet"} <= {r.theorem for r in variants}
    assert all(r.kind == "upper" for r in compute_bounds(400, 32, kind="upper"))
    two_layer = compute_bounds(400, 32, task="dyck", arch="transformer", layers=2)
    assert {r.theorem for r in two_layer} == {"BHBK-Dyck-2TF", "COMMCOMP-Dyck-2TF"}
    hybrid = compute_bounds(400, 32, task="index-lookup", arch="hybrid")  # the explicit weights' row only
    assert [(r.theorem, r.kind, r.value) for r in hybrid] == [("COMMCOMP-IL-Hybrid", "upper", 2 * 28 + 2 + 1)]


def test_randomized_rows_carry_eps_and_conditions_skip_rows():
    row = next(r for r in compute_bounds(400, 32, task="il", arch="gru", eps=0.1) if r.randomized)
    assert row.eps == pytest.approx(0.1)
    # C3 needs p >= log2 N + 2: at p = 8 and N = 400 the construction row is left out
    assert "BHBK-EQ-2TF" not in {r.theorem for r in compute_bounds(400, 8, task="string-equality")}
    assert "BHBK-EQ-2TF" in {r.theorem for r in compute_bounds(400, 16, task="string-equality")}


def test_layering_commcomp_does_not_import_models_or_reductions():
    import subprocess
    import sys

    code = ("import sys, commcomp.bounds, commcomp.architectures; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('models', 'reductions', 'cli', 'rich')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
