"""What ``commcomp bounds --computed`` shows: the table of :func:`.computed.computed_bounds`' rows."""

from __future__ import annotations

from commcomp.tables import rich_table

__all__ = ["computed_view"]


def computed_view(results: list[dict]):
    """One row per task and size: the classes at each cut, the exact state bits, the catalogue's bound."""
    from commcomp.bounds.table import TASK_SHORT, number_text

    rows = [[TASK_SHORT.get(r["task"], r["task"]), r["n"], r["length"], r["domain_size"],
             " ".join(map(str, r["classes_per_cut"])), r["max_state_bits"], number_text(r["catalogue_state_bits"]),
             r["catalogue_theorem"] or "-"] for r in results]
    return rich_table(
        "computed bounds: exact minimum state bits of any recurrent model (Myhill-Nerode classes per cut)",
        ["task", "n", "N", "inputs", "classes at cuts 1..N-1", "state bits", "bound bits", "catalogue bound"],
        rows, "state bits: exact, computed from the task's own ground truth over every input (no reduction, "
        "no theorem); bound bits: the catalogue bound's state bits.")
