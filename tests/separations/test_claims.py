"""The claims table: verdicts that can fail, both sides at the crossover, the JSON shape."""

import json
import math

import pytest

import cli
from models.constructions import get_construction
from reductions.separations import separation_ladders
from reductions.separations.checks import Check
from reductions.separations.rows import DEFAULT_CHECK_MAX_LENGTH
from reductions.separations.claims import (WITNESS_FINDERS, _strict_witness, claim_verdict, evaluate_claims,
                                           register_witness_finder)
from reductions.separations.claim_specs import CLAIMS, DERIVED

GOOD = {"construction": Check("construction", "passed", "all right"), "witness": Check("witness", "found", "x"),
        "protocol": Check("protocol", "passed", "faithful"), "widths": Check("widths", "passed", "9 > 8")}


def test_shown_only_when_all_four_pass():
    assert claim_verdict(GOOD) == ("shown", "")
    for name in GOOD:
        for status in ("FAILED", "not checked", "not found"):
            verdict, reason = claim_verdict({**GOOD, name: Check(name, status, "why")})
            assert verdict == "not shown" and reason, (name, status)
        assert claim_verdict({k: v for k, v in GOOD.items() if k != name})[0] == "not shown"
    # a failure is named even when another check did not run
    verdict, reason = claim_verdict({**GOOD, "witness": Check("witness", "not checked", "-"),
                                     "widths": Check("widths", "FAILED", "7 <= 8")})
    assert verdict == "not shown" and reason.startswith("FAILED (d)")


def test_a_complete_search_without_collision_below_the_bound_is_a_failure():
    spec = next(c for c in CLAIMS if c.claim == "retrieval-IL")
    none = Check("witness", "not found", "no two inputs collide",
                 {"complete": True, "bits_per_message": 16, "lower_bound_bits": 64})
    assert _strict_witness(none, spec, 64, "fixed:8:4", weak_width=1, budget=16, seed=0, heads=1).status == "FAILED"
    above = Check("witness", "not found", "-", {"complete": True, "bits_per_message": 64, "lower_bound_bits": 64})
    assert _strict_witness(above, spec, 64, "fixed:8:4", weak_width=1, budget=16, seed=0, heads=1).status == "not found"


def test_a_registered_finder_gives_check_b():
    spec = next(c for c in CLAIMS if c.claim == "dyck-RNN")
    seen = []

    def finder(task, n, precision, **kw):
        seen.append((task, n))
        return {"found": True, "complete": False, "x": [0], "x_prime": [1], "y": [1], "wrong_on": "x",
                "bits_per_message": 52, "lower_bound_bits": 235, "method": "fake", "width": 1}

    def complete_none(task, n, precision, **kw):
        return {"found": False, "complete": True, "bits_per_message": 52, "lower_bound_bits": 235, "method": "fake"}

    none = Check("witness", "not found", "none among 1024 inputs", {"complete": False})
    try:
        register_witness_finder("transformer", 1, finder)
        got = _strict_witness(none, spec, 235, "bfloat16", weak_width=1, budget=16, seed=0, heads=1)
        assert got.status == "found" and seen == [("dyck", 235)]
        register_witness_finder("transformer", 1, complete_none)
        assert _strict_witness(none, spec, 235, "bfloat16", weak_width=1, budget=16, seed=0,
                               heads=1).status == "FAILED"
    finally:
        WITNESS_FINDERS.clear()
    # without a finder: not shown, saying why
    got = _strict_witness(none, spec, 235, "bfloat16", weak_width=1, budget=16, seed=0, heads=1)
    assert got.status == "not found" and "zero-sum search" in got.detail


@pytest.fixture(scope="module")
def il_dyck():
    ladders = separation_ladders(["index-lookup", "dyck", "match2"], "bfloat16", samples=16, budget=1024)
    claims, derived = evaluate_claims(ladders, "bfloat16", tasks=["index-lookup", "dyck", "match2"], samples=16)
    return {c.spec.claim: c for c in claims + derived}


def test_index_lookup_is_shown_at_the_brute_force_crossover(il_dyck):
    il = il_dyck["retrieval-IL"]
    spec = get_construction("index-lookup-1tf")
    # the smallest N (data symbols) with ceil(N / 16) > the explicit weights' width, by a plain scan
    first = next(N for N in range(2, 2000) if math.ceil(N / 16) > spec.make(N).width)
    assert il.crossover_N == first == 321
    assert il.verdict == "shown" and il.checked_N == first
    assert [c.status for c in il.checks] == ["passed", "found", "passed", "passed"]


def test_wdl_hybrid_is_shown_at_the_brute_force_crossover(il_dyck):
    hyb = il_dyck["wdl-hybrid"]
    spec = get_construction("index-lookup-hybrid")
    # the smallest N (data symbols) with ceil(N / 16) > the hybrid's explicit width, by a plain scan
    first = next(N for N in range(2, 3000) if math.ceil(N / 16) > spec.make(N).width)
    assert hyb.crossover_N == first == 945 and hyb.checked_N == first
    assert (hyb.spec.strong_arch, hyb.spec.construction) == ("hybrid", "index-lookup-hybrid")
    assert [c.name for c in hyb.checks] == ["construction", "witness", "protocol", "widths"]
    assert [c.status for c in hyb.checks] == ["passed", "found", "passed", "passed"]
    a, c = hyb.checks[0], hyb.checks[2]
    assert a.data["width"] == 59 and a.data["correct"] == a.data["checked"] > 16
    assert c.data.get("faithful", 1.0) == 1.0
    assert hyb.verdict == "shown" and not hyb.reason


def test_wdl_hybrid_check_a_fails_on_knocked_out_weights(monkeypatch):
    import dataclasses

    import numpy as np

    import models.constructions as registry
    from reductions.separations.checks import construction_check

    spec = registry.get_construction("index-lookup-hybrid")

    def broken(n, precision=None, *, seed=0, **options):
        c = spec.builder(n, precision, seed=seed, **options)
        model = c.model.with_params({"r0.W_h": np.zeros_like(np.asarray(c.model.params["r0.W_h"]))})
        return dataclasses.replace(c, model=model)

    assert construction_check("index-lookup", "index-lookup-hybrid", 60, "bfloat16", samples=8).status == "passed"
    registry.get_construction("index-lookup")  # the registry is loaded; replace the entry in its dict
    monkeypatch.setitem(registry._SPECS, "index-lookup-hybrid", dataclasses.replace(spec, builder=broken))
    got = construction_check("index-lookup", "index-lookup-hybrid", 60, "bfloat16", samples=8)
    assert got.status == "FAILED"
    assert claim_verdict({"construction": got, "witness": Check("witness", "found", "x"),
                          "protocol": Check("protocol", "passed", "p"), "widths": Check("widths", "passed", "w")}
                         )[0] == "not shown"


def test_dyck_shows_the_papers_bound_beside_commcomps(il_dyck):
    dyck = il_dyck["dyck-RNN"]
    point = dyck.points[0]
    N = point.N
    assert point.beside_theorem == "BHBK-Dyck-1TF" and point.beside_evidence == "S"
    assert point.beside_width == math.ceil((N - 1) / (3 * (16 + math.log2(N))))
    assert point.weak_evidence == "D" and point.weak_width < point.beside_width
    witness = next(c for c in dyck.checks if c.name == "witness")
    assert witness.status == "found" and witness.data.get("wrong_on") in ("x", "x_prime")  # the zero-sum engine
    assert dyck.verdict == ("shown" if all(c.status in ("passed", "found", "not applicable") for c in dyck.checks)
                            else "not shown")
    depth = il_dyck["depth-Dyck"]  # strong side: dyck-2tf, width 2 ceil(log2 N) + 17
    first = depth.points[0]
    assert first.crossover and first.N == depth.crossover_N
    assert first.strong_width == 2 * math.ceil(math.log2(first.N)) + 17 < first.weak_width
    assert all(p.beside_width == math.ceil((p.N - 1) / (3 * (16 + math.log2(p.N)))) for p in depth.points)
    assert depth.verdict == "not shown" and f"{first.N} tokens > {DEFAULT_CHECK_MAX_LENGTH}" in depth.reason


def test_match2_is_not_shown_beside_its_failed_weights(il_dyck):
    m2 = il_dyck["derived-Match2"]
    assert m2.checks[0].status == "FAILED" and m2.verdict == "not shown" and m2.reason.startswith("FAILED (a)")


def test_qsa_claim_crossover_by_brute_force():
    from commcomp.precision import parse_precision
    from reductions.separations.claims_qsa import qsa_claim

    spec = next(c for c in CLAIMS if c.claim == "retrieval-qSA")
    r = qsa_claim(spec, parse_precision("fixed:8:4"), samples=4)
    # SHT Thm 11: m >= (N - 1)/(2 p); C7a at q = 1: d' + min(N, ceil(8 ln N)), d' = 2
    first = next(N for N in range(3, 5000)
                 if math.ceil((N - 1) / 2 / 8) > 2 + min(N, math.ceil(8 * math.log(N))))
    assert r.crossover_N == first
    assert r.checks[0].status == "passed" and r.checks[0].data["width"] == 2 + math.ceil(8 * math.log(first))
    # (b) and (c) run on index@q1 -> qsa at the crossover (tests/separations/test_qsa_index_claim.py)
    assert [c.status for c in r.checks] == ["passed", "found", "passed", "passed"] and r.verdict == "shown"


def test_json_has_claims_derived_and_the_ladders_unchanged(capsys):
    argv = ["separations", "--task", "index-lookup", "--samples", "8", "--budget", "256", "--format", "json"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"claims", "derived", "separations"}
    fields = {"claim", "statement", "source", "task", "weak_arch", "weak_layers", "strong_arch", "strong_layers",
              "crossover_N", "verdict", "reason", "checks"}
    for row in data["claims"] + data["derived"]:
        assert fields <= set(row) and row["verdict"] in ("shown", "not shown")
        assert {"construction", "witness", "protocol"} <= set(row["checks"])
        assert all({"status", "detail"} <= set(c) for c in row["checks"].values())
    assert {r["claim"] for r in data["claims"]} == {c.claim for c in CLAIMS if c.task == "index-lookup"}
    ladders = separation_ladders(["index-lookup"], "bfloat16", samples=8, budget=256)
    expected = [{"kind": "separation", **lad.to_json()} for lad in ladders]
    got = data["separations"]
    assert len(got) == len(expected) and all(g["kind"] == "separation" for g in got)
    for g, e in zip(got, expected):
        for gr, er in zip(g["rows"], e["rows"]):
            gr.pop("seconds"), er.pop("seconds")
        assert json.dumps(g, sort_keys=True, default=str) == json.dumps(cli_safe(e), sort_keys=True, default=str)


def cli_safe(obj):
    return json.loads(json.dumps(obj, default=str, ensure_ascii=False))


def test_default_table_is_the_claims_in_words(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["separations", "--task", "index-lookup", "--samples", "8", "--budget", "256"]) == 0
    out = capsys.readouterr().out
    assert out.lstrip().startswith("Retrieval: Transformers beat recurrent models")
    assert max(len(line) for line in out.splitlines()) <= 80
    words = set(out.split())
    assert {"shown", "BHBK-IL-1TF:", "Omega(N/p)", "(crossover):"} <= words
    for code in (" wit ", " xc ", " ok "):
        assert code not in out
    assert cli.main(["separations", "--task", "index-lookup", "--ladder", "--samples", "8", "--budget", "256"]) == 0
    assert "IL elman<tf1" in capsys.readouterr().out


def test_equality_vs_recurrent_is_shown_with_the_two_layer_split():
    """Check (c) of a 2-layer strong side: the key-value split of string-equality-2tf at the crossover,
    faithful bit for bit, one message, its bits the closed form L·s·H·(d_k + d_v)·P (less layer 0's keys
    when no token changes them) and at least the n bits EQ_n needs one way."""
    ladders = separation_ladders(["string-equality"], "bfloat16", samples=8, budget=256)
    claims, _ = evaluate_claims(ladders, "bfloat16", tasks=["string-equality"], samples=8, budget=256)
    eq = next(c for c in claims if c.spec.claim == "strings-EQ")
    assert eq.verdict == "shown" and [c.status for c in eq.checks] == ["passed", "found", "passed", "passed"]
    c = next(c for c in eq.checks if c.name == "protocol")
    n = 369                                    # N = 2n + 1 = 739: Alice's prefix holds s = n positions
    assert eq.checked_N == 2 * n + 1
    model = get_construction("string-equality-2tf").make(n, "bfloat16").model
    L, H, d_k, d_v = model.n_layers, model.n_heads, model.d_k, model.d_v
    keys = (L - 1 if model.shares_first_keys(2 * n + 1) else L) * d_k
    assert c.data["bits"] == n * H * (keys + L * d_v) * 16
    assert c.data["faithful"] == 1.0 and c.data["rounds"] == 1 and c.data["bits"] >= c.data["lower_bound_bits"] == n
