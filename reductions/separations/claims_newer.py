"""The claims of the newer results (issue 23), as data for the claims table of ``commcomp separations``.

The claims table (``ClaimSpec``, ``CLAIMS``, ``DERIVED``, ``GROUPS`` in ``claim_specs.py``) is being
landed on another branch; these rows carry exactly its fields, so the merge appends them::

    GROUPS.update(NEWER_GROUPS)
    CLAIMS += tuple(ClaimSpec(**row) for row in NEWER_CLAIMS)
    DERIVED += tuple(ClaimSpec(**row) for row in NEWER_DERIVED)

Nothing here is a number: the widths, bounds and crossovers come from the catalogue
(:mod:`commcomp.bounds.newer`) and the construction registry, as for every other claim.

Examples
--------
>>> [row["claim"] for row in NEWER_CLAIMS]
['depth-IH']
>>> sorted({row["task"] for row in NEWER_CLAIMS + NEWER_DERIVED})
['copy', 'function-composition', 'induction-heads']
"""

from __future__ import annotations

__all__ = ["NEWER_GROUPS", "NEWER_CLAIMS", "NEWER_DERIVED", "FIELDS"]

#: The fields of a ClaimSpec, in order (a test checks every row has exactly these, with defaults).
FIELDS = ("claim", "group", "statement", "source", "asymptotic", "task", "weak_arch", "weak_layers",
          "strong_arch", "strong_layers", "construction", "beside_bound", "q", "missing", "cot")

NEWER_GROUPS = {"newer": "Newer results: induction heads, function composition, copying"}


def _row(claim, group, statement, source, asymptotic, task, weak_arch, weak_layers, strong_arch,
         strong_layers, construction, *, beside_bound=None, missing=""):
    return dict(claim=claim, group=group, statement=statement, source=source, asymptotic=asymptotic,
                task=task, weak_arch=weak_arch, weak_layers=weak_layers, strong_arch=strong_arch,
                strong_layers=strong_layers, construction=construction, beside_bound=beside_bound, q=None,
                missing=missing, cot=False)


NEWER_CLAIMS: tuple[dict, ...] = (
    _row("depth-IH", "newer",
         "Induction heads: 2 layers beat 1 (a 1-layer Transformer needs hmp = Omega(N); 2 layers of log "
         "width suffice)", "SHT24-IH-1TF vs SHT24-IH-2TF (COMMCOMP-IH-1TF vs COMMCOMP-IH-2TF)",
         "Omega(N/(p + log N)) vs O(log N)", "induction-heads", "transformer", 1, "transformer", 2,
         "induction-heads-2tf"),
)

NEWER_DERIVED: tuple[dict, ...] = (
    _row("derived-IH-RNN", "derived",
         "Induction heads: recurrent models need linear state (INDEX, Bob's marker last)",
         "COMMCOMP-IH-RNN", "Omega(N/p) (lower bound only)", "induction-heads", "elman", 1, None, None, None),
    _row("derived-FC-1TF", "derived",
         "Function composition: one layer cannot compose unless H(m + 1)p >= n log n (PNP); commcomp's "
         "exact INDEX row beside it", "PNP-FC-1TF, COMMCOMP-FC-1TF", "Omega(n log n / p) (lower bound only)",
         "function-composition", "transformer", 1, None, None, None, beside_bound="PNP-FC-1TF",
         missing="no explicit 2-layer composition weights"),
    _row("derived-FC-split", "derived",
         "Function evaluation, inputs and values at different positions: a second partition (Bob the "
         "input tokens, Alice the values) binds 1 layer; the pairs layout has none (Strobl et al.)",
         "SAF-FE-split-1TF beside PNP-FC-1TF", "Omega(N/(p + log N)) (lower bound only)",
         "function-composition", "transformer", 1, None, None, None, beside_bound="SAF-FE-split-1TF"),
    _row("derived-copy-RNN", "derived",
         "Copying: a fixed-state model needs L log2|D| bits to copy (error >= 1 - |S|/|D|^L); a 2-layer "
         "Transformer copies (JBKM)", "JBKM-copy-GSSM vs JBKM-copy-2TF", "Omega(N/p) vs O(log N) [statement]",
         "copy", "elman", 1, None, None, None, missing="no explicit 2-layer copy weights"),
)
