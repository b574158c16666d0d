"""Index Lookup with the index first (BHBK §4.1): p, s_0 ... s_{n-1}; the answer s_p at the end.

With the query last (:mod:`.index_lookup`) an RNN must carry all n symbols (BHBK-IL-RNN); with it
first, 4 numbers of ``ceil(log2 n) + 1`` bits suffice (the ``index-first-rnn`` construction in
:mod:`models.constructions.index_first_rnn`, judged by this task).  No two-party problem embeds in
it with Alice's part first and Bob's last, so it has no reduction: it is registered as a task
(:data:`reductions.registry.EXTRA_TASKS`) for the constructions and the CLI.
"""

from __future__ import annotations

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import balanced_labels

__all__ = ["index_first_task"]


def index_first_task(alphabet: int = 2):
    """The index-first Index Lookup task (built with :func:`reductions.check.make_task`).

    Vocabulary as Index Lookup's (symbols, then ``p0 .. p{n-1}``); N = n + 1; the answer, read
    at the last position, is ``s_p`` with p the query token at position 0.  The sampler draws
    uniform symbols and query and balances the answer.

    Examples
    --------
    >>> import numpy as np
    >>> task = index_first_task()
    >>> task.name, task.length(4), task.vocabulary(2)
    ('index-first-lookup', 5, ('0', '1', 'p0', 'p1'))
    >>> task.ground_truth(task.make_batch(4, np.array([[2 + 1, 0, 1, 0, 0]]))).tolist()
    [[1]]
    """
    from ..check import make_task  # reductions.check imports the task registry: at call time

    A = int(alphabet)
    if A < 2:
        raise InvalidParameterError(f"index-first-lookup: alphabet must be >= 2, got {A}")

    def vocabulary(n):
        return tuple(str(a) for a in range(A)) + tuple(f"p{p}" for p in range(n))

    def ground_truth(tokens, n):
        p = tokens[:, 0] - A  # (B,)
        if np.any((p < 0) | (p >= n)) or np.any(tokens[:, 1:] >= A):
            raise InvalidParameterError("index-first-lookup: token 0 must be a query, the rest symbols")
        return tokens[np.arange(tokens.shape[0]), 1 + p]  # (B,)

    def sample(n, batch, rng):
        symbols = rng.integers(0, A, size=(batch, n), dtype=np.int64)  # (B, n)
        query = rng.integers(0, n, size=batch, dtype=np.int64)  # (B,)
        symbols[np.arange(batch), query] = balanced_labels(batch, A, rng)
        return np.concatenate([(A + query)[:, None], symbols], axis=1)  # (B, n + 1)

    return make_task("index-first-lookup", vocabulary=vocabulary, length=lambda n: n + 1,
                     ground_truth=ground_truth, sample=sample, aliases=("il-first",),
                     description=f"Index Lookup with the index first: position 0 holds the query token p (id "
                                 f"{A} + p, named p<p>), positions 1 .. n the symbols s_0 .. s_(n-1) (ids 0 .. "
                                 f"{A - 1}); N = n + 1 and the answer s_p is read at the last position.")
