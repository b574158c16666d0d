"""A row-reading attention unit (qSA's) as a one-way protocol: Alice sends her rows' q, k, v (§8.7).

SHT's Thm 4 (App. B.3) reads the output at token 2q+1, whose pointer set is Alice's input, so the
partial-sum protocol of :mod:`.transformer` (which needs the output row on Bob's side) does not
apply. Here instead, in one message, Alice sends the query of every read row she holds and the key
and value of every row she holds, each number rounded at the model's precision P and written in
its code (:meth:`~commcomp.precision.Precision.encode_rows`). Bob computes the keys and values of
his and the public rows himself, puts Alice's in their places, and runs the attention at the read
rows over all N rows. The cost, with H heads, ``A`` Alice's rows and ``R_A`` the read rows among them::

    bits = P · H · (|R_A| · d_k + |A| · (d_k + d_v))

which for DISJ -> qSA (``|A| = |R_A| = 1``: token 2q+1) is ``H · (2 d_k + d_v) · P``: SHT's
``m·p`` for Q(x_{2q+1}), plus the token's own key and value (the catalogue's implementation note:
they too depend on Alice's input in general). Float64 reference mode sends float64 codes (P = 64).

Faithful bit for bit at every precision: the unit's q, k, v of a row depend on that row alone and
are computed elementwise in a fixed order, the codec is exact on the precision's grid, and Bob's
attention and the unsplit pass (:meth:`~models.constructions.qsa.QSAAttentionUnit.output_rows`) are
the same function, :meth:`~models.constructions.qsa.QSAAttentionUnit.attend`, on the same arrays.

On a device (a unit moved with ``to_namespace``) everything runs on the unit's namespace: the
feature rows the encoder wrote there, each party's rows taken and placed there (a gather from
``[zeros, rows]``: the Array API has no integer-array assignment), the message's bits, and Bob's
assembly of all N rows' keys and values (a gather from ``[his, Alice's]``); only what is printed and
Bob's answers, which the reduction's NumPy decoder reads, come to the host (``to_numpy``).

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("qsa", "transformer", 3, "fixed:8:4", weights="construction")
>>> m = sim.model                       # C7a at q = 3: one-hot keys of width m_k = N = 7, d' = 2
>>> sim.split.kind, sim.split.rounds, (m.d_k, m.d_v), sim.bits_per_message   # (2·7 + 2)·8
('attention-row', 1, (7, 2), 128)
>>> from reductions.simulate.api import verify
>>> v = verify("qsa", "transformer", 3, "fixed:8:4", weights="construction", exhaustive=True)
>>> v["instances"], v["faithful"], v["correct"], v["lower_bound_bits"], v["distinct_messages"]
(64, 1.0, 1.0, 3, 8)
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from commcomp.backend import is_numpy, namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.precision import FLOAT64
from commcomp.protocol import ALICE, BOB, Protocol, Step
from commcomp.protocol.owners import Owner

from .outputs import ModelRun, run_from_logits
from .running import take_columns
from .splits import MessageSpec, Split
from .transformer import no_cot, one_layer_theorem, refuse_deep_transformer

A_OWNS = Owner.ALICE

__all__ = ["RowAttentionSplit", "is_row_model", "pointers_per_row", "random_row_model", "row_message_bits"]


def is_row_model(model) -> bool:
    """Whether ``model`` is a row-reading attention unit (qSA's): it reads ``features`` rows and
    exposes ``row_qkv`` / ``attend``, which this protocol splits."""
    return hasattr(model, "row_qkv") and hasattr(model, "attend")


def row_message_bits(P: int, heads: int, d_k: int, d_v: int, alice_rows: int, alice_reads: int) -> int:
    """``P · H · (|R_A| · d_k + |A| · (d_k + d_v))``: the bits of Alice's one message.

    Examples
    --------
    >>> row_message_bits(8, 1, 7, 2, 1, 1)     # qSA: (2 d_k + d_v) P
    128
    """
    return int(P) * int(heads) * (int(alice_reads) * int(d_k) + int(alice_rows) * (int(d_k) + int(d_v)))


def reads_rows(reduction) -> bool:
    """Whether ``reduction``'s task is read by the row-reading unit (qsa: rows of real vectors), not by a
    token Transformer."""
    return reduction.task_name == "qsa"


def pointers_per_row(reduction, n: int) -> int:
    """q of ``reduction``'s qSA task at size n: the task's own fixed q (``index@q1``: 1, at any N),
    else its size parameter (the registered task: q = n, N = 2q + 1)."""
    return int(getattr(reduction.task, "q", reduction.task_size(n)))


def random_row_model(reduction, n: int, width: int, heads: int, precision, seed: int):
    """The random-weight unit ``--weights random`` runs for a row-reading task (qsa), or None for
    any other task (those run a token Transformer)."""
    if not reads_rows(reduction):
        return None
    from models.constructions.qsa import QSARandomUnit

    return QSARandomUnit(dim=reduction.answer_classes(n), q=pointers_per_row(reduction, n), width=width,
                         heads=heads, precision=precision, seed=seed, length=reduction.length(n))


class RowAttentionSplit(Split):
    """A row-reading attention unit run as a one-way protocol for one reduction at one size
    (a :class:`~.splits.Split`; of the Transformer family: tried before the token Transformer's).

    Attributes
    ----------
    owners, read : numpy.ndarray
        The owner mask and the read positions.
    alice_rows, alice_reads : numpy.ndarray
        Alice's rows, and the read rows among them (their queries go in the message).
    rounds : int
        Always 1.
    exact : bool
        Always True: Bob's pass and the unsplit one run the same arithmetic in the same order.
    code : Precision
        The message code (the model's precision; float64 in reference mode).
    bits_per_instance : int
        :func:`row_message_bits`.

    Raises
    ------
    UnsupportedSplitError
        For a model that is not a 1-layer row-reading unit.
    InvalidParameterError
        For a unit built for another length or pointer count than the task's.
    """

    kind = "attention-row"
    arch_class = "transformer"
    simulation = "one-way, Alice's rows' q, k, v"
    rounds = 1
    exact = True

    @classmethod
    def handles(cls, spec, model=None, layers=None) -> bool:
        """A Transformer-class architecture whose model is a row-reading unit."""
        return spec.arch_class == cls.arch_class and model is not None and is_row_model(model)

    @classmethod
    def refuse(cls, spec, layers: int, reduction=None) -> None:
        refuse_deep_transformer(layers)  # the unit is one attention layer

    @classmethod
    def random_model(cls, reduction, n: int, width: int, heads: int, precision, seed: int):
        """The random-weight unit for a task whose rows carry real data (qsa); None otherwise."""
        return random_row_model(reduction, n, width, heads, precision, seed)

    @classmethod
    def verify_note(cls, out: dict) -> str | None:
        return ("one round: Alice sends her row's query, key and value, "
                f"{out['bits_per_message']} bits; Bob attends over all rows")

    def theorem(self) -> str | None:
        return one_layer_theorem(self.reduction, self.rounds)

    def __init__(self, model, reduction, n: int, cot: bool = False):
        no_cot(cot)
        if not is_row_model(model) or getattr(model, "n_layers", 1) != 1:
            raise UnsupportedSplitError("only a 1-layer row-reading attention unit (qsa's) is split into "
                                        "Alice's rows' query, key and value")
        self.model, self.reduction, self.n = model, reduction, int(n)
        self.task = reduction.task
        self.owners = reduction.owners(n)
        self.length = N = int(self.owners.size)
        task_n = pointers_per_row(reduction, n)
        if int(model.length) != N or int(getattr(model, "q", task_n)) != task_n:
            raise InvalidParameterError(f"the unit is built for N = {model.length}, q = {getattr(model, 'q', '?')}"
                                        f"; {reduction.name} at n = {n} needs N = {N}, q = {task_n}")
        self.classes = reduction.answer_classes(n)
        if int(model.d_model_out) < self.classes:
            raise InvalidParameterError(f"the unit has {model.d_model_out} outputs, the task needs "
                                        f"{self.classes}")
        self.read = np.asarray(reduction.output_positions(n), dtype=np.int64)
        self.alice_rows = np.nonzero(self.owners == A_OWNS)[0]
        self.bob_rows = np.nonzero(self.owners != A_OWNS)[0]  # Bob's and the public rows
        self.alice_reads = self.read[self.owners[self.read] == A_OWNS]
        self.code = model.precision if model.precision is not None else FLOAT64
        self.heads, self.d_k, self.d_v = int(model.n_heads), int(model.d_k), int(model.d_v)
        self.messages = (MessageSpec(ALICE, BOB, "q, k, v", row_message_bits(
            self.code.bits, self.heads, self.d_k, self.d_v, self.alice_rows.size, self.alice_reads.size)),)
        self.bob_step = (f"Bob computes the keys and values of rows {self.bob_rows.tolist()} himself, "
                         f"puts Alice's at {self.alice_rows.tolist()}, and attends from row(s) "
                         f"{self.read.tolist()} over all {N} rows")

    # -- inputs of the parties ---------------------------------------------------------------
    def party_inputs(self, encoded, y, group: int = 1):
        """``(alice_input, bob_input, public)``: each party's own feature rows (Bob's include the
        public ones) and Bob's y; the owner mask is public. The rows stay on the features' namespace
        (device features: taken there)."""
        if group != 1:
            raise InvalidParameterError("the row protocol runs one instance per row (group = 1)")
        feats = encoded.task_batch.features  # (B, N, width), the encoder's namespace
        alice = {"positions": self.alice_rows, "features": take_columns(feats, self.alice_rows)}
        bob = {"positions": self.bob_rows, "features": take_columns(feats, self.bob_rows), "y": np.asarray(y)}
        public = {"n": self.n, "length": self.length, "owners": self.owners.copy()}
        return alice, bob, public

    def _scatter(self, positions, rows):
        """A ``(B, N, width)`` feature array holding ``rows`` at ``positions`` and zeros elsewhere
        (the unit reads only the rows asked for), on the rows' namespace: a gather from
        ``[zeros, rows]`` (the Array API has no integer-array assignment)."""
        return _place_rows(rows, positions, self.length)

    def _split_message(self, values):
        """Decoded message ``(B, k)`` -> queries ``(B, |R_A|, H, d_k)``, keys and values of Alice's rows."""
        xp = namespace_of(values)
        B, H, a, r = values.shape[0], self.heads, self.alice_rows.size, self.alice_reads.size
        q_end = r * H * self.d_k
        k_end = q_end + a * H * self.d_k
        return (xp.reshape(values[:, :q_end], (B, r, H, self.d_k)),
                xp.reshape(values[:, q_end:k_end], (B, a, H, self.d_k)),
                xp.reshape(values[:, k_end:], (B, a, H, self.d_v)))

    # -- the protocol ------------------------------------------------------------------------
    def protocol(self, alice_runner: str = "plain", sink: dict | None = None, observe=None) -> Protocol:
        """The one-round protocol; Bob's full output goes to ``sink["bob"]`` (one runner: plain)."""
        model, sink = self.model, {} if sink is None else sink
        at_alice = np.searchsorted(self.alice_rows, self.alice_reads)  # read rows among Alice's
        # where Bob's attention finds each row: his own rows first, then Alice's (public positions)
        bob_rows = self.bob_rows
        row_source = np.empty(self.length, dtype=np.int64)
        row_source[bob_rows] = np.arange(bob_rows.size)
        row_source[self.alice_rows] = bob_rows.size + np.arange(self.alice_rows.size)
        # each read row's query: Bob's own (index into his rows) or from Alice's message (after them)
        query_source = np.array([np.nonzero(bob_rows == o)[0][0] if np.any(bob_rows == o) else
                                 bob_rows.size + int(np.nonzero(self.alice_reads == o)[0][0])
                                 for o in self.read], dtype=np.int64)

        def alice(view):
            if observe is not None:
                observe(ALICE, view)
            own = view.own_input
            q, k, v = model.row_qkv(self._scatter(own["positions"], own["features"]), own["positions"])
            xp, B = namespace_of(q, k, v), q.shape[0]
            numbers = xp.concat([xp.reshape(take_columns(q, at_alice), (B, -1)), xp.reshape(k, (B, -1)),
                                 xp.reshape(v, (B, -1))], axis=1)  # (B, H (|R_A| d_k + |A| (d_k + d_v)))
            return BitRows(self.code.encode_rows(numbers))  # (B, bits_per_instance)

        def bob(view):
            if observe is not None:
                observe(BOB, view)
            own = view.own_input
            q_a, k_a, v_a = self._split_message(self.code.decode_rows(view.received[0].array))
            q_b, k_b, v_b = model.row_qkv(self._scatter(own["positions"], own["features"]), own["positions"])
            xp = namespace_of(q_b, k_a)
            K = take_columns(xp.concat([k_b, k_a], axis=1), row_source)  # (B, N, H, d_k) in row order
            V = take_columns(xp.concat([v_b, v_a], axis=1), row_source)  # (B, N, H, d_v)
            Q = take_columns(xp.concat([q_b, q_a], axis=1), query_source)  # (B, |read|, H, d_k)
            run = self._run(model.attend(Q, K, V))
            sink["bob"] = run
            return self.reduction.decode(run.answers, own["y"])

        (qkv,) = self.messages
        return Protocol(f"{self.reduction.name}/attention-row/1-round",
                        (Step(qkv.sender, qkv.receiver, alice, qkv.label),), BOB, bob, "Alice's rows' query, key and value (theorems.md §8.7)")

    def _run(self, logits) -> ModelRun:
        """A :class:`ModelRun` from the logits at each read position (any namespace)."""
        return run_from_logits(logits, self.task.answer_kind, self.classes)

    # -- the unsplit model ---------------------------------------------------------------------
    def reference(self, encoded, runner: str = "plain", group: int = 1) -> ModelRun:
        """The unsplit unit's output at the read rows (every row's q, k, v, then the attention)."""
        self._one_group(group)
        return self._run(self.model.output_rows(encoded.task_batch.features, self.read))

    # -- reading a message -------------------------------------------------------------------
    def describe_message(self, rows: BitRows, b: int = 0, label: str | None = None):
        """The numbers in instance ``b``'s message: per read row of Alice's and head the query,
        then per row of Alice's and head the key and the value."""
        arr = to_numpy(rows.array[b:b + 1, ...])  # printed: this instance's bits to the host
        q, k, v = self._split_message(self.code.decode_rows(arr))
        out = []
        for i, o in enumerate(self.alice_reads):
            out += [(f"q@{o}.h{h}", q[0, i, h].tolist()) for h in range(self.heads)]
        for i, a in enumerate(self.alice_rows):
            out += [(f"k@{a}.h{h}", k[0, i, h].tolist()) for h in range(self.heads)]
            out += [(f"v@{a}.h{h}", v[0, i, h].tolist()) for h in range(self.heads)]
        return out

    def describe(self) -> str:
        a, r = self.alice_rows.size, self.alice_reads.size
        return (f"1-round row protocol: Alice sends the query of her read row(s) {self.alice_reads.tolist()} "
                f"and the key and value of her row(s) {self.alice_rows.tolist()} at {self.code.name}: "
                f"P·H·(|R_A|·d_k + |A|·(d_k + d_v)) = {self.code.bits}·{self.heads}·({r}·{self.d_k} + "
                f"{a}·({self.d_k} + {self.d_v})) = {self.bits_per_instance} bits; attention in a fixed "
                "order")


def _place_rows(rows, positions, length: int):
    """``(B, length, ...)`` holding ``rows`` ``(B, k, ...)`` at the sorted host ``positions`` ``(k,)``
    and zeros elsewhere, on the rows' namespace: row j reads row ``1 + i`` of ``[0, rows]`` when
    ``positions[i] == j``, else the zero row (an index built from the positions, constants of the
    split).

    Examples
    --------
    >>> import array_api_strict as xps
    >>> got = _place_rows(xps.asarray([[[7.0], [8.0]]]), [1, 3], 5)
    >>> [float(v) for v in got[0, :, 0]]
    [0.0, 7.0, 0.0, 8.0, 0.0]
    """
    positions = np.asarray(positions, dtype=np.int64).reshape(-1)
    if is_numpy(rows):
        full = np.zeros((rows.shape[0], int(length)) + rows.shape[2:], dtype=rows.dtype)
        full[:, positions] = rows
        return full
    xp = namespace_of(rows)
    source = np.zeros(int(length), dtype=np.int64)
    source[positions] = np.arange(1, positions.size + 1)  # (length,): where each row comes from
    zero = xp.zeros((rows.shape[0], 1) + tuple(rows.shape[2:]), dtype=rows.dtype,
                    device=array_api_compat.device(rows))
    return take_columns(xp.concat([zero, rows], axis=1), source)  # (B, length, ...)
