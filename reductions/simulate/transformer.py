"""A 1-layer Transformer as a protocol under any partition (theorems.md §8.3, DESIGN §3).

At each read position ``o`` (Bob's or public) every head's attention is a ratio of two sums over
positions, ``sum_j w_j v_j`` and ``sum_j w_j`` with ``w_j = exp(<q, k_j> - c)``. Alice sends her
part of both sums, per head ``d_v + 1`` numbers of ``P + ceil(log2 N)`` bits: the terms sit on a
fixed-point grid and are summed in integers, so Bob's total equals the unsplit model's bit for bit.

* **One round** when Alice knows the query ``q``: the token at ``o`` is public, or a constant the
  reduction fixes, or the model's query does not depend on it. Cost ``H·(d_v + 1)·(P + ceil(log2 N))``.
* **Two rounds** otherwise: Bob first sends ``q`` (``H·d_k·P`` bits), then Alice answers.

Several read positions repeat this per position (queries in one message, partial sums in the other).
Without a precision (the float64 reference mode) the sums are floats in another order: the check
then reports the largest difference instead of claiming equality.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("index-lookup", "transformer", 6, "fixed:8:4", width=2, heads=1)
>>> sim.split.rounds, sim.split.bits_per_instance  # H d_k P + H (d_v + 1)(P + ceil(log2 7))
(2, 49)
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from commcomp.backend import namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.precision import FLOAT64
from commcomp.protocol import ALICE, BOB, Protocol, Step
from commcomp.protocol.owners import Owner

from .outputs import ModelRun, run_from_logits
from .running import scatter_columns, take_columns
from .splits import MessageSpec, Split, find_theorem

__all__ = ["TransformerSplit", "refuse_deep_transformer", "no_cot", "one_layer_theorem", "partial_sums_step"]

A_OWNS, B_OWNS, PUBLIC = Owner.ALICE, Owner.BOB, Owner.PUBLIC


def refuse_deep_transformer(layers: int) -> None:
    """Raise :class:`UnsupportedSplitError` unless ``layers == 1``: only a 1-layer Transformer splits."""
    if int(layers) != 1:
        raise UnsupportedSplitError(
            f"a {layers}-layer Transformer cannot be split at bounded cost: the top layer's attention "
            "reads layer-1 outputs at every position, each of which attends over both parties' "
            "positions, so partial sums no longer add up (BHBK's depth separation); only 1-layer "
            "Transformers are simulated (theorems.md §8.3)")


def no_cot(cot: bool) -> None:
    """Raise :class:`InvalidParameterError` for a chain of thought (simulated for recurrent models only)."""
    if cot:
        raise InvalidParameterError("chain of thought is simulated for recurrent models only")


def one_layer_theorem(reduction, rounds: int) -> str | None:
    """The 1-layer Transformer lower bound for a protocol of ``rounds`` (one-way or two-round)."""
    return find_theorem(reduction, "transformer", layers=1, split_words="one-way" if rounds == 1 else "two-round",
                        rounds=rounds)


def partial_sums_step(out: dict) -> str:
    """Bob's step after partial attention sums, in words, from a ``simulate`` JSON."""
    cont = out["continuation"]
    return (f"Bob adds his partial sums over positions {cont['positions']} (" + " ".join(cont["tokens"])
            + ") and finishes the layer")


class TransformerSplit(Split):
    """A 1-layer Transformer run as a one- or two-round protocol for one reduction at one size
    (a :class:`~.splits.Split`).

    Attributes
    ----------
    modes : dict
        Read position -> how Alice learns its query: ``"public"`` (the token there is public),
        ``"fixed"`` (a constant of the reduction), ``"constant"`` (the query does not depend on the
        token) or ``"bob"`` (Bob sends it first).
    rounds : int
        1 or 2.
    exact : bool
        Whether the partial sums are exact integers (a precision is set).

    Raises
    ------
    UnsupportedSplitError
        For a model of more than one layer, or an output read at one of Alice's positions.
    """

    kind = "transformer"
    arch_class = "transformer"
    simulation = "partition, 1 layer: partial sums"
    partial_sums_message = True

    @classmethod
    def handles(cls, spec, model=None, layers=None) -> bool:
        """A 1-layer Transformer (deeper ones: :class:`~.deep_transformer.DeepTransformerSplit`)."""
        depth = getattr(model, "n_layers", None) if model is not None else layers
        return spec.arch_class == cls.arch_class and (depth is None or int(depth) <= 1)

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        refuse_deep_transformer(layers)

    @classmethod
    def model_options(cls, reduction, n: int) -> dict:
        return {"max_len": max(4096, reduction.length(n))}

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        return out.get("bob_step") or partial_sums_step(out)

    def theorem(self) -> str | None:
        return one_layer_theorem(self.reduction, self.rounds)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        no_cot(cot)
        if not hasattr(model, "partial") or getattr(model, "n_layers", 0) != 1:
            raise UnsupportedSplitError(
                f"only a 1-layer Transformer splits into partial attention sums; this model has "
                f"{getattr(model, 'n_layers', '?')} layers (a deeper one mixes both parties' positions "
                "in every layer)")
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.owners = reduction.owners(n)
        self.length = N = int(self.owners.size)
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        self.modes, self.fixed_tokens = {}, {}
        for o in (int(t) for t in self.read):
            if self.owners[o] == A_OWNS:
                raise UnsupportedSplitError(
                    f"{reduction.name}: the output is read at position {o}, which is Alice's; the 1-layer "
                    "simulation needs the output position on Bob's side or public (Alice would have to "
                    "send her token's query, key, value and embedding too)")
            if self.owners[o] == PUBLIC:
                self.modes[o] = "public"
            elif reduction.query_fixed:
                self.modes[o] = "fixed"
            elif not model.query_depends_on_input(o):
                self.modes[o] = "constant"
            else:
                self.modes[o] = "bob"
        if "fixed" in self.modes.values():
            self.fixed_tokens = self._constant_tokens()
        self.rounds = 2 if "bob" in self.modes.values() else 1
        self.grid = model.attention_grid(N)
        self.exact = self.grid is not None
        self.query_code = model.precision if model.precision is not None else FLOAT64
        self.query_bits = model.query_bits()
        self.partial_bits = model.message_bits(N)
        n_bob = sum(m == "bob" for m in self.modes.values())
        self.messages = ((MessageSpec(BOB, ALICE, "query", int(n_bob * self.query_bits)),) if n_bob else ()) + \
            (MessageSpec(ALICE, BOB, "partial sums", int(self.read.size * self.partial_bits)),)
        self.classes = reduction.answer_classes(n)

    def _constant_tokens(self) -> dict:
        """The reduction's fixed tokens at Bob's read positions (public knowledge: the same for
        every instance, read off one encoded instance)."""
        from commcomp.problems import get_problem

        x, y = get_problem(self.reduction.problem).sample(self.n, 2, np.random.default_rng(0))
        tokens = self.reduction.encode(x, y, self.n).tokens
        return {o: int(tokens[0, o]) for o, m in self.modes.items() if m == "fixed"}

    # -- inputs of the parties ---------------------------------------------------------------
    def party_inputs(self, encoded, y, group: int = 1):
        """``(alice_input, bob_input, public)``: Alice's own positions, Bob's own and the public
        ones (and his y); the owner mask and the fixed output tokens are public. (``group`` must be 1:
        Bob's query depends on his y, so every instance has its own transcript.) The tokens stay on
        their namespace (device tokens: columns taken there)."""
        if group != 1:
            raise ValueError("the Transformer protocol runs one instance per row (group = 1)")  # Bob's query: per y
        tokens = encoded.tokens
        a_pos = np.nonzero(self.owners == A_OWNS)[0]
        b_pos = np.nonzero((self.owners == B_OWNS) | (self.owners == PUBLIC))[0]
        p_pos = np.nonzero(self.owners == PUBLIC)[0]
        alice = {"positions": a_pos, "tokens": take_columns(tokens, a_pos),
                 "public_positions": p_pos, "public_tokens": take_columns(tokens, p_pos)}
        bob = {"positions": b_pos, "tokens": take_columns(tokens, b_pos), "y": np.asarray(y)}
        public = {"n": self.n, "length": self.length, "owners": self.owners.copy(),
                  "fixed_tokens": dict(self.fixed_tokens)}
        return alice, bob, public

    def _scatter(self, positions, tokens):
        """A ``(B, N)`` token array holding ``tokens`` at ``positions`` and 0 elsewhere (tokens' namespace)."""
        return scatter_columns(tokens, positions, self.length)

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The one- or two-round protocol; Bob's full output goes to ``sink["bob"]`` (one runner: plain)."""
        model, N = self.model, self.length
        sink = {} if sink is None else sink
        bob_reads = [o for o, m in self.modes.items() if m == "bob"]
        k = model.n_heads * model.d_k

        def bob_query(view):
            if observe is not None:
                observe(BOB, view)
            mine = self._scatter(view.own_input["positions"], view.own_input["tokens"])
            qs = [model.query(mine[:, o], o) for o in bob_reads]  # (B, H, d_k) each, the model's namespace
            xp = namespace_of(*qs)
            flat = xp.concat([xp.reshape(q, (q.shape[0], -1)) for q in qs], axis=1)  # (B, R*H*d_k)
            return BitRows(self.query_code.encode_rows(flat))

        def alice(view):
            if observe is not None:
                observe(ALICE, view)
            own = view.own_input
            mine = self._scatter(own["positions"], own["tokens"])
            B = mine.shape[0]
            received = {}
            if bob_reads:
                values = self.query_code.decode_rows(view.received[0].array)  # (B, R * H * d_k)
                xp = namespace_of(values)
                for i, o in enumerate(bob_reads):
                    received[o] = xp.reshape(values[:, i * k:(i + 1) * k], (B, model.n_heads, model.d_k))
            rows = []
            for o in (int(t) for t in self.read):
                mode = self.modes[o]
                if mode == "bob":
                    q = received[o]
                elif mode == "public":
                    at = int(np.nonzero(own["public_positions"] == o)[0][0])
                    q = model.query(own["public_tokens"][:, at], o)
                elif mode == "fixed":
                    q = model.query(_constant_tokens(mine, view.public["fixed_tokens"][o]), o)
                else:
                    q = model.query(_constant_tokens(mine, 0), o)
                part = model.partial(mine, own["positions"], query=q, output_position=o)
                rows.append(part.to_bit_rows())
            return BitRows(namespace_of(*rows).concat(rows, axis=1))

        from models.transformer.attention import AttentionPartial

        def bob(view):
            if observe is not None:
                observe(BOB, view)
            own = view.own_input
            mine = self._scatter(own["positions"], own["tokens"])
            reply = view.received[-1].array
            logits = []
            for i, o in enumerate(int(t) for t in self.read):
                chunk = reply[:, i * self.partial_bits:(i + 1) * self.partial_bits]
                theirs = AttentionPartial.from_bit_rows(
                    chunk, n_heads=model.n_heads, d_v=model.d_v, n_positions=N, output_position=o,
                    grid=self.grid)
                ours = model.partial(mine, own["positions"], query=model.query(mine[:, o], o),
                                     output_position=o)
                logits.append(model.finish(theirs + ours, mine[:, o]))  # (B, C), the model's namespace
            run = self._run(logits)
            sink["bob"] = run
            return self.reduction.decode(run.answers, own["y"])

        sends = (bob_query, alice) if bob_reads else (alice,)
        steps = tuple(Step(m.sender, m.receiver, f, m.label) for m, f in zip(self.messages, sends))
        return Protocol(f"{self.reduction.name}/transformer-1/{self.rounds}-round", steps, BOB, bob,
                        "partial attention sums (theorems.md §8.3)")

    def _run(self, logits) -> ModelRun:
        """A :class:`ModelRun` from the logits at each read position (any namespace)."""
        return run_from_logits(logits, self.task.answer_kind, self.classes)

    # -- the unsplit model ---------------------------------------------------------------------
    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit model's forward pass at every read position."""
        self._one_group(group)
        logits = self.model.forward_at(encoded.tokens, [int(o) for o in self.read])  # (B, K, C): keys and values once
        return self._run([logits[:, i, :] for i in range(len(self.read))])

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str = "partial sums"):
        """The numbers in instance ``b``'s message: queries, or per read position and head the
        numerator and denominator (as integers on the grid, and their real values)."""
        model = self.model
        arr = to_numpy(rows.array[b:b + 1, ...])  # printed: this instance's bits to the host
        if label == "query":
            values = self.query_code.decode_rows(arr)[0]
            k = model.n_heads * model.d_k
            return [(f"q@{o}", values[i * k:(i + 1) * k].tolist())
                    for i, o in enumerate(o for o, m in self.modes.items() if m == "bob")]
        return describe_partial_sums(model, arr, self.read, self.partial_bits, self.length, self.grid)

    def describe(self) -> str:
        grid = self.grid.describe() if self.exact else "float64 sums (not exact)"
        how = ", ".join(f"{o}: {m}" for o, m in self.modes.items())
        return f"{self.rounds}-round partition protocol; query at {how}; {grid}"


def _constant_tokens(like, token: int):
    """``(B,)`` int64 copies of ``token`` on the namespace and device of ``like`` ``(B, ...)``."""
    xp = namespace_of(like)
    return xp.full((like.shape[0],), int(token), dtype=xp.int64, device=array_api_compat.device(like))


def describe_partial_sums(model, arr, read, partial_bits: int, length: int, grid) -> list:
    """``(name, values)`` per read position and head of one ``(1, bits)`` message of partial attention
    sums: the numerator ``S@o.hh`` and denominator ``Z@o.hh`` as real values (``grid`` None: float
    sums, shown as they are)."""
    from models.transformer.attention import AttentionPartial

    scale_v, scale_w = (1.0, 1.0) if grid is None else (grid.value.scale, grid.weight.scale)
    out = []
    for i, o in enumerate(int(t) for t in read):
        part = AttentionPartial.from_bit_rows(arr[:, i * partial_bits:(i + 1) * partial_bits],
                                              n_heads=model.n_heads, d_v=model.d_v, n_positions=length,
                                              output_position=o, grid=grid)
        for h in range(model.n_heads):
            num, den = np.asarray(part.numerator)[0, h], np.asarray(part.denominator)[0, h]
            out.append((f"S@{o}.h{h}", (num / scale_v).tolist()))
            out.append((f"Z@{o}.h{h}", [float(den) / scale_w]))
    return out
