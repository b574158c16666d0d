"""The default run's schedule: the ladders and the claims in one pool of worker processes.

:func:`ladders_and_claims` gives what :func:`.rows.separation_ladders` followed by
:func:`.claims.evaluate_claims` give (the same ladders and lines, in the same order: each job is
seeded and independent of where it runs), but it does not wait for the last ladder before the first
claim: the claims that read no ladder (qSA's, which builds its own weights, the average-case and
read-twice lines) start first, and each other claim starts as soon as the ladder it reads is built.
Otherwise the pool's last ladder runs alone on one core while the other waits, and then the claims
run while no ladder does (``benchmarks/bench_separations.py``, ``--workers``).

Examples
--------
>>> ladders, claims, derived = ladders_and_claims(["index-lookup"], "bfloat16", samples=8, budget=256,
...                                               check_max_length=400, workers=1)
>>> [lad.separation.label for lad in ladders], [c.spec.claim for c in claims]
(['IL elman<tf1', 'IL elman<hybrid'], ['retrieval-IL', 'wdl-hybrid'])
>>> claims[0].verdict, claims[0].crossover_N
('shown', 321)
"""

from __future__ import annotations

from concurrent.futures import as_completed
from typing import Callable

from .claims import claim_jobs, reads_a_ladder, separation_for, split_claims
from .rows import DEFAULT_CHECK_MAX_LENGTH, DEFAULT_PRECISION, can_fork, ladder_jobs, resolve_workers, worker_pool


def ladders_and_claims(tasks=None, precision=DEFAULT_PRECISION, *, heads: int = 1, sizes=None, weak=None,
                       samples: int = 32, budget: int = 1024, weak_width: int = 1, weights: str = "random",
                       seed: int = 0, max_n: int = 1 << 16, check_max_length: int = DEFAULT_CHECK_MAX_LENGTH,
                       check_all: bool = False, progress: Callable[[str], None] | None = None,
                       workers: int | None = None):
    """``(ladders, claims, derived)``: :func:`.rows.separation_ladders` and then
    :func:`.claims.evaluate_claims` with these parameters (theirs), scheduled together (module
    docstring).  ``progress`` gets each ladder's label, in the ladders' order."""
    workers = resolve_workers(workers)
    seps, one_ladder = ladder_jobs(tasks, precision, heads=heads, sizes=sizes, weak=weak, samples=samples,
                                   budget=budget, weak_width=weak_width, weights=weights, seed=seed, max_n=max_n,
                                   check_max_length=check_max_length, check_all=check_all)
    specs, one_claim = claim_jobs(precision, tasks=tasks, heads=heads, samples=samples, budget=budget,
                                  weak_width=weak_width, weights=weights, seed=seed,
                                  check_max_length=check_max_length)
    # the ladder each claim reads (None: none), found as evaluate_claims finds it among all ladders
    reads = [separation_for(spec, seps) if reads_a_ladder(spec) else None for spec in specs]
    if workers <= 1 or len(seps) + len(specs) <= 1 or not can_fork():
        ladders = []
        for sep in seps:
            ladders.append(one_ladder(sep))
            if progress is not None:
                progress(ladders[-1].separation.label)
        return (ladders, *split_claims(specs, [one_claim(spec, ladders=ladders) for spec in specs]))

    ladders: list = [None] * len(seps)
    claim_futures: dict[int, object] = {}
    with worker_pool(workers) as pool:
        for i, spec in enumerate(specs):  # the lines that read no ladder: at once
            if reads[i] is None:
                claim_futures[i] = pool.submit(one_claim, spec, ladders=[])
        ladder_futures = {pool.submit(one_ladder, sep): j for j, sep in enumerate(seps)}
        reported = 0
        for future in as_completed(ladder_futures):
            j = ladder_futures[future]
            ladders[j] = future.result()
            for i, spec in enumerate(specs):  # the lines that read this ladder: as soon as it is built
                if reads[i] == j:
                    claim_futures[i] = pool.submit(one_claim, spec, ladders=[ladders[j]])
            while reported < len(ladders) and ladders[reported] is not None:
                if progress is not None:
                    progress(ladders[reported].separation.label)
                reported += 1
        results = [claim_futures[i].result() for i in range(len(specs))]
    return (ladders, *split_claims(specs, results))
