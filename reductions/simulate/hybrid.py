"""A hybrid (recurrent stack + one attention layer) as a three-message protocol (§8.3 + §8.1).

The recurrent layers are causal, so with a prefix/suffix split (Alice holds positions ``0..s-1``,
Bob the rest) the attention layer's inputs, keys and values at Alice's positions depend on her
tokens only.  Per instance:

1. **Alice -> Bob, the state**: Alice runs the stack over her prefix and sends its carried state,
   ``S(m)`` numbers at the model's precision (``S(m)·P`` bits, as :mod:`.recurrent`).
2. **Bob -> Alice, the query**: Bob continues the stack over his suffix, reads the hidden row at each
   read position ``o`` and sends its query, ``H·d_k`` numbers (``H·d_k·P`` bits per read position).
3. **Alice -> Bob, the partial sums**: with that query Alice sums ``w_j v_j`` and ``w_j`` over her
   positions (``H·(d_v + 1)`` exact sums of ``P + ceil(log2 N)`` bits, as :mod:`.transformer`);
   Bob adds his own partial sums and finishes the layer: MLP and readout.

Cost per instance, with ``R`` read positions::

    S(m)·P + R·H·d_k·P + R·H·(d_v + 1)·(P + ceil(log2 N))

(:func:`commcomp.bounds.hybrid_protocol_bits`).  Because the shift and the grid are agreed from the
weights alone (the pre-norm bounds every score) and the sums are integers, Bob's total equals the
unsplit :meth:`~models.transformer.hybrid.Hybrid.forward` bit for bit; the recurrence run in two
pieces equals the one run over the whole sequence, as for :mod:`.recurrent`.  With a chain of
thought every generated token would need another (query, partial sums) round, so the cost grows
with its length: this split refuses CoT (the catalogue says so: ``COMMCOMP-HYBRID-*``.cot).

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("string-equality", "hybrid", 3, "fixed:8:4", width=2, heads=1)
>>> sim.split.rounds, sim.split.split_at, sim.model.stack.state_numbers()   # Mamba: 2·2·(16 + 3)
(3, 3, 76)
>>> sim.bits_per_message      # 76·8 + 1·2·8 + 1·(2 + 1)·(8 + ceil(log2 7))
657
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import FLOAT64
from commcomp.protocol import ALICE, BOB, Protocol, Step
from commcomp.protocol.owners import Owner

from .outputs import ModelRun, run_from_logits
from .recurrent import split_point
from .running import take_columns
from .splits import MessageSpec, Split, find_theorem, require_prefix_suffix
from .transformer import describe_partial_sums, partial_sums_step

A_OWNS, B_OWNS, PUBLIC = Owner.ALICE, Owner.BOB, Owner.PUBLIC

__all__ = ["HybridSplit"]


class HybridSplit(Split):
    """A :class:`~models.transformer.hybrid.Hybrid` run as a three-message protocol for one reduction
    (a :class:`~.splits.Split`).

    Raises
    ------
    UnsupportedSplitError
        If the owners are not a prefix/suffix split, an output is read inside Alice's prefix, or the
        model has no pre-norm (no agreed shift).
    """

    kind = "hybrid"
    arch_class = "hybrid"
    simulation = "prefix/suffix, 3 messages"
    rounds = 3

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        """A hybrid is split with Alice's prefix and Bob's suffix only."""
        require_prefix_suffix(reduction, "; a hybrid is split only with Alice's prefix and Bob's suffix: its "
                              "recurrent layers are causal, so only then do the keys and values at Alice's "
                              "positions depend on her tokens alone (reductions/simulate/hybrid.py)")

    @classmethod
    def bob_step_text(cls, out: dict) -> str:
        return out.get("bob_step") or partial_sums_step(out)

    def theorem(self) -> str | None:
        """The task's hybrid lower bound, else the problem's two-way communication complexity."""
        return find_theorem(self.reduction, "hybrid", split_words="three messages", rounds=self.rounds)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        if cot:
            raise UnsupportedSplitError(
                "a hybrid with chain of thought needs one (query, partial sums) round per generated token: "
                "each generated token's state and query depend on both parties; only the hybrid without "
                "CoT is simulated (three messages)")
        if not hasattr(model, "stack") or not hasattr(model, "finish"):
            raise UnsupportedSplitError("the hybrid split needs a models.transformer.hybrid.Hybrid")
        model._need_prenorm()
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.owners = reduction.owners(n)
        self.length = N = int(self.owners.size)
        self.split_at = split_point(self.owners)
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        if np.any(self.read < self.split_at):
            raise UnsupportedSplitError(
                f"{reduction.name}: an output is read at position {int(self.read.min())}, inside Alice's "
                f"prefix (which ends at {self.split_at - 1}); the hybrid split reads on Bob's side")
        self.grid = model.attention_grid(N)
        self.exact = self.grid is not None
        self.query_code = model.precision if model.precision is not None else FLOAT64
        self.state_bits = int(model.stack.state_bits())
        self.query_bits = int(self.read.size * model.query_bits())
        self.partial_bits = int(model.message_bits(N))
        self.messages = (MessageSpec(ALICE, BOB, "state", self.state_bits),
                         MessageSpec(BOB, ALICE, "query", self.query_bits),
                         MessageSpec(ALICE, BOB, "partial sums", int(self.read.size) * self.partial_bits))
        self.classes = reduction.answer_classes(n)

    # -- inputs of the parties ---------------------------------------------------------------
    def party_inputs(self, encoded, y, group: int = 1):
        """``(alice_input, bob_input, public)``: each party's own and the public positions (Bob also
        his y).  ``group`` must be 1: Bob's query depends on his tokens, so every instance has its own
        transcript."""
        if group != 1:
            raise ValueError("the hybrid protocol runs one instance per row (group = 1)")
        tokens = encoded.tokens  # host or device: columns taken on the tokens' namespace
        mine = {who: np.nonzero((self.owners == who) | (self.owners == PUBLIC))[0] for who in (A_OWNS, B_OWNS)}
        alice = {"positions": mine[A_OWNS], "tokens": take_columns(tokens, mine[A_OWNS])}
        bob = {"positions": mine[B_OWNS], "tokens": take_columns(tokens, mine[B_OWNS]), "y": np.asarray(y)}
        public = {"n": self.n, "length": self.length, "owners": self.owners.copy()}
        return alice, bob, public

    # -- the two parties' computations ------------------------------------------------------
    def _alice_hidden(self, own):
        """Alice's prefix: (final stack state, ``(B, N, d)`` hidden rows with hers at 0..s-1, zeros after)."""
        model, s = self.model, self.split_at
        k = int(np.searchsorted(own["positions"], s))  # sorted positions: the first k lie before s
        prefix = own["tokens"][:, :k]  # (B, s): every position before s is hers or public
        state, y = model.stack.run_layers(prefix)
        return state, self._rows(y, 0)

    def _bob_hidden(self, own, state):
        """Bob's suffix from Alice's state: ``(B, N, d)`` with his rows at s..N-1, zeros before."""
        k = int(np.searchsorted(own["positions"], self.split_at))  # sorted: the positions from k on are >= s
        suffix = own["tokens"][:, k:]  # (B, N - s)
        _, y = self.model.stack.run_layers(suffix, state)
        return self._rows(y, self.split_at)

    def _rows(self, y, start: int):
        """The hidden rows ``y`` ``(B, T, d)`` (the stack's outputs) placed at ``start..start+T-1`` of a
        ``(B, N, d)`` array after the hybrid's rounding and ``norm_f`` (row by row, as :meth:`Hybrid.hidden`)."""
        model, xp = self.model, self.model.xp
        x = model.rnd(y)
        if model.layer_norm:
            from models.transformer.block import normalize

            x = model.rnd(normalize(x, model.w["norm_f.g"], model.w["norm_f.b"], model.norm, model.ln_eps))
        B, T, d = x.shape
        parts = [xp.zeros((B, start, d), dtype=x.dtype), x,
                 xp.zeros((B, self.length - start - T, d), dtype=x.dtype)]
        return xp.concat(parts, axis=1)  # (B, N, d)

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The three-message protocol; Bob's full output (a :class:`ModelRun`) goes to ``sink["bob"]``
        (one runner: plain)."""
        model, s, N = self.model, self.split_at, self.length
        sink = {} if sink is None else sink
        reads = [int(t) for t in self.read]
        k, xp = model.n_heads * model.d_k, model.xp

        def seen(party, view):
            if observe is not None:
                observe(party, view)

        def alice_state(view):
            seen(ALICE, view)
            state, _ = self._alice_hidden(view.own_input)
            return model.stack.state_to_bits(state)

        def bob_query(view):
            seen(BOB, view)
            x = self._bob_hidden(view.own_input, model.stack.bits_to_state(view.received[0]))
            qs = [xp.reshape(model.query(x[:, o, :]), (x.shape[0], -1)) for o in reads]  # (B, H*d_k) each
            return BitRows(self.query_code.encode_rows(xp.concat(qs, axis=1)))  # on the model's namespace

        def alice_partials(view):
            seen(ALICE, view)
            _, x = self._alice_hidden(view.own_input)
            values = self.query_code.decode_rows(view.received[0].array)  # (B, R·H·d_k), the bits' namespace
            vx = namespace_of(values)
            rows = []
            for i, o in enumerate(reads):
                q = vx.reshape(values[:, i * k:(i + 1) * k], (-1, model.n_heads, model.d_k))  # (B, H, d_k)
                rows.append(model.partial(x, np.arange(s), q, o).to_bit_rows())
            return BitRows(namespace_of(*rows).concat(rows, axis=1))

        from models.transformer.attention import AttentionPartial

        def bob(view):
            seen(BOB, view)
            own = view.own_input
            x = self._bob_hidden(own, model.stack.bits_to_state(view.received[0]))
            reply = view.received[1].array
            logits = []
            for i, o in enumerate(reads):
                theirs = AttentionPartial.from_bit_rows(
                    reply[:, i * self.partial_bits:(i + 1) * self.partial_bits], n_heads=model.n_heads,
                    d_v=model.d_v, n_positions=N, output_position=o, grid=self.grid)
                ours = model.partial(x, np.arange(s, N), model.query(x[:, o, :]), o)
                logits.append(model.finish(theirs + ours, x[:, o, :]))  # (B, C), the model's namespace
            run = self._run(logits)
            sink["bob"] = run
            return self.reduction.decode(run.answers, own["y"])

        steps = tuple(Step(m.sender, m.receiver, f, m.label)
                      for m, f in zip(self.messages, (alice_state, bob_query, alice_partials)))
        return Protocol(f"{self.reduction.name}/hybrid/3-message", steps, BOB, bob,
                        "recurrent state, query, partial attention sums (issue 12)")

    def _run(self, logits) -> ModelRun:
        """A :class:`ModelRun` from the logits at each read position (any namespace)."""
        return run_from_logits(logits, self.task.answer_kind, self.classes)

    # -- the unsplit model ---------------------------------------------------------------------
    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit model's :meth:`~models.transformer.hybrid.Hybrid.forward` at every read position."""
        self._one_group(group)
        return self._run([self.model.forward(encoded.tokens, output_position=int(o)) for o in self.read])

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str = "partial sums"):
        """The numbers in instance ``b``'s message: the state arrays, the queries, or per read position
        and head the numerator and denominator (real values)."""
        model, arr = self.model, to_numpy(rows.array[b:b + 1, ...])  # printed: this instance's bits to the host
        if label == "state":  # decoded by the model from the bits on its own namespace
            state = model.stack.bits_to_state(BitRows(rows.array[b:b + 1, ...]))
            return [(name, to_numpy(v).reshape(-1).astype(float).tolist()) for name, v in state.items()]
        if label == "query":
            values, k = self.query_code.decode_rows(arr)[0], model.n_heads * model.d_k
            return [(f"q@{o}", values[i * k:(i + 1) * k].tolist()) for i, o in enumerate(self.read)]
        return describe_partial_sums(model, arr, self.read, self.partial_bits, self.length, self.grid)

    def describe(self) -> str:
        grid = self.grid.describe() if self.exact else "float64 sums (not exact)"
        return (f"3 messages: Alice runs 0..{self.split_at - 1} and sends the state ({self.state_bits} bits); "
                f"Bob runs {self.split_at}..{self.length - 1} and sends the query at {self.read.tolist()} "
                f"({self.query_bits} bits); Alice sends her partial attention sums; {grid}")
