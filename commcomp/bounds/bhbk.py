"""BHBK catalogue (theorems.md §4): Bhattamishra, Hahn, Blunsom, Kanade, NeurIPS 2024.

Reference rows keep their ids.  Where the paper states only a shape ("linear size", O(log N)) and commcomp
has an explicit constant from the same argument, the row carries the explicit formula (tag ``[D]`` or
``[D✓]``) and ``paper_form`` keeps the paper's words.  Randomized forms get their own ``-rand`` rows.

Counting convention (a judgement, see ``commcomp.bounds`` docs): a protocol in which only Bob learns the
answer must send at least ``D(f) - 1`` bits, and a one-way message at least ``D^{A->B}(f)``; for EQ_n and
DISJ_n both are ``n`` (the reference's ``n + 1`` counts Bob's output bit).

Examples
--------
>>> from commcomp.bounds.bhbk import BHBK_BOUNDS
>>> next(b for b in BHBK_BOUNDS if b.id == "BHBK-IL-RNN").relation_text()
'S(m)*p >= N'
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.records import (
    H2, N, Bound, C, c, delta, depth, eps, floor_div, gamma, k, log2, n, p, sigma, times, types,
)

__all__ = ["BHBK_BOUNDS", "jl_dim_expr", "dyck_dfa_states_expr"]

_bound = functools.partial(Bound, paper="BHBK")

k_jl = sp.Symbol("k_JL", positive=True, integer=True)
k_vec = sp.Symbol("k_x", positive=True, integer=True)   #: JL dimension of NN's vectors / MQAR's keys (n of them)
d_sum = sp.Symbol("d", nonnegative=True, integer=True)


def jl_dim_expr(count: sp.Expr) -> sp.Expr:
    """JL dimension for ``count`` vectors: ``ceil((4 ln count + 2 ln(1/delta)) / gamma**2)`` (C1, [D✓]).

    Examples
    --------
    >>> jl_dim_expr(N).subs({N: 400, gamma: sp.Rational(1, 2), delta: sp.Rational(1, 2)})
    102
    """
    return sp.ceiling((4 * sp.log(count) + 2 * sp.log(1 / delta)) / gamma**2)


def dyck_dfa_states_expr() -> sp.Expr:
    """States of the minimal DFA of Dyck-(t, D): ``sum_{d=0..D} t**d + 1`` (C6, [D✓]).

    Examples
    --------
    >>> dyck_dfa_states_expr().subs({types: 2, depth: 2}).doit()
    8
    """
    return sp.Sum(types**d_sum, (d_sum, 0, depth)) + 1


_N_STRING = (n, floor_div(N - 1, 2))   # x (n), separator / output token, y (n): N = 2n + 1
_LOG_NOTE = "log read as log2 (the paper writes log N without a base [R])"
_ONE_WAY = "prefix/suffix one-way"
_JL_CONDS = (gamma < 1, delta < 1)

BHBK_BOUNDS: tuple[Bound, ...] = (
    # ---------------------------------------------------------------- §4.1 lower bounds
    _bound(id="BHBK-IL-RNN", task="index-lookup", problem="index", split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", randomized=False, formula=N,
           assumptions="N symbols s_1..s_N over a binary alphabet, then the query token; m = total state "
                       "numbers over all layers; Alice = prefix, Bob = the query",
           source="Index Lookup lower bound", tags=("[S]", "[A]", "[P]"), paper_form="m >= N/p",
           evidence="S",
           status="formula from the published summary [S] (in the rebuttal m >= N/p is the reviewer's "
                  "sentence; the authors write Omega(N) [A]); linear size [P]",
           section="§4.1"),
    _bound(id="BHBK-IL-RNN-rand", task="index-lookup", problem="index", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=True,
           formula=(1 - H2(eps)) * N, conditions=(eps < sp.Rational(1, 2),),
           assumptions="error probability epsilon < 1/2; via R^{A->B}_eps(INDEX_N) >= (1 - H2(eps)) N "
                       "(Kremer, Nisan, Ron)", source="Index Lookup, randomized form", tags=("[D]",),
           ref_id="BHBK-IL-RNN", section="§4.1, §2 CC-INDEX"),
    _bound(id="BHBK-IL-RNN-alphabet", task="index-lookup", problem="index", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False,
           formula=N * log2(sigma), conditions=(sigma >= 2,),
           assumptions="alphabet of size sigma (Alice's input is N symbols, N log2 sigma bits)",
           source="Index Lookup over an alphabet", tags=("[D]",), ref_id="BHBK-IL-RNN",
           variant="general alphabet", section="§4.1"),
    _bound(id="BHBK-MIL-RNN", task="multi-index-lookup", problem="disjointness", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=k,
           definitions=((k, floor_div(N, 2)),),
           assumptions="input p_1..p_k, s_1..s_N, p_1..p_k with k = Theta(N) indices (default k = N/2); "
                       "Alice writes a into s_1..s_k and sends the state, Bob feeds p_1..p_k, reads a, "
                       "decides DISJ_k; D^{A->B}(DISJ_k) = k (the reference's k + 1 counts Bob's output)",
           source="Multi-Index Lookup lower bound (rebuttal)", tags=("[A]", "[D]"),
           paper_form="mp = Omega(N), even with the indices prepended",
           status="[A], planned for the next version; camera-ready unverified", section="§4.1, §8.8"),
    _bound(id="BHBK-MIL-RNN-rand", task="multi-index-lookup", problem="disjointness", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=True, formula=c * k,
           definitions=((k, floor_div(N, 2)),), assumptions="R(DISJ_k) = Theta(k)",
           source="Multi-Index Lookup, randomized", tags=("[A]", "[D]"), ref_id="BHBK-MIL-RNN",
           section="§4.1"),
    _bound(id="BHBK-Dyck-1TF", task="dyck", problem=None, split="partition (unverified), two-round",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width", randomized=False,
           formula=(N - 1) / (times(3, p + log2(N))), conditions=(types >= 2, depth >= 2),
           assumptions=f"Dyck-(2,2) recognition, H heads, width m; {_LOG_NOTE}; the embedded problem and "
                       "split are unverified (commcomp's own reduction: COMMCOMP-DYCK22-1TF-*)",
           source="bounded Dyck, 1-layer Transformer", tags=("[S]", "[P]"),
           paper_form="mH >= (N - 1) / (3 (p + log N))", status="formula [S]; linear size [P]",
           section="§4.1"),
    _bound(id="BHBK-EQ-RNN", task="string-equality", problem="equality", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=n,
           definitions=(_N_STRING,),
           assumptions="deterministic models only (R^priv(EQ_n) = O(log n)); D^{A->B}(EQ_n) = n",
           source="String Equality, recurrent", tags=("[P]", "[D]"), paper_form="linear size",
           status="shape [P]; constant [D]", section="§4.1, §8.5"),
    _bound(id="BHBK-DISJ-RNN", task="string-disjointness", problem="disjointness", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=n,
           definitions=(_N_STRING,), assumptions="D^{A->B}(DISJ_n) = n",
           source="Disjointness, recurrent", tags=("[P]", "[D]"), paper_form="linear size",
           status="shape [P]; constant [D]", section="§4.1, §8.5"),
    _bound(id="BHBK-DISJ-RNN-rand", task="string-disjointness", problem="disjointness", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=True, formula=c * n,
           definitions=(_N_STRING,), assumptions="R_eps(DISJ_n) = Theta(n) (Kalyanasundaram-Schnitger, "
                                                 "Razborov)", source="Disjointness, randomized",
           tags=("[P]", "[D]"), ref_id="BHBK-DISJ-RNN", section="§4.1"),
    *(
        _bound(id=f"BHBK-{short}-1TF{suffix}", task=task, problem=problem, split=split,
               arch_class="transformer-1layer", kind="lower", quantity=quantity, randomized=randomized,
               formula=formula, definitions=(_N_STRING,), assumptions=f"{text}; {note}",
               source=f"{task}, 1-layer Transformer", tags=("[P]", "[D]"), paper_form="linear size",
               ref_id=None if not suffix else f"BHBK-{short}-1TF", status="shape [P]; constants [D]",
               section="§4.1, §8.3, §8.5")
        for short, task, problem, text in (
            ("EQ", "string-equality", "equality", "deterministic models only"),
            ("DISJ", "string-disjointness", "disjointness", "D(DISJ_n) - 1 = D^{A->B}(DISJ_n) = n"))
        for suffix, split, quantity, formula, randomized, note in (
            ("", "partition one-way (Alice = x, Bob = y + output token)", "heads_times_width_plus_1",
             n / (p + sp.ceiling(log2(N))), False,
             "N = 2n + 1, output token fixed and Bob's: H(m+1)(p + ceil(log2 N)) >= n"),
            ("-2R", "partition two-round (query depends on Bob's tokens)", "heads_times_width",
             n / (times(3, p + log2(N))), False, "N = 2n + 1: 3 m H (p + log2 N) >= n"),
            ("-rand", "partition one-way (Alice = x, Bob = y + output token)", "heads_times_width_plus_1",
             c * n / (p + sp.ceiling(log2(N))), True, "R(DISJ_n) = Theta(n)"))
        if short == "DISJ" or not randomized
    ),
    _bound(id="BHBK-NN-RNN", task="nearest-neighbour", problem="index", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=N / 2,
           assumptions="x_1, y_1, ..., x_n, y_n, x_q, N ~ 2n tokens: the paper's form as the summary states "
                       "it; the exact count of the reduction (n = (N - 1)/2 labels are Alice's bits) is "
                       "commcomp's COMMCOMP-NN-RNN, shown beside it",
           source="Nearest Neighbour, recurrent", tags=("[S]", "[P]"), paper_form="m >= N/(2p)",
           status="shape [P]; the summary's N/(2p) [S]; the exact count (N - 1)/2: COMMCOMP-NN-RNN [D]",
           evidence="S",
           section="§4.1"),
    _bound(id="BHBK-NN-RNN-rand", task="nearest-neighbour", problem="index", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=True,
           formula=(1 - H2(eps)) * n, definitions=(_N_STRING,), conditions=(eps < sp.Rational(1, 2),),
           assumptions="N = 2n + 1 tokens; via CC-INDEX randomized", source="Nearest Neighbour, randomized",
           tags=("[D]",), ref_id="BHBK-NN-RNN", section="§4.1, §8.4"),
    _bound(id="BHBK-MQAR-RNN", task="mqar", problem="index", split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", randomized=False, formula=n, definitions=(_N_STRING,),
           assumptions="k_1 v_1 ... k_n v_n then one query (N = 2n + 1); keys fixed, values = Alice's "
                       "bits, Bob's query key = his index", source="MQAR, recurrent",
           tags=("[A]", "[R]", "[D]"), paper_form="Omega(N/p)",
           status="NN is 'the general version' [A]; exact MQAR statement [R]", section="§4.1"),
    _bound(id="BHBK-MQAR-RNN-rand", task="mqar", problem="index", split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", randomized=True, formula=(1 - H2(eps)) * n,
           definitions=(_N_STRING,), conditions=(eps < sp.Rational(1, 2),),
           assumptions="one query, via CC-INDEX randomized", source="MQAR, randomized", tags=("[D]",),
           ref_id="BHBK-MQAR-RNN", section="§4.1"),
    _bound(id="BHBK-Bool-LB-RNN", task=None, problem=None, split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", randomized=False, formula=C,
           assumptions="C = D^{A->B}(f) for the prefix/suffix split; most Boolean f have C ~ N",
           source="any Boolean function", tags=("[A]", "[D]"), ref_id="BHBK-Bool-LB", section="§4.1"),
    _bound(id="BHBK-Bool-LB-1TF-1W", task=None, problem=None,
           split="partition one-way (output token Bob's and fixed)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width_plus_1", randomized=False,
           formula=C / (p + sp.ceiling(log2(N))),
           assumptions="C = D^{A->B}(f); partial softmax sums of <= N terms fit in p + ceil(log2 N) bits",
           source="any Boolean function, 1-layer one-way", tags=("[A]", "[D]"), ref_id="BHBK-Bool-LB",
           section="§4.1, §8.3"),
    _bound(id="BHBK-Bool-LB-1TF-2R", task=None, problem=None, split="partition two-round",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width", randomized=False,
           formula=C / (times(3, p + log2(N))),
           assumptions="C = bits Bob must receive under the split (D(f) - 1); cost H m p + H(m+1)(p + "
                       "ceil(log2 N)) <= 3 m H (p + log2 N)", source="any Boolean function, 1-layer two-round",
           tags=("[A]", "[D]"), ref_id="BHBK-Bool-LB", section="§4.1, §8.3"),
    _bound(id="BHBK-IP2-avg-RNN", task=None, problem="inner-product", split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", randomized=True, formula=c * n,
           assumptions="low error under the uniform distribution; disc(IP2) <= 2^(-n/2): advantage delta "
                       "needs >= n/2 - log2(1/delta) - O(1) bits", source="IP2 average case",
           tags=("[A]", "[D]"), ref_id="BHBK-IP2-avg", status="announced for the next version [A]",
           section="§4.1"),
    _bound(id="BHBK-IP2-avg-1TF", task=None, problem="inner-product", split="partition one-way",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width_plus_1",
           randomized=True, formula=c * n / (p + sp.ceiling(log2(N))),
           assumptions="as BHBK-IP2-avg-RNN, through the one-way 1-layer simulation",
           source="IP2 average case, 1-layer", tags=("[A]", "[D]"), ref_id="BHBK-IP2-avg", section="§4.1"),
    # ---------------------------------------------------------------- §4.2 upper bounds and constructions
    _bound(id="BHBK-IL-order", task="index-lookup", problem=None, split=None, arch_class="recurrent",
           kind="upper", quantity="state_bits", randomized=False,
           formula=sp.ceiling(log2(N)) + sp.ceiling(log2(N + 1)) + sp.ceiling(log2(sigma)),
           assumptions="index FIRST (p, s_1..s_N): store p, count positions, copy s_p; sigma = alphabet",
           source="Index Lookup with the index first", tags=("[A]", "[D]"), paper_form="O(log N)",
           variant="index first", section="§4.1"),
    _bound(id="BHBK-JL", task=None, problem=None, split=None, arch_class="protocol", kind="upper",
           quantity="jl_dim", randomized=True, formula=jl_dim_expr(N), conditions=_JL_CONDS,
           assumptions="N random +-1/sqrt(k) vectors have all off-diagonal |<u, v>| <= gamma with "
                       "probability >= 1 - delta (Hoeffding + union bound); C1",
           source="nearly orthogonal vectors", tags=("[P]", "[D✓]"), paper_form="O(log N)",
           status="O(log N) [P]; constant [D✓]; the paper's gamma (1/4?) [R]", section="§4.2, §7 C1"),
    _bound(id="BHBK-IL-1TF", task="index-lookup", problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="width", randomized=False, formula=sigma + 2 * k_jl + 1,
           definitions=((k_jl, jl_dim_expr(N)),), conditions=_JL_CONDS,
           assumptions="C2: one head, residual [onehot(s) ; POS ; QRY ; flag]; beta from "
                       "COMMCOMP-C2-beta; precision O(log N)", source="Index Lookup construction C2",
           tags=("[P]", "[R]", "[D✓]"), paper_form="width O(log N) (asymptotic, constant unknown)",
           section="§4.2, §7 C2"),
    _bound(id="BHBK-MIL-1TF", task="multi-index-lookup", problem=None, split=None,
           arch_class="transformer-1layer", kind="upper", quantity="width", randomized=False,
           formula=sigma + 2 * k_jl + 1, definitions=((k_jl, jl_dim_expr(N)),), conditions=_JL_CONDS,
           assumptions="C2 applied at every trailing query token (query tokens have key 0)",
           source="Multi-Index Lookup construction", tags=("[A]", "[D]"), paper_form="poly-log size",
           section="§4.2"),
    _bound(id="BHBK-Dyck-RNN", task="dyck", problem=None, split=None, arch_class="recurrent", kind="upper",
           quantity="state_bits", randomized=False, formula=sp.ceiling(log2(sp.Symbol("S_DFA"))),
           definitions=((sp.Symbol("S_DFA"), dyck_dfa_states_expr()),),
           assumptions="Dyck-(t, D) (default (2,2), 8 states); C6: abstract RNN h_t = g(h_{t-1}, x_t) "
                       "with one-hot state (m = 8 at p = 1) or m = 1 at p = 3; a concrete cell may need more "
                       "(Elman: COMMCOMP-Dyck-Elman). Only for cells whose transition can be an arbitrary "
                       "function (Elman, LSTM, GRU); not for 1-layer linear attention, RetNet or DSS, whose "
                       "final state is a sum over positions (COMMCOMP-DYCK22-SUM-1L)",
           source="bounded Dyck DFA, C6", tags=("[P]", "[D✓]"), paper_form="constant size",
           archs=("elman", "lstm", "gru"), section="§4.2, §7 C6"),
    _bound(id="BHBK-Dyck-2TF", task="dyck", problem=None, split=None, arch_class="transformer-2layer",
           kind="upper", quantity="width", randomized=False, formula=c * log2(N),
           assumptions="construction probably Yao et al. 2021 [R]", source="bounded Dyck, 2 layers",
           tags=("[A]", "[R]"), paper_form="log width", section="§4.2"),
    _bound(id="COMMCOMP-Dyck-2TF", task="dyck", problem=None, split=None, arch_class="transformer-2layer",
           kind="upper", quantity="width", randomized=False, formula=2 * sp.ceiling(log2(N)) + 17,
           conditions=(N >= 3,),
           assumptions="commcomp's dyck-2tf for Dyck-(2,2): two binary position codes (previous-token and "
                       "recency heads, exact integer scores), 9 ReLU flags, [CLS] detects a flag; 2 heads in "
                       "layer 1; verified over every input to N = 7 and at bfloat16 on samples",
           source="models/constructions/dyck_2tf.py", tags=("[D✓]",), paper_form="log width (BHBK-Dyck-2TF)",
           section="§4.2"),
    _bound(id="BHBK-EQ-2TF", task="string-equality", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width", randomized=False,
           formula=2 * k_jl + 5, definitions=(_N_STRING, (k_jl, jl_dim_expr(n))),
           conditions=_JL_CONDS + (N >= 3, p >= log2(N) + 2),
           assumptions="C3: N = 2n + 1, one head per layer; O(1) = 5 channels in commcomp's layout "
                       "(flag_x, flag_y, b, r, e); needs p >= log2(N) + 2", source="Equality construction C3",
           tags=("[P]", "[R]", "[D✓]"), paper_form="width O(log N) (asymptotic, constant unknown)",
           section="§4.2, §7 C3"),
    _bound(id="BHBK-DISJ-2TF", task="string-disjointness", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width", randomized=False,
           formula=2 * k_jl + 5, definitions=(_N_STRING, (k_jl, jl_dim_expr(n))),
           conditions=_JL_CONDS + (N >= 3, p >= log2(N) + 2),
           assumptions="C3 with the DISJ MLP; as BHBK-EQ-2TF", source="Disjointness construction C3",
           tags=("[P]", "[R]", "[D✓]"), paper_form="width O(log N) (asymptotic, constant unknown)",
           section="§4.2, §7 C3"),
    _bound(id="BHBK-NN-2TF", task="nearest-neighbour", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width", randomized=False,
           formula=k_vec + 2 * k_jl + 3, definitions=(_N_STRING, (k_vec, jl_dim_expr(n)), (k_jl, jl_dim_expr(N))),
           conditions=_JL_CONDS + (N >= 3,),
           assumptions="C4 with inputs x_i the n JL vectors of the reduction (d = k_JL(n), margin >= 1 - gamma) "
                       "and a positional vector for every one of the N tokens (k = k_JL(N), two blocks: own "
                       "and previous position); width d + 2k + 3 (flag, label, bias: commcomp's count)",
           source="Nearest Neighbour construction C4", tags=("[P]", "[R]", "[D]"),
           paper_form="log size (asymptotic, constant unknown)", section="§4.2, §7 C4"),
    _bound(id="BHBK-MQAR-2TF", task="mqar", problem=None, split=None, arch_class="transformer-2layer",
           kind="upper", quantity="width", randomized=False, formula=k_vec + 2 * k_jl + 3,
           definitions=(_N_STRING, (k_vec, jl_dim_expr(n)), (k_jl, jl_dim_expr(N))),
           conditions=_JL_CONDS + (N >= 3,),
           assumptions="C4 with exact key match (n JL keys, k_JL(n)) and a positional vector for every token "
                       "(k_JL(N), own and previous position); one layer cannot do it in the k, v format",
           source="MQAR as exact-match NN", tags=("[R]", "[D]"), paper_form="O(log N) width", section="§4.2"),
    _bound(id="BHBK-kDNF-2TF", task=None, problem=None, split=None, arch_class="transformer-2layer",
           kind="upper", quantity="width", randomized=False, formula=c * k * log2(N),
           assumptions="k-DNF / k-CNF with at most N terms (k literals per term); C5, two heads",
           source="k-DNF construction C5", tags=("[A]", "[D]"), paper_form="poly-log size", section="§4.2"),
    _bound(id="BHBK-F3", task=None, problem=None, split=None, arch_class="transformer", kind="upper",
           quantity="statement", randomized=False, formula=None,
           assumptions="the only construction that needs non-causal attention", source="§F.3 general class",
           tags=("[A]",), paper_form="statement unknown", section="§4.2"),
    _bound(id="BHBK-depth-sep", task=None, problem=None, split=None, arch_class="transformer",
           kind="separation", quantity="statement", randomized=False, formula=None,
           assumptions="Equality, Disjointness, Dyck: 1 layer needs linear width, 2 layers log width",
           source="1- vs 2-layer depth separation", tags=("[A]",),
           paper_form="first exponential depth separation between 1- and 2-layer Transformers",
           section="§4.2"),
)
