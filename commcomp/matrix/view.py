"""What ``commcomp matrix`` shows: the tables of a :class:`~commcomp.matrix.measures.MatrixReport`.

Built from the report itself (:meth:`~commcomp.matrix.measures.MatrixReport.table_rows`, its
checks), the same object whose ``to_json(details=True)`` is the command's JSON.

Examples
--------
>>> short_formula("ceiling(log(n)/log(2)) + 1")
'ceil(log2(n)) + 1'
"""

from __future__ import annotations

import re

from ..tables import rich_table

__all__ = ["matrix_view", "short_formula"]

_CHECK_TEXT = {"verified": "ok", "unverified": "unverified"}


def short_formula(expression) -> str:
    """sympy's text with ``log(x)/log(2)`` as ``log2(x)`` and ``ceiling`` as ``ceil`` (80 columns)."""
    return re.sub(r"log\(([^()]*)\)/log\(2\)", r"log2(\1)", str(expression)).replace("ceiling(", "ceil(")


def matrix_view(report, source: str | None = None) -> list:
    """The measures with their labels, the certificates' checks, what was skipped and, for a
    registered problem, its known complexity from the catalogue; ``source`` names a matrix file."""
    from ..problems import get_problem
    from .discrepancy import discrepancy_rows

    checks = [[c.measure, _CHECK_TEXT.get(c.status, "FAILED"), c.detail] for c in report.checks]
    title = f"{report.problem}, n = {report.n}" if report.problem is not None else source
    out = [rich_table(f"{title}: {report.rows} x {report.cols} matrix", ["measure", "value", "what it is"],
                      report.table_rows() + discrepancy_rows(report.to_json())),
           rich_table("certificates, re-checked independently", ["measure", "check", "detail"], checks)]
    if report.skipped:
        out.append("skipped: " + "; ".join(f"{k}: {v}" for k, v in dict(report.skipped).items()))
    if report.problem is not None:
        known = [[f.measure, f.relation + " " + short_formula(f.expression), f"{f.source} {f.tag}"]
                 for f in get_problem(report.problem).complexity()]
        out.append(rich_table("known complexity (catalogue)", ["measure", "value", "source"], known))
    return out
