"""Reference protocols for the registered problems, and the partition split of a sequence.

* :func:`trivial_one_way` — Alice sends x; Bob evaluates f. Works for every problem and
  costs exactly the bits of Alice's input (n for every registered problem).
* :func:`index_bob_first` — INDEX with Bob speaking first: he sends i in ceil(log2 n) bits,
  Alice answers x_i in one bit: ceil(log2 n) + 1 bits in all.
* :func:`equality_fingerprint` — public-coin EQ: k public random vectors r_j; Alice sends the
  k parities <x, r_j> mod 2; Bob says "equal" iff they all match his. Never wrong when x = y;
  when x != y each parity differs with probability exactly 1/2, so the error is 2^-k.

Examples
--------
>>> import numpy as np
>>> from commcomp.problems import get_problem
>>> x = np.array([[1, 0, 1, 1, 0]]); i = np.array([3])
>>> t = run_protocol(index_bob_first(5), x, i)
>>> t.bits_sent, t.outputs.tolist()
(4, [True])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..bits import BitRows
from ..errors import InvalidParameterError
from ..problems import Problem, get_problem
from .core import Protocol, Step, run_protocol
from .owners import ALICE, BOB, Owner

__all__ = ["trivial_one_way", "index_bob_first", "equality_fingerprint", "split_by_owner",
           "PartyPositions", "PUBLIC", "ALICE_OWNS", "BOB_OWNS", "run_protocol"]

PUBLIC, ALICE_OWNS, BOB_OWNS = Owner.PUBLIC, Owner.ALICE, Owner.BOB  # the owner codes (.owners)


def trivial_one_way(problem: Problem | str, n: int) -> Protocol:
    """Alice sends her whole input (n bits); Bob outputs f(x, y).

    The cost equals D^{A->B} for every registered problem (their one-way complexity is n).
    """
    problem = get_problem(problem)
    n = problem.check_n(n)

    def alice(view):
        return BitRows(np.asarray(view.own_input, dtype=np.uint8).reshape(-1, n))  # (B, n)

    def bob(view):
        x_received = view.received[0].array  # (B, n): all Bob knows of x
        return problem.evaluate(x_received, view.own_input)

    return Protocol(f"{problem.name}/trivial-one-way", (Step(ALICE, BOB, alice, "x"),), BOB, bob,
                    "Alice sends x; Bob evaluates f")


def index_bob_first(n: int) -> Protocol:
    """INDEX_n with Bob speaking first: ceil(log2 n) bits for i, then x_i (1 bit); Bob outputs it."""
    if n < 1:
        raise InvalidParameterError(f"n must be >= 1, got {n}")
    index_bits = math.ceil(math.log2(n)) if n > 1 else 0

    def bob_sends_index(view):
        return BitRows.from_uints(np.asarray(view.own_input, dtype=np.int64).reshape(-1, 1), index_bits)

    def alice_answers(view):
        i = view.received[0].to_uints(index_bits)[:, 0].astype(np.int64) if index_bits else \
            np.zeros(view.received[0].batch, dtype=np.int64)
        x = np.asarray(view.own_input)
        return BitRows(x[np.arange(x.shape[0]), i][:, None])  # (B, 1)

    return Protocol("index/bob-first",
                    (Step(BOB, ALICE, bob_sends_index, "i"), Step(ALICE, BOB, alice_answers, "x_i")),
                    BOB, lambda view: view.received[0].array[:, 0].astype(bool),
                    "Bob sends i, Alice answers x_i")


@dataclass(frozen=True)
class FingerprintCoins:
    """Public randomness of the EQ fingerprint: ``vectors`` (B, k, n) of random bits."""

    vectors: np.ndarray


def equality_fingerprint(n: int, repetitions: int) -> Protocol:
    """Public-coin EQ_n with k = ``repetitions`` parities: k bits, error 2^-k on unequal inputs.

    Run it with ``public=equality_coins(batch, n, k, rng)``.
    """
    if n < 1 or repetitions < 1:
        raise InvalidParameterError(f"need n >= 1 and repetitions >= 1, got {n}, {repetitions}")

    def parities(bits, vectors):
        return (np.einsum("bn,bkn->bk", bits.astype(np.int64), vectors.astype(np.int64)) % 2)  # (B, k)

    def alice(view):
        return BitRows(parities(np.asarray(view.own_input), view.public.vectors))

    def bob(view):
        mine = parities(np.asarray(view.own_input), view.public.vectors)
        return np.all(view.received[0].array == mine, axis=1)

    return Protocol(f"equality/fingerprint-k{repetitions}", (Step(ALICE, BOB, alice, "parities"),),
                    BOB, bob, "public random parities <x, r_j> mod 2")


def equality_coins(batch: int, n: int, repetitions: int, rng: np.random.Generator) -> FingerprintCoins:
    """Fresh public coins for :func:`equality_fingerprint` (independent per instance)."""
    return FingerprintCoins(rng.integers(0, 2, size=(batch, repetitions, n), dtype=np.uint8))


@dataclass(frozen=True)
class PartyPositions:
    """A party's share of a sequence: the positions it owns (plus public ones) and their contents.

    ``values`` holds only those positions (``(B, len(positions), ...)``); the other positions
    are absent, not masked, so there is nothing else to read.
    """

    positions: np.ndarray
    values: np.ndarray
    length: int


def split_by_owner(sequence, owners) -> tuple[PartyPositions, PartyPositions]:
    """Split a batch of sequences ``(B, N, ...)`` by an owner mask ``(N,)`` of PUBLIC/ALICE/BOB.

    Each party gets its own positions and the public ones, in order.

    Examples
    --------
    >>> a, b = split_by_owner(np.array([[7, 8, 9]]), np.array([1, 0, 2]))
    >>> a.positions.tolist(), a.values.tolist(), b.positions.tolist(), b.values.tolist()
    ([0, 1], [[7, 8]], [1, 2], [[8, 9]])
    """
    seq = np.asarray(sequence)
    owners = np.asarray(owners)
    if owners.ndim != 1 or owners.shape[0] != seq.shape[1]:
        raise InvalidParameterError(f"owner mask of shape {owners.shape} does not fit sequences {seq.shape}")
    if not np.isin(owners, (PUBLIC, ALICE_OWNS, BOB_OWNS)).all():
        raise InvalidParameterError("owners must be 0 (public), 1 (Alice) or 2 (Bob)")
    parts = []
    for who in (ALICE_OWNS, BOB_OWNS):
        pos = np.nonzero((owners == who) | (owners == PUBLIC))[0]
        parts.append(PartyPositions(pos, seq[:, pos].copy(), seq.shape[1]))
    return parts[0], parts[1]
