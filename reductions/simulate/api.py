"""``simulate`` (one instance, step by step) and ``verify`` (many or all instances): the JSON of DESIGN §4.

Both take the names users type (or a ready model) and return plain JSON-ready dicts, which the
CLI prints or renders and a sweep stores as rows.

Examples
--------
>>> out = simulate("index-lookup", "lstm", 6, "fixed:8:4", width=2, x="101100", y="2")
>>> out["bits_sent"], out["faithful"], out["truth"], out["lower_bound_bits"]
(32, True, True, 6)
>>> v = verify("index-lookup", "gru", 4, "fixed:6:3", width=2, exhaustive=True)
>>> v["instances"], v["faithful"], v["distinct_messages"] <= 16
(64, 1.0, True)
"""

from __future__ import annotations

import time

import numpy as np

from commcomp.backend import count_true, to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.limits import MAX_INSTANCES, check_int
from commcomp.protocol.owners import Owner

from ..tasks.base import TaskBatch
from .batch import (MAX_DEVICE_EXHAUSTIVE_INSTANCES, MAX_EXHAUSTIVE_INSTANCES, DistinctMessages,
                    check_run_memory, chunk_rows, exhaustive_batches, position_bytes, random_batches,
                    run_batch)
from .setup import format_input, parse_input, prepare

__all__ = ["simulate", "verify", "simulate_instance", "DEFAULT_INSTANCES"]

DEFAULT_INSTANCES = 1000
VERIFY_METHODS = ("auto", "reachable-states", "prefix-tree", "enumerate", "plain")


def _floats(a) -> list:
    return [float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]


def _run_json(run, b: int, sim) -> dict:
    """Instance ``b`` of a pass, for printing (the one place its arrays come to the host)."""
    out = {"logits": [_floats(z) for z in to_numpy(run.logits[b, ...])],
           "task_answers": to_numpy(run.answers[b, ...]).tolist()}
    if run.generated is not None:
        generated = to_numpy(run.generated[b, ...])
        out["generated"] = [int(t) for t in generated]
        out["generated_text"] = sim.task.render(generated, sim.task_n, limit=200)
    return out


def simulate_instance(sim, x=None, y=None, seed: int = 0):
    """Run one instance through a prepared simulation; returns the :class:`BatchResult` (B = 1).

    ``x`` / ``y``: rows (arrays) or text (``"0110"``, an index for INDEX); sampled from ``seed``
    when missing.
    """
    problem, n = sim.problem, sim.n
    xs, ys = problem.sample(n, 1, np.random.default_rng([int(seed), 2]))
    if x is not None:
        xs = parse_input(problem, n, x, "alice") if isinstance(x, str) else np.asarray(x).reshape(1, -1)
    if y is not None:
        ys = parse_input(problem, n, y, "bob") if isinstance(y, (str, int, np.integer)) \
            else np.asarray(y).reshape((1,) + np.shape(ys)[1:])
    return run_batch(sim, xs, ys)


def simulate(task, arch=None, n=8, precision="float32", *, width=None, layers=None, heads=None, problem=None,
             weights="random", x=None, y=None, seed=0, cot=False, model=None, backend=None,
             trajectory=False) -> dict:
    """One instance, step by step: the ``simulate`` JSON of DESIGN §4 (and more for the table).

    Fields beyond DESIGN's: ``layers, heads, tokens`` (the task sequence as token names),
    ``read_positions, split`` (how the model is split), ``bits_per_message``, ``exact``,
    ``max_abs_difference``, ``model_answer``, ``rounds[].numbers`` (each message decoded),
    ``continuation`` (Bob's positions and tokens), ``bob_step`` (what Bob computes, where the split
    says it in words; else None), ``cot_valid`` (chain of thought); with ``trajectory=True`` (a
    recurrent split) ``trajectory``, the state after each of Alice's steps
    (:func:`reductions.search.reachable.trajectory.alice_trajectory`), and ``trajectory_matches_message``.
    """
    sim = prepare(task, arch, n, precision, width=width, layers=layers, heads=heads, problem=problem,
                  weights=weights, seed=seed, cot=cot, model=model, backend=backend)
    res = simulate_instance(sim, x, y, seed)
    owners = sim.split.owners
    vocab = sim.task.vocabulary(sim.task_n)
    first = to_numpy(res.encoded.tokens[0, ...])  # the one instance's tokens, printed (device tokens come back)
    tokens = [vocab[int(t)] if 0 <= t < len(vocab) else str(int(t)) for t in first]
    rounds = []
    for m in res.transcript.messages:
        bits = m.rows[0]
        rounds.append({"sender": m.sender, "receiver": m.receiver, "bits": len(bits), "hex": bits.hex(),
                       "label": m.label, "numbers": [{"name": k, "values": v} for k, v in
                                                     _describe(sim, m)]})
    split_at = sim.split.split_at
    out = {
        "task": sim.task.name, "problem": sim.problem.name, "arch": sim.arch, "n": sim.n,
        "precision": {"name": sim.precision.name, "bits": sim.precision.bits},
        "width": sim.width, "layers": sim.layers, "heads": sim.heads, "seed": int(seed),
        "weights": sim.weights, "backend": sim.backend,
        "x": format_input(sim.problem, sim.n, res.x[0], "alice"),
        "y": format_input(sim.problem, sim.n, res.y[0], "bob"),
        "tokens": tokens,
        "owners": {o.party: [int(p) for p in np.nonzero(owners == o)[0]] for o in (Owner.ALICE, Owner.BOB, Owner.PUBLIC)},
        "read_positions": [int(t) for t in sim.split.read],
        "split": sim.split.describe(), "split_kind": sim.split.kind, "split_at": split_at,
        "protocol_rounds": sim.split.rounds,
        "rounds": rounds, "bits_sent": res.bits_sent, "bits_per_message": sim.bits_per_message,
        "continuation": _continuation(sim, tokens), "bob_step": sim.split.bob_step,
        "model_output": _run_json(res.reference, 0, sim), "protocol_output": _run_json(res.protocol, 0, sim),
        "faithful": bool(res.faithful[0]) if res.exact else None, "exact": res.exact,
        "max_abs_difference": res.max_abs_difference,
        "answer": bool(res.answer[0]), "model_answer": bool(res.model_answer[0]),
        "truth": bool(res.truth[0]), "correct": bool(res.correct[0]),
        "lower_bound_bits": sim.lower_bound_bits, "theorem": sim.theorem,
    }
    if trajectory:
        from ..search.reachable.trajectory import alice_trajectory

        out["trajectory"] = alice_trajectory(sim, first)
        sent = [r["hex"] for r in rounds if r["sender"] == "alice"]  # her (last) message
        out["trajectory_matches_message"] = bool(out["trajectory"]) and bool(sent) and \
            out["trajectory"][-1]["hex"] == sent[-1]
    if sim.cot:
        batch = res.encoded.task_batch
        feats = None if batch.features is None else to_numpy(batch.features[:1, ...])
        batch = TaskBatch(first[None, :], feats, None, batch.meta)  # instance 0, on the host
        out["cot_valid"] = bool(sim.task.check_cot(batch, to_numpy(res.protocol.generated[:1, ...]))[0])
    return out


def _continuation(sim, tokens) -> dict:
    """What Bob computes after the messages: the recurrent suffix from the split on, or (1-layer
    Transformer) his own partial sums over his and the public positions."""
    split_at = sim.split.split_at
    if split_at is not None:
        positions = list(range(split_at, len(tokens)))
    else:
        positions = [int(p) for p in np.nonzero(sim.split.owners != Owner.ALICE)[0]]
    return {"positions": positions, "tokens": [tokens[p] for p in positions]}


def _describe(sim, message):
    return sim.split.describe_message(message.rows, 0, label=message.label)


def verify(task, arch=None, n=8, precision="float32", *, width=None, layers=None, heads=None, problem=None,
           weights="random", instances=None, exhaustive=False, seed=0, cot=False, model=None,
           method="auto", rows=None, progress=None, backend=None, max_states=None, max_bytes=None) -> dict:
    """A reduction and a model checked over ``instances`` random instances or all of them.

    Returns the ``verify`` JSON of DESIGN §4: ``faithful`` and ``correct`` are fractions of the
    instances (``faithful_count`` / ``correct_count`` count them; ``faithful`` is None when the
    arithmetic is not exact, and ``max_abs_difference`` says by how much the passes differ);
    ``distinct_messages`` counts Alice's distinct messages over the batch.

    Parameters
    ----------
    method : {"auto", "reachable-states", "prefix-tree", "enumerate", "plain"}
        How exhaustive runs go. ``auto`` (default): over the reachable states of a one-way
        recurrent split (:mod:`reductions.search.reachable`; exact counts at any n) where it applies, else,
        with the reason in ``fallback``, ``prefix-tree`` for recurrent models (every input, shared
        prefixes computed once) and ``enumerate`` (``plain``: row by row) for the others. The
        result's ``method`` says which ran (``sample`` for random instances).
    max_states, max_bytes : int, optional
        The reachable-states budget (:func:`reductions.search.reachable.engine.explore`).
    rows : int, optional
        Instances per chunk (default: about 2^23 tokens per chunk).
    progress : callable ``(done, total)``, optional
        Called after every chunk.
    backend : {"numpy", "cupy", "torch", "array_api_strict"}, optional
        The array library the model, the messages and the counts run on (default:
        ``$COMMCOMP_BACKEND``, else numpy; a given ``model`` keeps its own unless this is set).
    """
    if method not in VERIFY_METHODS:
        raise InvalidParameterError(f"method must be one of {', '.join(VERIFY_METHODS)}, got {method!r}")
    sim = prepare(task, arch, n, precision, width=width, layers=layers, heads=heads, problem=problem,
                  weights=weights, seed=seed, cot=cot, model=model, backend=backend)
    fallback = None
    if exhaustive:
        from ..search.reachable.api import reachable_verify, try_reachable

        out, fallback = try_reachable(reachable_verify, sim, method, max_states=max_states, max_bytes=max_bytes,
                                      progress=progress)
        if out is not None:
            return with_error_check(out)
    method = {"auto": "prefix-tree", "enumerate": "plain"}.get(method, method)
    size = chunk_rows(sim.split.length, rows, position_bytes(sim.reduction, sim.n))
    if not exhaustive:
        instances = check_int("instances", DEFAULT_INSTANCES if instances is None else instances, 1, MAX_INSTANCES)
    check_run_memory("verify", sim.reduction, sim.n, rows, kept=0 if exhaustive else instances,
                     message_bits=sim.bits_per_message, at_most=None if exhaustive else instances)
    if exhaustive:
        total = len(sim.problem.alice_inputs(sim.n)) * len(sim.problem.bob_inputs(sim.n))
        batches = exhaustive_batches(sim.problem, sim.n, size, MAX_EXHAUSTIVE_INSTANCES if sim.backend in
                                     ("numpy", "array_api_strict") else MAX_DEVICE_EXHAUSTIVE_INSTANCES)
        runner = method if method in sim.split.runners else "plain"
        # one message per x and Bob answers all of its y's where the split allows it; per instance otherwise
        group = len(sim.problem.bob_inputs(sim.n)) if sim.split.groups_by_x else 1
    else:
        total = DEFAULT_INSTANCES if instances is None else int(instances)
        if total < 1:
            raise InvalidParameterError(f"instances must be >= 1, got {total}")
        batches = random_batches(sim.problem, sim.n, total, size, np.random.default_rng([int(seed), 1]))
        runner, group = "plain", 1
    start = time.perf_counter()
    saturations0 = sim.precision.saturations.count
    counts = {"instances": 0, "faithful": 0, "correct": 0, "model_correct": 0}
    diff, t_proto, t_ref, bits = 0.0, 0.0, 0.0, None
    distinct, exact, first_wrong = DistinctMessages(), True, None
    for x, y in batches:
        res = run_batch(sim, x, y, alice_runner=runner, reference_runner=runner, group=group)
        if first_wrong is None and not bool(np.all(res.correct)):  # host answers: the batch's own runs
            i = int(np.argmin(res.correct))  # its reference pass is the unsplit model on this instance
            first_wrong = {"x": format_input(sim.problem, sim.n, np.asarray(res.x)[i], "alice"),
                           "y": format_input(sim.problem, sim.n, np.asarray(res.y)[i], "bob"),
                           "protocol_answer": bool(res.answer[i]), "model_answer": bool(res.model_answer[i]),
                           "truth": bool(res.truth[i])}
        counts["instances"] += len(res.truth)
        counts["faithful"] += count_true(res.faithful)
        counts["correct"] += int(res.correct.sum())
        counts["model_correct"] += int((res.model_answer == res.truth).sum())
        diff, exact = max(diff, res.max_abs_difference), exact and res.exact
        t_proto, t_ref, bits = t_proto + res.seconds_protocol, t_ref + res.seconds_reference, res.bits_sent
        distinct.add(res.alice_messages())
        if progress is not None:
            progress(counts["instances"], total)
    k = max(1, counts["instances"])
    return with_error_check({
        "task": sim.task.name, "problem": sim.problem.name, "arch": sim.arch, "n": sim.n,
        "precision": sim.precision.name, "width": sim.width, "layers": sim.layers, "heads": sim.heads,
        "weights": sim.weights, "seed": int(seed), "backend": sim.backend,
        "instances": counts["instances"], "exhaustive": bool(exhaustive),
        "method": {"plain": "enumerate"}.get(runner, runner) if exhaustive else "sample", "fallback": fallback,
        "faithful": counts["faithful"] / k if exact else None, "faithful_count": counts["faithful"],
        "exact": exact, "max_abs_difference": diff,
        "correct": counts["correct"] / k, "correct_count": counts["correct"],
        "model_correct_count": counts["model_correct"],
        "wrong_count": counts["instances"] - counts["correct"],
        "wrong_example": first_wrong,
        "bits_per_message": sim.bits_per_message if bits is None else bits,
        "protocol_rounds": sim.split.rounds, "split_kind": sim.split.kind,
        "lower_bound_bits": sim.lower_bound_bits, "theorem": sim.theorem,
        "distinct_messages": distinct.count,
        "saturations": sim.precision.saturations.count - saturations0,
        "seconds": time.perf_counter() - start,
        "seconds_protocol": t_proto, "seconds_reference": t_ref,
    })


def with_error_check(out: dict) -> dict:
    """``out`` with ``exact_error``, ``error_floor``, ``consistent`` (:mod:`commcomp.bounds.error_check`)."""
    from commcomp.bounds.error_check import error_check

    out.update(error_check(out["problem"], out["n"], instances=out["instances"], wrong=out.get("wrong_count"),
                           bits=out["bits_per_message"], rounds=out["protocol_rounds"],
                           distinct=out.get("distinct_messages"), exhaustive=out["exhaustive"]))
    return out
