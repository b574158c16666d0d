"""Issue 20's six definite errors, each with a test that failed on the code before the fix."""

import json

import pytest

import cli
from reductions.separations import WidthCurves, crossover, find_separations


# --- 1. the crossover search gives up in a gap it skipped -------------------------------------------
def test_crossover_searches_the_gap_before_the_first_unknown_size():
    # strong side known up to n = 50 only; the doubling goes 32 (no crossing) -> 64 (unknown), and
    # the crossing lies between: the brute-force scan says n = 41
    lower, strong = (lambda n: n), (lambda n: 40 if n <= 50 else None)
    first = next(n for n in range(1, 51) if lower(n) > strong(n))
    assert first == 41
    assert crossover(lower, strong) == first
    # no crossing in the known part: still None
    assert crossover(lambda n: n, lambda n: 60 if n <= 50 else None) is None


def test_equality_elman_catalogue_crossover_is_found():
    # separations --task string-equality --sizes 4592 4593 --weak elman: 287 vs 287, then 288 vs 287
    sep = find_separations(["string-equality"], 16, weak=["elman"])[0]
    curves = WidthCurves(sep, 16)
    assert (curves.lower(4592), curves.catalogue(4592)) == (287, 287)
    assert (curves.lower(4593), curves.catalogue(4593)) == (288, 287)
    assert crossover(curves.lower, curves.catalogue, 1) == 4593


# --- 5. construct index-first-rnn crashes; index-first-lookup not in list tasks -------------------
def test_construct_index_first_rnn_runs(capsys):
    assert cli.main(["construct", "index-first-rnn", "--n", "64", "--check", "16", "--format", "json"]) in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["check"]["correct"] == out["check"]["instances"] == 16 and out["check"]["ok"]


def test_list_tasks_has_index_first_lookup(capsys):
    cli.main(["list", "tasks", "--format", "json"])
    names = [row["name"] for row in json.loads(capsys.readouterr().out)]
    assert "index-first-lookup" in names and "index-lookup" in names


# --- 6. BHBK-IL-RNN's number comes from the secondary summary --------------------------------------
def test_index_lookup_rnn_bound_is_tagged_secondary():
    from commcomp.bounds import compute_bounds, get_bound

    bound = get_bound("BHBK-IL-RNN")
    assert bound.evidence == "S"
    assert bound.label == "lower bound stated by a secondary source [S]"
    row = compute_bounds(8192, 64, task="index-lookup", arch="gru", include_randomized=False)[0]
    assert (row.theorem, row.evidence, row.min_width) == ("BHBK-IL-RNN", "S", 128)


# --- 3. Match2 printed "sep? yes" beside a failed construction ------------------------------------
def test_failed_construction_is_no_separation():
    from reductions.separations import separation_ladders
    from reductions.separations.render import table_rows

    lad = separation_ladders(["match2"], "bfloat16", sizes=[98], weak=["elman"], samples=32,
                             check_all=True)[0]
    row = lad.rows[0]
    a = {c.name: c for c in row.checks}["construction"]
    assert a.status == "FAILED" and a.data["correct"] < a.data["checked"]
    assert row.lower_bound_width > row.construction_width          # widths alone would say yes
    assert row.separated is False
    assert table_rows([lad])[0][5] != "yes"


# --- 2. qSA: the recurrent model is the weak side, the 1-layer Transformer the strong one ---------
def test_qsa_weak_side_is_recurrent():
    seps = find_separations(["qsa"], 16)
    by_weak = {s.weak_label: s for s in seps}
    assert (by_weak["elman"].strong_label, by_weak["elman"].construction) == ("tf1", "qsa-random-keys")
    curves = WidthCurves(by_weak["elman"], 16)
    row = curves.lower_row(256)          # SHT Thm 11: (N - 1)/2 bits at N = 2*256 + 1 tokens
    assert row.theorem == "SHT-qSA-RNN" and row.min_width == -(-((2 * 256 + 1 - 1) // 2) // 16)
    tf1 = by_weak.get("tf1")
    assert tf1 is None or (tf1.strong_arch is None and "no construction" not in tf1.note)


# --- 4. bounds said constructions suffice where their weights fail --------------------------------
def _bounds_json(capsys, *args):
    assert cli.main(["bounds", *args, "--kind", "upper", "--format", "json"]) in (0, None)
    return {(r["theorem"], r["n"]): r for r in json.loads(capsys.readouterr().out)}


def test_bounds_construction_rows_say_where_their_weights_fail(capsys):
    import numpy as np

    from models.constructions import get_construction
    from reductions.separations.qsa_length import QsaAtLength

    rows = _bounds_json(capsys, "--n", "17", "--precision", "float32", "--task", "qsa", "index-lookup",
                        "--param", "q=8")
    assert rows[("COMMCOMP-qSA-explicit", 17)]["holds_at_precision"] is False
    assert rows[("SHT-qSA-UB-p", 17)]["holds_at_precision"] is True
    assert rows[("BHBK-IL-1TF", 17)]["holds_at_precision"] is True
    assert "fails at p = 32" in rows[("COMMCOMP-qSA-explicit", 17)]["summary"]
    # independently: the moment-curve weights at q = 8, N = 17, float32 against a plain loop of means
    built = get_construction("qsa-moment-curve").make(8, "float32", length=17, dim=1)
    batch = QsaAtLength(8, 17, 1).sample(16, np.random.default_rng(3))
    out = built.predict_features(batch.features)                       # (B, N, 1)
    worst = 0.0
    for b in range(16):
        for i in range(17):
            ptr = batch.features[b, i, 1:9].astype(int)
            worst = max(worst, float(np.linalg.norm(out[b, i] - batch.features[b, ptr, :1].mean(axis=0))))
    assert worst > built.tolerance
    # Match2's weights at 16-bit floats, N = 98 (the issue's 54/81 and 66/129 at bfloat16)
    rows = _bounds_json(capsys, "--n", "98", "--precision", "16", "--task", "match2")
    assert rows[("SHT-Match2-UB", 98)]["holds_at_precision"] is False


# --- conventions: the paper's N/(2p) under its id; k_JL(N) for positional vectors --------------------
def test_nearest_neighbour_paper_bound_and_construction_width():
    import math

    from commcomp.bounds import compute_bounds

    rows = {r.theorem: r for r in compute_bounds(8193, 16, task="nearest-neighbour", arch="elman",
                                                 include_randomized=False)}
    assert rows["BHBK-NN-RNN"].min_width == math.ceil(8193 / 2 / 16) == 257      # m >= N/(2p) [S]
    assert rows["BHBK-NN-RNN"].evidence == "S"
    assert rows["COMMCOMP-NN-RNN"].min_width == 256 and rows["COMMCOMP-NN-RNN"].evidence == "D"

    def k_jl(count):  # ceil((4 ln count + 2 ln 2) / (1/2)^2), gamma = delta = 1/2
        return math.ceil((4 * math.log(count) + 2 * math.log(2)) * 4)

    for task, theorem in (("nearest-neighbour", "BHBK-NN-2TF"), ("mqar", "BHBK-MQAR-2TF")):
        for N in (401, 8193):
            row = next(r for r in compute_bounds(N, 16, task=task, arch="transformer", layers=2, kind="upper")
                       if r.theorem == theorem)
            n = (N - 1) // 2
            assert row.min_width == k_jl(n) + 2 * k_jl(N) + 3, (task, N)
