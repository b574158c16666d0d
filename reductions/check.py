"""Checking reductions, ours and users': one call, and a few-lines way to define new ones.

:func:`check_reduction` runs the task's own ground truth on the encoded inputs and compares
the decoded answer with f(x, y), over all inputs for every n up to ``n_max`` and on random
inputs beyond. It also checks the owner mask (over all inputs at small n): tokens (and
features) at Bob's and public positions must not change when x changes, and those at
Alice's and public positions must not change when y changes. It raises the first
counterexample as a :class:`ReductionCounterexample` (an AssertionError, so pytest shows it).

Worked example: a task not in the registry
------------------------------------------
*Palindrome*: bits, then ``[CLS]``; the answer is 1 iff the bits read the same backwards.
EQ_n reduces to it: Alice writes x, Bob writes y reversed, so ``x + reversed(y)`` is a
palindrome iff x = y.

>>> import numpy as np
>>> from reductions.check import check_reduction, make_reduction, make_task
>>> palindrome = make_task(
...     "palindrome", vocabulary=("0", "1", "[CLS]"), length=lambda n: 2 * n + 1,
...     ground_truth=lambda tokens: np.all(tokens[:, :-1] == tokens[:, -2::-1], axis=1))
>>> eq_to_palindrome = make_reduction(
...     palindrome, "equality",
...     encode=lambda x, y, n: np.concatenate([x, y[:, ::-1], np.full((len(x), 1), 2)], axis=1),
...     owners=lambda n: [1] * n + [2] * n + [0])
>>> report = check_reduction(eq_to_palindrome, n_max=6, n_random=[256], samples=32)
>>> report.exhaustive_instances
5460

Forgetting to reverse y is caught, with the first counterexample shown:

>>> broken = make_reduction(
...     palindrome, "equality",
...     encode=lambda x, y, n: np.concatenate([x, y, np.full((len(x), 1), 2)], axis=1),
...     owners=lambda n: [1] * n + [2] * n + [0])
>>> check_reduction(broken, n_max=4)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
reductions.check.ReductionCounterexample: equality->palindrome is wrong at n = 2 ...
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from commcomp.errors import InvalidParameterError, TooLargeError
from commcomp.limits import (MAX_EXHAUSTIVE_INSTANCES, MAX_INSTANCES, TOKEN_BYTES, check_int, check_memory,
                             check_seed, largest_within)
from commcomp.problems import get_problem

from .base import ALICE, BOB, PUBLIC, SPLIT_KINDS, Reduction, describe_owners
from .tasks.base import Task, TaskBatch, check_size

__all__ = ["check_reduction", "check_owners", "make_task", "make_reduction", "CheckReport",
           "ReductionCheckError", "ReductionCounterexample", "OwnerViolation"]


class ReductionCheckError(AssertionError):
    """A reduction broke its contract (shapes, vocabulary, split kind)."""


class ReductionCounterexample(ReductionCheckError):
    """An input where the decoded task answer differs from f(x, y). Attributes hold the instance."""

    def __init__(self, message, **instance):
        super().__init__(message)
        self.__dict__.update(instance)


class OwnerViolation(ReductionCheckError):
    """A position whose content depends on an input its owner does not hold."""


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_reduction` verified."""

    reduction: str
    problem: str
    exhaustive_sizes: tuple[int, ...]
    exhaustive_instances: int
    owner_sizes: tuple[int, ...]
    random_sizes: tuple[int, ...]
    random_instances: int


def _bits(row) -> str:
    row = np.asarray(row).ravel()
    return "".join(str(int(v)) for v in row) if row.size <= 200 else f"<{row.size} values>"


def _fmt_y(y) -> str:
    y = np.asarray(y)
    return str(int(y)) if y.ndim == 0 else _bits(y)


def _check_contract(red: Reduction, encoded, n: int) -> None:
    tokens, owners = encoded.tokens, encoded.owners
    V = red.task.vocab_size(red.task_size(n))
    if tokens.size and (tokens.min() < 0 or tokens.max() >= V):
        bad = np.argwhere((tokens < 0) | (tokens >= V))[0]
        raise ReductionCheckError(f"{red.name}: token {tokens[tuple(bad)]} at instance {bad[0]}, "
                                  f"position {bad[1]} is outside the vocabulary [0, {V}) at n = {n}")
    if red.split == "prefix-suffix":
        alice, bob = np.nonzero(owners == ALICE)[0], np.nonzero(owners == BOB)[0]
        if alice.size and bob.size and alice.max() > bob.min():
            raise ReductionCheckError(f"{red.name} claims prefix-suffix but Bob holds position "
                                      f"{bob.min()} before Alice's {alice.max()}: {describe_owners(owners)}")
    if red.query_fixed and np.any(owners[red.output_positions(n)] != PUBLIC):
        raise ReductionCheckError(f"{red.name} claims a fixed query but the output positions are "
                                  f"not all public: {describe_owners(owners)}")


def _first_mismatch(red: Reduction, problem, x, y, n: int) -> None:
    encoded = red.encode(x, y, n)
    _check_contract(red, encoded, n)
    outputs = red.task_answers(encoded)
    decoded = red.decode(outputs, y)
    truth = np.asarray(problem.evaluate(x, y), dtype=bool)
    if decoded.shape != truth.shape:
        raise ReductionCheckError(f"{red.name}: decoder returned shape {decoded.shape}, "
                                  f"expected {truth.shape}")
    wrong = np.nonzero(decoded != truth)[0]
    if wrong.size:
        b = int(wrong[0])
        task_n = red.task_size(n)
        answer = outputs[b].tolist() if outputs[b].size <= 64 else f"<{outputs[b].size} values>"
        raise ReductionCounterexample(
            f"{red.name} is wrong at n = {n} ({wrong.size} of {len(truth)} instances): first at\n"
            f"  x = {_bits(x[b])}\n  y = {_fmt_y(y[b])}\n"
            f"  tokens = {red.task.render(encoded.tokens[b], task_n)}\n"
            f"  owners = {describe_owners(encoded.owners)}\n"
            f"  task answer at {red.output_positions(n).tolist()[:16]} = {answer}\n"
            f"  decoded = {bool(decoded[b])}, f(x, y) = {bool(truth[b])}",
            n=n, x=np.asarray(x[b]), y=np.asarray(y[b]), tokens=encoded.tokens[b],
            task_answer=outputs[b], decoded=bool(decoded[b]), truth=bool(truth[b]))


def _group_constant(values: np.ndarray, groups: np.ndarray):
    """First (row, other_row) where ``values`` differ inside a group, or None."""
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    first = np.r_[True, g[1:] != g[:-1]]  # first row of each group, in sorted order
    leader = order[np.maximum.accumulate(np.where(first, np.arange(len(g)), 0))]
    diff = np.any((values[order] != values[leader]).reshape(len(g), -1), axis=1)
    if np.any(diff):
        i = int(np.argmax(diff))
        return int(order[i]), int(leader[i])
    return None


def check_owners(reduction: Reduction, problem, n: int) -> None:
    """Check the owner mask at size n over all inputs; raise :class:`OwnerViolation`.

    For every position not held by Alice, the token (and feature row) must be the same for all
    x at fixed y; for every position not held by Bob, the same for all y at fixed x.
    """
    red, problem = reduction, get_problem(problem if problem is not None else reduction.problem)
    x, y = problem.enumerate(n)
    encoded = red.encode(x, y, n)
    batch, owners = encoded.task_batch, encoded.owners
    content = batch.tokens[:, :, None].astype(np.float64)
    if batch.features is not None:
        content = np.concatenate([content, batch.features], axis=2)  # (B, N, 1 + d)
    x_key = np.unique(x.reshape(len(x), -1), axis=0, return_inverse=True)[1].ravel()
    y_key = np.unique(y.reshape(len(y), -1), axis=0, return_inverse=True)[1].ravel()
    for varying, fixed_key, allowed in (("x", y_key, ALICE), ("y", x_key, BOB)):
        positions = np.nonzero(owners != allowed)[0]
        if positions.size == 0:
            continue
        hit = _group_constant(content[:, positions], fixed_key)
        if hit is not None:
            a, b = hit
            pos = positions[np.argmax(np.any(content[a, positions] != content[b, positions], axis=1))]
            raise OwnerViolation(
                f"{red.name}: position {pos} is marked {('public', 'alice', 'bob')[owners[pos]]} but "
                f"changes when only {varying} changes (n = {n}):\n"
                f"  x = {_bits(x[a])}, y = {_fmt_y(y[a])}: {red.task.render(batch.tokens[a], batch.n)}\n"
                f"  x = {_bits(x[b])}, y = {_fmt_y(y[b])}: {red.task.render(batch.tokens[b], batch.n)}\n"
                f"  owners = {describe_owners(owners)}")


def check_reduction(reduction, problem=None, n_max: int = 8, n_random: Sequence[int] | None = (1024,),
                    samples: int = 64, seed: int = 0, owners_n_max: int = 6,
                    chunk: int = 1 << 14) -> CheckReport:
    """Check a reduction exhaustively for n <= ``n_max`` and on random instances at ``n_random``.

    The encodings checked are NumPy's: a reduction has one encoder, and an Array API one
    (``array_api=True``) runs the same code on a device namespace.

    Parameters
    ----------
    reduction : Reduction or dict
        A :class:`Reduction`, or the keyword arguments of :func:`make_reduction`.
    problem : str or Problem, optional
        Defaults to ``reduction.problem``.
    n_max : int
        Every (x, y) for n = min_n .. n_max (4^n pairs for two-string problems).
    n_random : sequence of int or None
        Sizes checked on ``samples`` instances from ``problem.sample`` (balanced answers).
    owners_n_max : int
        The owner mask is checked over all inputs for n <= min(n_max, owners_n_max).
    chunk : int
        Instances per encoded batch (bounds memory).

    Returns
    -------
    CheckReport

    Raises
    ------
    ReductionCounterexample
        At the first (x, y) where the decoded task answer differs from f(x, y).
    OwnerViolation
        When a position's content depends on an input its owner does not hold.
    ReductionCheckError
        On a broken contract: tokens outside the vocabulary, a wrong length, a split that is
        not what it claims.
    """
    red = make_reduction(**reduction) if isinstance(reduction, dict) else reduction
    problem = get_problem(red.problem if problem is None else problem)
    _check_sizes(red, problem, n_max, n_random, samples, seed, owners_n_max, chunk)
    rng = np.random.default_rng(seed)
    sizes = tuple(range(red.min_n, n_max + 1))
    owner_sizes = tuple(n for n in sizes if n <= owners_n_max)
    total = 0
    for n in sizes:
        x, y = problem.enumerate(n)
        for start in range(0, len(x), chunk):
            _first_mismatch(red, problem, x[start:start + chunk], y[start:start + chunk], n)
        total += len(x)
        if n in owner_sizes:
            check_owners(red, problem, n)
    random_sizes = tuple(int(n) for n in (n_random or ()))
    for n in random_sizes:
        x, y = problem.sample(check_size(red.name, n, red.min_n), samples, rng)
        _first_mismatch(red, problem, x, y, n)
    return CheckReport(red.name, problem.name, sizes, total, owner_sizes, random_sizes,
                       samples * len(random_sizes))


def _check_sizes(red, problem, n_max, n_random, samples, seed, owners_n_max, chunk) -> None:
    """The limits of :mod:`commcomp.limits` on check_reduction's sizes, before anything runs.

    The exhaustive part visits every (x, y) at each n <= n_max (4^n pairs for two-string
    problems); at n_max it may hold at most ``MAX_EXHAUSTIVE_INSTANCES`` pairs, the limit of
    ``verify --exhaustive``. The random part draws ``samples`` instances at once at each size.
    """
    check_int("n_max", n_max, 0)
    check_int("owners_n_max", owners_n_max, 0)
    check_int("chunk", chunk, 1)
    samples = check_int("samples", samples, 0, MAX_INSTANCES)
    check_seed(seed)
    if n_max >= red.min_n:
        def pairs(v: int) -> int:
            return 2 ** (problem.alice_input_bits(v) + problem.bob_input_bits(v))

        if pairs(n_max) > MAX_EXHAUSTIVE_INSTANCES:
            largest = largest_within(pairs, red.min_n, n_max, limit=MAX_EXHAUSTIVE_INSTANCES)
            raise TooLargeError(f"n_max = {n_max} is over the limit n_max <= {largest} for {problem.name}: "
                                f"{pairs(n_max)} pairs (x, y) at n = {n_max}, and exhaustive checks stop at "
                                f"{MAX_EXHAUSTIVE_INSTANCES} (2^26)")
    for n in n_random or ():
        n = check_size(red.name, n, red.min_n)
        check_memory("check_reduction", "n", n, lambda v: TOKEN_BYTES * samples * int(red.length(v)),
                     low=red.min_n, detail=f"{samples} instances drawn at once, {TOKEN_BYTES} bytes a token")


# -- defining tasks and reductions in a few lines ---------------------------------------------
@dataclass(frozen=True, eq=False)
class _UserTask(Task):
    """A task made by :func:`make_task`."""

    task_name: str
    vocab: Callable[[int], Sequence[str]]
    length_of: Callable[[int], int]
    truth: Callable
    outputs_of: Callable[[int], Sequence[int]] | None = None
    sampler: Callable | None = None
    user_aliases: tuple[str, ...] = ()
    description: str = ""  # the encoding in words (``commcomp list tasks --wide``, a command's --help)

    @property
    def name(self):  # noqa: D401  (instance-level name for user tasks)
        return self.task_name

    @property
    def aliases(self):
        return self.user_aliases

    def vocabulary(self, n):
        return tuple(self.vocab(self.check_n(n)))

    def length(self, n):
        return int(self.length_of(self.check_n(n)))

    def output_positions(self, n):
        if self.outputs_of is None:
            return super().output_positions(n)
        return np.asarray(self.outputs_of(self.check_n(n)), dtype=np.int64).reshape(-1)

    def ground_truth(self, batch: TaskBatch):
        args = (batch.tokens, batch.n) if len(inspect.signature(self.truth).parameters) >= 2 \
            else (batch.tokens,)
        out = np.asarray(self.truth(*args))
        out = out[:, None] if out.ndim == 1 else out  # (B, K)
        return out.astype(np.int64) if out.dtype == bool else out

    def sample(self, n, batch, rng):
        if self.sampler is None:
            raise InvalidParameterError(f"task {self.task_name!r} was made without a sampler")
        tokens = np.asarray(self.sampler(self.check_n(n), batch, rng))
        b = self.make_batch(n, tokens)
        return b.with_answers(self.ground_truth(b))


def make_task(name: str, *, vocabulary, length: Callable[[int], int], ground_truth: Callable,
              output_positions: Callable[[int], Sequence[int]] | None = None,
              sample: Callable | None = None, aliases: Sequence[str] = (), description: str = "") -> Task:
    """A token-only task from plain functions.

    Parameters
    ----------
    name : str
    vocabulary : sequence of str, or callable ``n -> sequence of str``
        Token names; id t is ``vocabulary[t]``.
    length : callable ``n -> N``
    ground_truth : callable ``tokens -> answers`` (or ``(tokens, n) -> answers``)
        ``tokens`` is ``(B, N)`` int64; answers ``(B,)`` or ``(B, K)``, one per output position.
    output_positions : callable ``n -> positions``, optional
        Default: the last position.
    sample : callable ``(n, batch, rng) -> tokens``, optional
        Enables ``task.sample`` (answers filled in by ``ground_truth``).
    aliases : sequence of str, optional
    description : str, optional
        The token encoding in words (which token means what, where the answer is read), shown by
        ``commcomp list tasks --wide`` and a command's ``--help`` with the task named.
    """
    vocab = vocabulary if callable(vocabulary) else (lambda n, v=tuple(vocabulary): v)
    return _UserTask(name, vocab, length, ground_truth, output_positions, sample, tuple(aliases), str(description))


@dataclass(frozen=True)
class NumpyEncoder:
    """A NumPy-only encoder ``encode(x, y, n)`` as a :class:`Reduction` ``encoder(xp, x, y, n)``
    (``xp`` is always NumPy there: such a reduction has ``array_api=False``)."""

    encode: Callable

    def __call__(self, xp, x, y, n):
        return self.encode(x, y, n)


def make_reduction(task: Task, problem: str, *, encode: Callable, owners, decode: Callable | None = None,
                   read_positions=None, task_size: Callable[[int], int] | None = None,
                   split: str = "prefix-suffix", query_fixed: bool | None = None, name: str | None = None,
                   source: str = "user", section: str = "", tag: str = "[user]", notes: str = "",
                   min_n: int = 1, array_api: bool = False) -> Reduction:
    """A :class:`Reduction` from plain functions.

    Parameters
    ----------
    task : Task
        From :func:`make_task` or the registry.
    problem : str
        A registered problem name (``index``, ``disjointness``, ``equality``, ``inner-product``,
        ``greater-than``) or alias.
    encode : callable ``(x, y, n) -> tokens (B, N)`` or ``TaskBatch``; ``(xp, x, y, n) -> ...`` with ``array_api``
        The reduction's one encoder. By default a NumPy function of int64 arrays x and y.
    owners : sequence or callable ``n -> sequence`` of 0 (public) / 1 (Alice) / 2 (Bob)
    decode : callable ``(outputs, y) -> (B,) bool``, optional
        Default: the first output read as a bit.
    read_positions : callable ``n -> positions``, optional
        Default: the task's output positions.
    query_fixed : bool, optional
        Default: whether every read position is public at n = min_n.
    array_api : bool
        False (default): ``encode(x, y, n)`` is NumPy code; a device run encodes on the host and
        uploads the tokens (and features), counted in :data:`reductions.base.host_encode_fallbacks`.
        True: ``encode(xp, x, y, n)`` uses Array API operations of namespace ``xp`` only (x and y
        arrive as int64 arrays of ``xp``; :mod:`reductions.device_ops` has the pieces), so the same
        function encodes on NumPy and, from the uploaded problem bits only, on a device.
    """
    if split not in SPLIT_KINDS:
        raise InvalidParameterError(f"split must be one of {SPLIT_KINDS}, got {split!r}")
    owners_of = owners if callable(owners) else (lambda n, o=tuple(owners): o)
    size = task_size or (lambda n: n)
    problem_name = get_problem(problem).name
    red = Reduction(
        name=name or f"{problem_name}->{task.name}", problem=problem_name, task=task, split=split,
        source=source, section=section, tag=tag, encoder=encode if array_api else NumpyEncoder(encode),
        owners_of=owners_of,
        decoder=decode or (lambda outputs, y: np.asarray(outputs)[:, 0] != 0),
        read_positions=read_positions, task_size=size, query_fixed=bool(query_fixed),
        notes=notes, min_n=min_n, array_api=bool(array_api))
    if query_fixed is None:
        fixed = bool(np.all(red.owners(min_n)[red.output_positions(min_n)] == PUBLIC))
        red = dataclasses.replace(red, query_fixed=fixed)
    return red
