"""What ``commcomp construct`` shows: the table of a :class:`.construct.ConstructRun`.

Built from the same fields as the command's JSON (:meth:`.construct.ConstructRun.to_json`).
"""

from __future__ import annotations

from commcomp.tables import rich_table

__all__ = ["construct_rows", "construct_view"]

#: the construction's parameters shown when it reports them (``params_report``)
_PARAMETERS = ("k", "codes", "gamma_achieved", "beta", "beta2", "m", "min_margin", "k_v", "margin")
_SIZES = ("construction", "task", "arch", "n", "length", "width", "layers", "heads", "d_k", "d_v",
          "precision", "source", "tag")


def construct_rows(run) -> list:
    """``[field, value]`` rows: sizes, source, parameters, width formula, the check, the saved path."""
    out = run.to_json()
    keys = list(_SIZES) + [k for k in _PARAMETERS if k in out]
    rows = [[k, out[k]] for k in keys]
    rows.append(["width formula", run.spec.width_formula])
    check = run.check
    if check:
        rows.append(["check", f"{check['correct']}/{check['admitted']} correct "
                              f"({'all inputs' if check['exhaustive'] else 'random inputs'}"
                              f"{'' if check['admitted'] == check['instances'] else ', ' + str(check['instances']) + ' drawn'})"])
    if run.saved_to:
        rows.append(["saved to", run.saved_to])
    return rows


def construct_view(run):
    """The rich table of ``commcomp construct``."""
    spec = run.spec
    return rich_table(f"construction {spec.name} ({spec.source})", ["", ""], construct_rows(run),
                      caption=spec.description)
