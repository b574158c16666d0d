"""C5: a 2-layer Transformer for a k-DNF (or k-CNF) with at most N terms (BHBK-kDNF-2TF).

**Task format** (defined here; ``reductions`` has no DNF task): the N input bits, then a
classification token::

    position  0    1   ...  N-1      N
    token     x_0  x_1 ...  x_{N-1}  [CLS]      ids 0, 1, [CLS] = 2; answer f(x) at position N

The formula is fixed in the weights.  A :class:`Formula` has M ≤ N terms; term t is
``(P_t, N_t)``, disjoint sets of variables with ``|P_t| + |N_t| ≤ k``.  DNF:
``f = OR_t (AND_{j∈P_t} x_j AND AND_{j∈N_t} ¬x_j)``.  CNF: ``f = AND_t (OR_{j∈P_t} x_j OR
OR_{j∈N_t} ¬x_j)`` = NOT of the DNF with P and N swapped, which is how it is built.
:meth:`Formula.ground_truth` evaluates the formula directly (the judge).

**Residual** (width ``3m + 8``): BIT (token bit), KEY (m, key code ``K_j ∈ {±1}^m`` of bit j),
QP / QN (m each, term t's two queries at position t), THP, THN (thresholds), TRM (1 at term
positions t < M), AP, AN (head outputs), VIO (MLP output), OUT.  Term t is evaluated at
position t; attention is non-causal (term t reads bits after t).

**Layer 1**, two heads (C7a's dual certificate): ``w⁺_t = K_Pᵀ (K_P K_Pᵀ)⁻¹ 1`` gives
``<w⁺_t, K_j> = 1`` exactly for j ∈ P_t; the largest score elsewhere (the [CLS] key is 0) is
``μ_t < 1`` (certified at build time for every term; ``margin_t = 1 - μ_t``).  The query
``β_t w⁺_t`` with ``β_t = ln((N+1)/λ)/margin_t`` puts equal weights on P_t and ≤ λ/(1+λ) ≤ ε
elsewhere; value = BIT, so ``AP_t = mean_{P_t}(x) ± ε``.  Head − does the same for N_t.
λ = 1/(8k), so ε ≤ 1/(8k).

**MLP 1**: ``VIO = S·ReLU(THP - AP) + S·ReLU(AN - THN)`` with ``THP_t = 1 - 1/(2|P_t|)``,
``THN_t = 1/(2|N_t|)`` (−1 and 2 for an empty set: never violated), S = 8k/3.  Term satisfied:
AP ≥ 1 - ε > THP and AN ≤ ε < THN, so VIO = 0.  Violated: THP - AP ≥ 1/(2|P|) - ε ≥ 3/(8k)
(or the N side likewise), so VIO ≥ 1; always VIO ≤ 2S.

**Layer 2** at [CLS]: query ``(β₂, L)``, key ``(-VIO, TRM - 1)``, value ``TRM - VIO``,
``β₂ = ln(16 S M)``, ``L = ln(16 S (N+1))``.  A satisfied term scores 0 with value 1; violated
terms score ≤ -β₂ with value ≥ 1 - 2S; other positions score ≤ -L with value ≥ -2S.  If some
term is satisfied, OUT ≥ (1 - 1/8 - 1/8)/(1 + 1/4) > 1/2; if none, every value is ≤ 0 and
OUT ≤ 0.  Readout: logits ``(1/2, OUT)`` (DNF) or ``(OUT, 1/2)`` (CNF).  Width O(k log N).

Examples
--------
>>> import numpy as np
>>> f = Formula(4, (((0, 1), ()), ((), (2, 3))))        # (x0 ∧ x1) ∨ (¬x2 ∧ ¬x3)
>>> c = make_dnf(4, "float32", formula=f)
>>> t = f.all_inputs()
>>> bool(np.array_equal(c.predict(t), f.ground_truth(t)))
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .layout import Layout, Weights, build_transformer_model

__all__ = ["Formula", "random_formula", "make_dnf", "make_cnf", "SPECS"]

CLS = 2


@dataclass(frozen=True)
class Formula:
    """A k-DNF / k-CNF over ``n_vars`` bits: ``terms[t] = (P_t, N_t)`` (sorted variable tuples)."""

    n_vars: int
    terms: tuple
    kind: str = "dnf"

    def __post_init__(self):
        if self.kind not in ("dnf", "cnf") or self.n_vars < 1:
            raise InvalidParameterError("formula: kind must be 'dnf' or 'cnf' and n_vars >= 1")
        if not 1 <= len(self.terms) <= self.n_vars:
            raise InvalidParameterError(f"need 1 <= M <= N terms, got {len(self.terms)}")
        for P, Nn in self.terms:
            if set(P) & set(Nn) or any(not 0 <= j < self.n_vars for j in (*P, *Nn)):
                raise InvalidParameterError(f"bad term {(P, Nn)}")

    @property
    def width(self) -> int:
        """k: the largest number of literals in a term."""
        return max(len(P) + len(Nn) for P, Nn in self.terms)

    # the task interface ----------------------------------------------------------------
    def length(self) -> int:
        return self.n_vars + 1

    def output_positions(self):
        return np.array([self.n_vars], dtype=np.int64)

    def ground_truth(self, tokens) -> np.ndarray:
        """``(B, 1)``: the formula evaluated directly on the bits of ``tokens``."""
        t = np.asarray(getattr(tokens, "tokens", tokens))
        x = t[:, :self.n_vars].astype(bool)
        if t.shape[1] != self.n_vars + 1 or np.any(t[:, self.n_vars] != CLS):
            raise InvalidParameterError("k-dnf: expected N bits then [CLS]")
        sat = [np.all(x[:, list(P)], axis=1) & ~np.any(x[:, list(Nn)], axis=1)
               for P, Nn in self.terms]
        if self.kind == "dnf":
            out = np.any(sat, axis=0)
        else:  # clause = OR of its literals
            out = np.all([np.any(x[:, list(P)], axis=1) | ~np.all(x[:, list(Nn)], axis=1)
                          for P, Nn in self.terms], axis=0)
        return out.astype(np.int64)[:, None]

    def tokens(self, bits) -> np.ndarray:
        bits = np.asarray(bits, dtype=np.int64)
        return np.concatenate([bits, np.full((len(bits), 1), CLS, dtype=np.int64)], axis=1)

    def all_inputs(self) -> np.ndarray:
        """Every input: ``2^N`` rows."""
        return self.tokens(np.array(list(itertools.product((0, 1), repeat=self.n_vars))))

    def sample(self, batch: int, rng, steps: int = 200) -> np.ndarray:
        """Random inputs, about half of each answer: the first half makes a random (negated-
        clause) term true; the second half walks (WalkSAT-style, vectorised over the batch) from
        uniform bits, flipping a literal of a satisfied term until none is satisfied."""
        terms = self.terms if self.kind == "dnf" else tuple((Nn, P) for P, Nn in self.terms)
        x = rng.integers(0, 2, size=(batch, self.n_vars))
        half = batch // 2
        for b in range(half):  # a few Python steps per instance of the first half only
            P, Nn = terms[rng.integers(len(terms))]
            x[b, list(P)], x[b, list(Nn)] = 1, 0
        width = max(1, max(len(P) + len(Nn) for P, Nn in terms))
        lits = np.zeros((len(terms), width), dtype=np.int64)  # (M, k) padded literal variables
        count = np.array([len(P) + len(Nn) for P, Nn in terms])  # (M,)
        for t, (P, Nn) in enumerate(terms):
            lits[t, :count[t]] = list(P) + list(Nn)
        rest = np.arange(half, batch)
        for _ in range(steps if len(rest) else 0):
            sat = np.stack([np.all(x[rest][:, list(P)] == 1, axis=1) & np.all(x[rest][:, list(Nn)] == 0, axis=1)
                            for P, Nn in terms], axis=1)  # (b, M)
            live = sat.any(axis=1)
            if not live.any():
                break
            pick = np.argmax(sat * rng.random(sat.shape), axis=1)  # a random satisfied term
            rows, t = rest[live], pick[live]
            has = count[t] > 0  # an empty term stays satisfied: nothing to flip
            j = lits[t, (rng.random(len(t)) * np.maximum(count[t], 1)).astype(np.int64)]
            x[rows[has], j[has]] ^= 1
        return self.tokens(x)


def random_formula(n_vars: int, n_terms: int | None = None, k: int = 3, kind: str = "dnf",
                   seed=0) -> Formula:
    """M = ``n_terms`` (default N) random terms of exactly min(k, N) literals, random signs."""
    rng = np.random.default_rng(seed)
    M = n_vars if n_terms is None else int(n_terms)
    kk = min(int(k), n_vars)
    terms = []
    for _ in range(M):
        var = np.sort(rng.choice(n_vars, size=kk, replace=False))
        sign = rng.integers(0, 2, size=kk).astype(bool)
        terms.append((tuple(int(v) for v in var[sign]), tuple(int(v) for v in var[~sign])))
    return Formula(n_vars, tuple(terms), kind)


def _certificates(K, sets):
    """Dual certificates (C7a): per set S, ``w`` with ``<w, K_j> = 1`` on S (0 for an empty S),
    and ``mu``, the largest score off S, the [CLS] key's 0 included.  Returns ``(W (M, m), mu (M,))``;
    the scores are computed in blocks of sets (``(block, N)`` at a time)."""
    M, (N, m) = len(sets), K.shape
    W = np.zeros((M, m))
    for i, S in enumerate(sets):  # |S| <= k: tiny solves
        if S:
            KS = K[list(S)]  # (|S|, m)
            W[i] = KS.T @ np.linalg.solve(KS @ KS.T, np.ones(len(S)))
    mu = np.zeros(M)
    step = max(1, (1 << 22) // max(1, N))
    for i0 in range(0, M, step):
        scores = W[i0:i0 + step] @ K.T  # (b, N)
        for r, S in enumerate(sets[i0:i0 + step]):
            scores[r, list(S)] = -np.inf
        mu[i0:i0 + step] = np.maximum(0.0, scores.max(axis=1))
    return W, mu


def _make(kind, n, precision, seed, options) -> Construction:
    name = f"k-{kind}-2tf"
    opts = check_options(name, options, ("formula", "k", "terms", "m", "draws"))
    formula = opts.get("formula")
    if formula is None:
        formula = random_formula(n, opts.get("terms"), int(opts.get("k", 3)), kind, seed)
    if formula.n_vars != n or formula.kind != kind:
        raise InvalidParameterError(f"{name}: the formula is a {formula.kind} over {formula.n_vars} "
                                    f"variables, expected a {kind} over {n}")
    k, M, N = max(1, formula.width), len(formula.terms), n
    # the DNF whose OR is computed: for a CNF, the negated clauses (literals swapped)
    terms = formula.terms if kind == "dnf" else tuple((Nn, P) for P, Nn in formula.terms)
    m = int(opts.get("m") or max(k + 1, math.ceil(4 * k * math.log(N + 1))))
    rng = np.random.default_rng(seed)
    best = None
    sets = [S for P, Nn in terms for S in (P, Nn)]  # (P_0, N_0, P_1, N_1, ...)
    draws = int(opts.get("draws", 10 if N <= 1024 else 2))
    for _ in range(draws):  # keep the key draw with the largest margin
        K = np.where(rng.random((N, m)) < 0.5, -1.0, 1.0)  # (N, m)
        try:
            W, mu = _certificates(K, sets)
        except np.linalg.LinAlgError:
            continue
        low = float(np.min(1.0 - mu[[i for i, S in enumerate(sets) if S]], initial=1.0))
        if best is None or low > best[0]:
            best = (low, K, W, mu)
    if best is None:
        raise InvalidParameterError(f"{name}: no key draw of width m = {m} is independent on a term")
    min_margin, K, W, MU = best
    certs = [((W[2 * t], MU[2 * t]), (W[2 * t + 1], MU[2 * t + 1])) for t in range(len(terms))]
    lam = 1.0 / (8 * k)
    S_ = 8.0 * k / 3.0
    lay = Layout()
    bit, key, qp, qn = lay.add("BIT", 1), lay.add("KEY", m), lay.add("QP", m), lay.add("QN", m)
    for nm in ("THP", "THN", "TRM", "AP", "AN", "VIO", "OUT"):
        lay.add(nm, 1)
    thp, thn, trm, ap, an, vio, out = (lay.index(nm) for nm in
                                       ("THP", "THN", "TRM", "AP", "AN", "VIO", "OUT"))
    w = Weights(lay.d, vocab=3, max_len=N + 1, layers=2, heads=2, d_k=m, d_v=1, d_mlp=2, n_out=2)
    p = w.p
    p["tok_emb"][1, bit] = 1.0
    p["pos_emb"][:N, key] = K
    betas = []
    for t, ((P, Nn), ((wp, mup), (wn, mun))) in enumerate(zip(terms, certs)):
        for qblk, wv, mu, S in ((qp, wp, mup, P), (qn, wn, mun, Nn)):
            if S:
                if mu >= 1.0:
                    beta = 0.0  # no margin: this draw cannot select the set (the search sees it fail)
                else:
                    beta = math.log((N + 1) / lam) / (1.0 - mu)
                p["pos_emb"][t, qblk] = beta * wv
                betas.append(beta)
        p["pos_emb"][t, thp] = 1.0 - 1.0 / (2 * len(P)) if P else -1.0
        p["pos_emb"][t, thn] = 1.0 / (2 * len(Nn)) if Nn else 2.0
        p["pos_emb"][t, trm] = 1.0
    for h, (qblk, dst) in enumerate(((qp, ap), (qn, an))):
        p["l0.W_Q"][h, qblk, :] = np.eye(m)
        p["l0.W_K"][h, key, :] = np.eye(m)
        p["l0.W_V"][h, bit, 0] = 1.0
        p["l0.W_O"][h, 0, dst] = 1.0
    W1 = p["l0.mlp.W1"]
    W1[thp, 0], W1[ap, 0] = 1.0, -1.0
    W1[an, 1], W1[thn, 1] = 1.0, -1.0
    p["l0.mlp.W2"][:, vio] = S_
    beta2, L = math.log(16 * S_ * M), math.log(16 * S_ * (N + 1))
    p["l1.b_Q"][0, 0], p["l1.b_Q"][0, 1] = beta2, L
    p["l1.W_K"][0, vio, 0] = -1.0
    p["l1.W_K"][0, trm, 1], p["l1.b_K"][0, 1] = 1.0, -1.0
    p["l1.W_V"][0, trm, 0], p["l1.W_V"][0, vio, 0] = 1.0, -1.0
    p["l1.W_O"][0, 0, out] = 1.0
    yes = 1 if kind == "dnf" else 0  # the class that OUT > 1/2 means
    p["readout.W"][out, yes] = 1.0
    p["readout.b"][1 - yes] = 0.5
    prec = precision_of(precision)
    model = build_transformer_model(w, precision=prec, causal=False)
    report = {"k": k, "terms": M, "m": m, "min_margin": round(min_margin, 6),
              "beta_max": round(max(betas, default=0.0), 6), "lambda": lam, "S": S_,
              "beta2": round(beta2, 6), "L": round(L, 6), "layout": lay.describe()}
    return Construction(name, f"k-{kind}", n, N + 1, model, model.d_model, 2, 2, prec, report,
                        "BHBK-kDNF-2TF", "[A]/[D]", (N,), "bool", 2, task_object=formula)


def make_dnf(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C5 for a k-DNF over n variables.

    Options: ``formula`` (a :class:`Formula`; default :func:`random_formula` with ``terms``
    (M, default n) terms of ``k`` (3) literals, seeded by ``seed``), ``m`` (key width; default
    ⌈4k ln(N+1)⌉), ``draws`` (key draws tried, the one with the largest margin kept; 10, or 2 above N = 1024).
    """
    return _make("dnf", n, precision, seed, options)


def make_cnf(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C5 for a k-CNF (options as :func:`make_dnf`; a given formula must have kind 'cnf')."""
    return _make("cnf", n, precision, seed, options)


def _all_inputs(n: int) -> np.ndarray:
    return Formula(n, (((0,), ()),)).all_inputs()


SPECS = tuple(
    ConstructionSpec(
        f"k-{kind}-2tf", f"k-{kind}", "transformer", 2, "BHBK-kDNF-2TF", "[A]/[D]", builder,
        "3m + 8, m = max(k + 1, ⌈4k ln(N+1)⌉) (certified key codes)",
        f"layer 1: two dual-certificate heads average each term's literals at its position; "
        f"layer 2 at [CLS] finds a {'satisfied term' if kind == 'dnf' else 'falsified clause'}",
        heads=2, width_option="m", exhaustive_max_n=10, inputs=_all_inputs,
        aliases=(f"{kind}", f"k{kind}"))
    for kind, builder in (("dnf", make_dnf), ("cnf", make_cnf))
)
