"""The claims of the newer results (issue 23), as data for the claims table of ``commcomp separations``.

These rows carry exactly the fields of ``ClaimSpec`` (``claim_specs.py``), which appends them::

    GROUPS.update(NEWER_GROUPS)
    CLAIMS += tuple(ClaimSpec(**row) for row in NEWER_CLAIMS)
    DERIVED += tuple(ClaimSpec(**row) for row in NEWER_DERIVED)

Nothing here is a number: the widths, bounds and crossovers come from the catalogue
(:mod:`commcomp.bounds.newer`) and the construction registry, as for every other claim.

Examples
--------
>>> [row["claim"] for row in NEWER_CLAIMS]
['depth-IH', 'newer-IH-RNN', 'depth-FC', 'newer-FC-RNN', 'newer-copy-RNN']
>>> sorted({row["task"] for row in NEWER_CLAIMS + NEWER_DERIVED})
['copy', 'function-composition', 'induction-heads']
"""

from __future__ import annotations

__all__ = ["NEWER_GROUPS", "NEWER_CLAIMS", "NEWER_DERIVED", "FIELDS"]

#: The fields of a ClaimSpec, in order (a test checks every row has exactly these, with defaults).
FIELDS = ("claim", "group", "statement", "source", "asymptotic", "task", "weak_arch", "weak_layers",
          "strong_arch", "strong_layers", "construction", "beside_bound", "q", "missing", "cot", "problem")

NEWER_GROUPS = {"newer": "Newer results: induction heads, function composition, copying"}


def _row(claim, group, statement, source, asymptotic, task, weak_arch, weak_layers, strong_arch,
         strong_layers, construction, *, beside_bound=None, missing="", problem=None):
    return dict(claim=claim, group=group, statement=statement, source=source, asymptotic=asymptotic,
                task=task, weak_arch=weak_arch, weak_layers=weak_layers, strong_arch=strong_arch,
                strong_layers=strong_layers, construction=construction, beside_bound=beside_bound, q=None,
                missing=missing, cot=False, problem=problem)


NEWER_CLAIMS: tuple[dict, ...] = (
    _row("depth-IH", "newer",
         "Induction heads: 2 layers beat 1 (a 1-layer Transformer needs hmp = Omega(N); 2 layers of log "
         "width suffice)", "SHT24-IH-1TF vs SHT24-IH-2TF (COMMCOMP-IH-1TF vs COMMCOMP-IH-2TF)",
         "Omega(N/(p + log N)) vs O(log N)", "induction-heads", "transformer", 1, "transformer", 2,
         "induction-heads-2tf"),
    _row("newer-IH-RNN", "newer",
         "Induction heads: recurrent models need linear state (INDEX, Bob's marker last); 2 layers of log "
         "width suffice", "COMMCOMP-IH-RNN vs COMMCOMP-IH-2TF", "Omega(N/p) vs O(log N)", "induction-heads",
         "elman", 1, "transformer", 2, "induction-heads-2tf", problem="index@prefix"),
    _row("depth-FC", "newer",
         "Function composition: one layer cannot compose unless H(m + 1)p >= n log n (PNP); 2 layers of "
         "log width compose (layout pairs)", "PNP-FC-1TF, COMMCOMP-FC-1TF vs COMMCOMP-FC-2TF",
         "Omega(n log n / p) vs O(log n)", "function-composition", "transformer", 1, "transformer", 2,
         "composition-2tf", beside_bound="COMMCOMP-FC-1TF", problem="index@bits"),
    _row("newer-FC-RNN", "newer",
         "Function composition, g first: a recurrent model must hold g (n log n bits); 2 layers of log "
         "width compose", "COMMCOMP-FC-RNN vs COMMCOMP-FC-2TF", "Omega(n log n / p) vs O(log n)",
         "function-composition", "elman", 1, "transformer", 2, "composition-2tf"),
    _row("newer-copy-RNN", "newer",
         "Copying: a fixed-state model needs L log2|D| bits (error >= 1 - |S|/|D|^L); one attention layer "
         "of log width copies in the blank encoding (JBKM: 2 layers)", "JBKM-copy-GSSM vs COMMCOMP-copy-1TF",
         "Omega(N/p) vs O(log N)", "copy", "elman", 1, "transformer", 1, "copy-1tf"),
)

NEWER_DERIVED: tuple[dict, ...] = (
    _row("derived-FC-split", "derived",
         "Function evaluation, inputs and values at different positions: a second partition (Bob the "
         "input tokens, Alice the values) binds 1 layer; the pairs layout has none (Strobl et al.)",
         "SAF-FE-split-1TF beside PNP-FC-1TF", "Omega(N/(p + log N)) (lower bound only)",
         "function-composition", "transformer", 1, None, None, None, beside_bound="SAF-FE-split-1TF",
         problem="index@split"),
)
