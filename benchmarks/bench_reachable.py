"""Exact analysis over all inputs via reachable states: timings, a ratio, and a table.

Three measurements (issue 11), each printed with the load average it ran under (the machine is
shared, and timings move with the load):

1. **n = 1024**: an LSTM of width 4 at ``fixed:8:4`` on INDEX -> Index Lookup: the exact
   ``verify --exhaustive`` (all 1024 · 2^1024 instances: faithful and correct counts as exact
   integers), the complete ``witness`` search, each timed. Target: under 5 s each on 2 cores.
   Enumeration is out of reach (2^1024 inputs).
2. **n = 18 against the prefix tree**, in the same run: the same ``verify --exhaustive`` by the
   reachable states and by the prefix-tree runner (every one of the 2^18 inputs); the answers
   must agree (instances, faithful and correct counts, distinct messages) and the ratio is
   reported. Target: >= 100x for models with fewer than 2^12 reachable states.
4. **scaling** (issue 22): ``witness`` (LSTM width 4, ``fixed:8:4``, index lookup) at n = 1,000,
   4,000, 10,000 (and more with ``--scaling-ns``), each in its own process so that its peak
   memory (``ru_maxrss``) is its own; printed as seconds, MB, and ratios against the smallest n.
   Linear cost: the ratios follow n, not n^2. ``verify --exhaustive`` is timed at the same n.
5. **automaton** (issue 22): ``automaton_analysis`` (closure, minimisation, equivalence proof,
   monoid) on the Dyck-(2,2) constructions (``rnn`` = the Elman construction, ``dyck-rnn`` when
   registered) against ``dyck-2-2``, on the hand-set diagonal recurrences against ``parity``, and on
   the imported tiny trained LSTM (tests/fixtures) over its data letters with a budget of states.
3. **table**: reachable-state counts against n for every recurrent architecture at ``fixed:4:2``,
   ``fixed:8:4``, ``float16`` and ``float32`` and each width, with the wall time of the
   exploration and, where the budget (``--max-states``) ends it, the level at which it did.

Usage::

    python benchmarks/bench_reachable.py                 # 1, 2 (LSTM, GRU, Elman), a short table (~3 min)
    python benchmarks/bench_reachable.py --only table --widths 2 4 8 16 --ns 16 64 256 1024 \\
        --max-states 32768                               # the full table (long: the machine is shared)
    python benchmarks/bench_reachable.py --ratio-archs lstm gru elman --out results.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ARCHS = ["elman", "lstm", "gru", "linear-attention", "retnet", "dss", "mamba"]
FORMATS = ["fixed:4:2", "fixed:8:4", "float16", "float32"]


def _load() -> str:
    return "load %.2f" % os.getloadavg()[0]


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def bench_n1024(n: int = 1024) -> dict:
    from reductions.simulate import verify
    from reductions.search.witness import find_witness

    v, tv = _timed(lambda: verify("index-lookup", "lstm", n, "fixed:8:4", width=4, exhaustive=True))
    w, tw = _timed(lambda: find_witness("index-lookup", "lstm", n, "fixed:8:4", width=4))
    row = {"n": n, "verify_seconds": tv, "witness_seconds": tw, "method": v["method"],
           "distinct_messages": v["distinct_messages"], "instances_log2": v["instances"].bit_length() - 1,
           "correct": v["correct"], "faithful": v["faithful"], "witness_found": w["found"],
           "witness_complete": w["complete"], "load": _load()}
    print(f"[1] n = {n}: verify {tv:.2f} s ({v['method']}, {v['distinct_messages']} messages, correct "
          f"{v['correct']:.4f} of 2^{row['instances_log2']}.. instances, faithful {v['faithful']}); witness "
          f"{tw:.2f} s (found {w['found']}, complete {w['complete']}); {_load()}", flush=True)
    return row


def bench_ratio(archs, n: int = 18, width: int = 4, precision: str = "fixed:8:4") -> list:
    from reductions.simulate import verify

    rows = []
    for arch in archs:
        r, tr = _timed(lambda: verify("index-lookup", arch, n, precision, width=width, exhaustive=True,
                                      method="reachable-states"))
        t, tt = _timed(lambda: verify("index-lookup", arch, n, precision, width=width, exhaustive=True,
                                      method="prefix-tree"))
        same = all(r[k] == t[k] for k in ("instances", "faithful_count", "correct_count", "model_correct_count",
                                          "distinct_messages"))
        row = {"arch": arch, "n": n, "width": width, "precision": precision, "states": r["distinct_messages"],
               "max_level_states": max(r["distinct_messages_per_level"]), "reachable_seconds": tr,
               "prefix_tree_seconds": tt, "ratio": tt / tr, "same_answers": same, "load": _load()}
        rows.append(row)
        print(f"[2] n = {n} {arch} w{width} {precision}: {row['states']} states (max {row['max_level_states']} "
              f"at a level); reachable {tr:.3f} s, prefix tree {tt:.2f} s: {tt / tr:.0f}x; same answers "
              f"{same}; {_load()}", flush=True)
    return rows


_SCALING_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
from reductions.search.witness import find_witness
from reductions.simulate import verify
n, what = int(sys.argv[1]), sys.argv[2]
def _text(v):  # big ints as hex: str() of an int over 4300 digits is refused
    return hex(v) if isinstance(v, int) and not isinstance(v, bool) else str(v)
start = time.perf_counter()
if what == "witness":
    import hashlib
    out = find_witness("index-lookup", "lstm", n, "fixed:8:4", width=4)
    exact = [out[k] for k in ("found", "complete", "x", "x_prime", "y", "tried", "model_answer_x",
                              "model_answer_x_prime", "truth_x", "truth_x_prime")]
    ok = {"found": out["found"], "digest": hashlib.sha256(repr([_text(v) for v in exact]).encode()).hexdigest()[:16]}
else:
    out = verify("index-lookup", "lstm", n, "fixed:8:4", width=4, exhaustive=True)
    import hashlib
    exact = [out[k] for k in ("instances", "faithful_count", "correct_count", "model_correct_count", "wrong_count",
                              "wrong_example", "distinct_messages")]
    ok = {"wrong_count_bits": out["wrong_count"].bit_length(), "correct": out["correct"],
          "wrong_example": out["wrong_example"] is not None,
          "digest": hashlib.sha256(repr([_text(v) for v in exact]).encode()).hexdigest()[:16]}
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - start, "method": out["method"], "ok": ok,
                  "user_seconds": use.ru_utime, "sys_seconds": use.ru_stime,
                  "peak_mb": use.ru_maxrss / 1024}, default=str))
"""


def bench_scaling(ns, whats=("witness", "verify"), reference_root=None) -> list:
    """Each (what, n) in its own process; with ``reference_root`` (another checkout, e.g. ``git archive``
    of an earlier commit), the same child runs there too, right after, as the reference of the ratio."""
    import subprocess

    root = str(Path(__file__).resolve().parents[1])
    rows = []
    for what in whats:
        base = None
        for n in ns:
            for label, where in [("this", root)] + ([("reference", reference_root)] if reference_root else []):
                proc = subprocess.run([sys.executable, "-c", _SCALING_CHILD, str(n), what, where],
                                      capture_output=True, text=True, check=True)
                row = {"what": what, "n": n, "code": label, "root": where,
                       **json.loads(proc.stdout.strip().splitlines()[-1]), "load": _load()}
                if label == "reference":
                    mine = rows[-1]
                    rows.append(row)
                    print(f"[4] {what} n = {n} at the reference {where}: {row['seconds']:.2f} s wall "
                          f"({row['user_seconds']:.2f} s user CPU), peak {row['peak_mb']:.0f} MB: this code takes "
                          f"x{mine['user_seconds'] / row['user_seconds']:.2f} its user CPU, "
                          f"x{mine['peak_mb'] / row['peak_mb']:.2f} its memory; the same result (exact counts and "
                          f"example / witness inputs, by digest): {row['ok'] == mine['ok']}; {_load()}", flush=True)
                    continue
                base = base or row
                row["time_ratio"], row["memory_ratio"] = row["seconds"] / base["seconds"], row["peak_mb"] / base["peak_mb"]
                rows.append(row)
                print(f"[4] {what} n = {n}: {row['seconds']:.2f} s wall ({row['user_seconds']:.2f} s user CPU of "
                      f"the whole process, imports included), peak {row['peak_mb']:.0f} MB ({row['method']}); "
                      f"x{row['time_ratio']:.1f} time, x{row['memory_ratio']:.1f} memory against n = {base['n']} "
                      f"(n x{n / base['n']:.0f}); {_load()}", flush=True)
    return rows


def bench_automaton(max_states: int = 1 << 15) -> list:
    import tempfile

    import cli
    from models.constructions.diagonal import diagonal_model
    from reductions.search.automaton.api import automaton_analysis, automaton_of_model

    rows = []

    def report(name, fn):
        cpu = time.process_time()
        out, sec = _timed(fn)
        cpu = time.process_time() - cpu
        out = out[0] if isinstance(out, tuple) else out
        row = {"case": name, "seconds": sec, "cpu_seconds": cpu, **{k: out[k] for k in ("closed", "closed_at_length", "reachable_states",
                                                                    "minimal_states", "equivalent", "aperiodic",
                                                                    "monoid_size", "stopped")}, "load": _load()}
        rows.append(row)
        print(f"[5] {name}: {sec:.2f} s wall, {cpu:.2f} s CPU; closed {row['closed']} (length {row['closed_at_length']}), "
              f"{row['reachable_states']} states, minimal {row['minimal_states']}, equivalent {row['equivalent']}, "
              f"aperiodic {row['aperiodic']} (monoid {row['monoid_size']}); {_load()}", flush=True)

    report("dyck rnn construction fixed:2:0 vs dyck-2-2", lambda: automaton_analysis(
        "dyck", "rnn", "fixed:2:0", weights="construction", against="dyck-2-2"))
    report("dyck lstm random w4 fixed:4:2 vs dyck-2-2", lambda: automaton_analysis(
        "dyck", "lstm", "fixed:4:2", width=4, against="dyck-2-2"))
    for setting, fmt in (("gated", "fixed:6:4"), ("gated", "float16"), ("parity", "fixed:4:2")):
        report(f"diagonal {setting} {fmt} vs parity", lambda: automaton_of_model(
            diagonal_model(setting, fmt), [0, 1], (), ["0", "1"], against="parity"))
    fixture = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tiny_lstm_index_lookup.state_dict.npz"
    with tempfile.TemporaryDirectory() as tmp:
        weights = str(Path(tmp) / "tiny.npz")
        cli.main(["import", "torch", str(fixture), "--arch", "lstm", "--task", "index-lookup", "--n", "8",
                  "--out", weights, "--format", "json"])
        first_is_one = Path(tmp) / "first_is_one.json"  # a DFA file: "the first letter is 1"
        first_is_one.write_text(json.dumps({"letters": ["0", "1"], "start": 0, "output": [0, 1, 0],
                                            "delta": [[2, 1], [1, 1], [2, 2]]}))
        for fmt in ("fixed:2:1", "fixed:8:4"):
            report(f"trained LSTM (tiny, width 16) {fmt} over 0/1 then query 0, against 'first letter is 1'",
                   lambda: automaton_analysis("index-lookup", "lstm", fmt, weights=weights, n=8, alphabet=[0, 1],
                                              suffix=[2], max_states=max_states, against=str(first_is_one)))
        # a proof that explores the whole product: against its own minimal DFA, saved from the JSON
        own = automaton_analysis("index-lookup", "lstm", "fixed:2:1", weights=weights, n=8, alphabet=[0, 1],
                                 suffix=[2], max_states=max_states, dfa=True)  # what --dfa-json writes
        own_file = Path(tmp) / "own_minimal_dfa.json"
        own_file.write_text(json.dumps(own["dfa_file"]))
        report("trained LSTM (tiny, width 16) fixed:2:1 against its own minimal DFA (a DFA file)",
               lambda: automaton_analysis("index-lookup", "lstm", "fixed:2:1", weights=weights, n=8,
                                          alphabet=[0, 1], suffix=[2], max_states=max_states, against=str(own_file)))
    return rows


def bench_table(archs, formats, widths, ns, max_states: int) -> list:
    from reductions.search.reachable.engine import explore
    from reductions.simulate.setup import prepare

    rows = []
    for arch in archs:
        for fmt in formats:
            for width in widths:
                cells = []
                for n in ns:
                    sim = prepare("index-lookup", arch, n, fmt, width=width, seed=0)
                    reach, sec = _timed(lambda: explore(sim, max_states=max_states))
                    cells.append({"n": n, "states": reach.sizes[-1] if reach.complete else None,
                                  "seconds": sec, "stopped_at_level": None if reach.complete else len(reach.levels) + 1,
                                  "max_level_states": max(reach.sizes)})
                    if not reach.complete:
                        break  # larger n stop at the same level
                rows.append({"arch": arch, "precision": fmt, "width": width, "cells": cells})
                text = "  ".join(f"n={c['n']}: {c['states']} ({c['seconds']:.2f}s)" if c["states"] is not None
                                 else f"n={c['n']}: budget at level {c['stopped_at_level']} ({c['seconds']:.2f}s)"
                                 for c in cells)
                print(f"[3] {arch:16s} {fmt:9s} w{width:<2d} {text}", flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=["n1024", "ratio", "table", "scaling", "automaton"], action="append")
    p.add_argument("--ratio-archs", nargs="+", default=["lstm", "gru", "elman"])
    p.add_argument("--ratio-n", type=int, default=18)
    p.add_argument("--archs", nargs="+", default=ARCHS)
    p.add_argument("--formats", nargs="+", default=FORMATS)
    p.add_argument("--widths", nargs="+", type=int, default=[2, 4])
    p.add_argument("--ns", nargs="+", type=int, default=[16, 128, 1024])
    p.add_argument("--max-states", type=int, default=4096)
    p.add_argument("--scaling-ns", nargs="+", type=int, default=[1000, 4000, 10000])
    p.add_argument("--scaling-what", nargs="+", choices=["witness", "verify"], default=["witness", "verify"])
    p.add_argument("--reference-root", metavar="DIR", help="scaling: run each child also on this checkout "
                   "(e.g. `git archive COMMIT | tar -x -C DIR`) as the reference of the same run")
    p.add_argument("--out", help="write the rows as JSON")
    args = p.parse_args(argv)
    only = set(args.only or ["n1024", "ratio", "table", "scaling", "automaton"])
    out = {"blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}
    if "n1024" in only:
        out["n1024"] = bench_n1024()
    if "ratio" in only:
        out["ratio"] = bench_ratio(args.ratio_archs, args.ratio_n)
    if "scaling" in only:
        out["scaling"] = bench_scaling(args.scaling_ns, args.scaling_what, args.reference_root)
    if "automaton" in only:
        out["automaton"] = bench_automaton()
    if "table" in only:
        out["table"] = bench_table(args.archs, args.formats, args.widths, args.ns, args.max_states)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
