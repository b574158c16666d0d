"""The claims table as text (80 columns, no word broken), Markdown and LaTeX: words, not codes.

One row per claim, grouped under a heading that says what the group claims:

* ``claim`` — the claim in words, its catalogue ids and its asymptotic shape;
* ``both sides at N`` — at the crossover and beyond: the weak side's minimum width with the tag of
  its number (the paper's own bound beside commcomp's where they differ) against the strong side's
  explicit width;
* ``verdict`` — ``shown at N = ...`` (all four checks passed there) or ``not shown: <why>``.

Examples
--------
>>> side_label("transformer", 1), side_label("elman", 1), side_label(None, None)
('1-layer Transformer', 'RNN (Elman)', '-')
"""

from __future__ import annotations

from commcomp.tables import text_table

from .claim_specs import GROUPS

__all__ = ["claims_text", "claims_markdown", "claims_latex", "claim_rows", "side_label", "CLAIM_COLUMNS",
           "claims_caption"]

CLAIM_COLUMNS = ["claim", "both sides at N (weak m >= | strong m)", "verdict"]


def side_label(arch, layers) -> str:
    """An architecture in words."""
    if arch is None:
        return "-"
    if arch == "transformer":
        return f"{layers}-layer Transformer"
    return {"elman": "RNN (Elman)", "rnn": "RNN (8-state table)", "hybrid": "hybrid (RNN + 1 attention layer)",
            "lstm": "LSTM", "gru": "GRU"}.get(arch, arch)


def _tag(evidence) -> str:
    return f" [{evidence}]" if evidence else ""


def _points(result) -> str:
    if result.extra.get("points_text"):  # a line that is not a separation says its own (claims_average)
        return result.extra["points_text"]
    parts = []
    for p in result.points:
        weak = "-" if p.weak_width is None else f"{p.weak_width}{_tag(p.weak_evidence)}"
        if p.beside_width is not None:
            who = "paper" if str(p.beside_theorem).split("-")[0] in ("BHBK", "SHT", "WDL") else "commcomp"
            weak += f" ({who}: {p.beside_width}{_tag(p.beside_evidence)})"
        strong = p.strong_width if p.strong_width is not None else (
            f"{p.catalogue_width} (formula)" if p.catalogue_width is not None else "-")
        mark = " (crossover)" if p.crossover else ""
        parts.append(f"N = {p.N}{mark}: {weak} | {strong}")
    return "; ".join(parts) or "-"


def _claim_cell(result) -> str:
    s = result.spec
    return f"{s.statement} ({s.source}: {s.asymptotic})"


def _verdict(result) -> str:
    if result.verdict == "shown" and result.extra.get("verdict_text"):
        return result.extra["verdict_text"]
    if result.verdict == "shown":
        return f"shown at N = {result.checked_N} ({result.precision}): all four checks passed"
    # a reduction's name (``index->function-composition``) is one long word: spaced, it wraps in 80 columns
    return f"not shown: {result.reason}".replace("->", " -> ")


def claim_rows(results) -> list[list[str]]:
    """One row per claim: the claim, both sides at N, the verdict."""
    return [[_claim_cell(r), _points(r), _verdict(r)] for r in results]


def claims_caption(precision: str, heads: int, *, samples: int, budget: int, weak_width: int,
                   check_max_length: int, seconds: float | None = None) -> str:
    """What the columns and checks mean, and why this precision."""
    text = (f"p = {precision} (p = 16 bits), H = {heads}. N: the catalogue's N (Index and Multi-Index "
            f"Lookup: data symbols; else tokens). weak m >=: the smallest width the weak side's lower bound "
            f"allows, [tag] where its number comes from (S secondary source, A authors' rebuttal, P paper, "
            f"D derived by commcomp), the paper's own beside it where commcomp's differs; strong m: the "
            f"width of commcomp's explicit weights ('formula' where they are not built). A claim is shown "
            f"at its crossover only when (a) the strong side's weights are right on every input, or on "
            f"{samples} random and adversarial ones (every INDEX-type pair up to 256 x (1100/N)^2 of them, "
            f"evenly spaced, at N tokens); (b) a weak model below the bound (width {weak_width}, "
            f"at most {budget} inputs searched) is exhibited failing on an exact x, x', y re-run through "
            f"the unsplit model, a complete search with no collision counting as a failure; (c) the "
            f"strong side's split is faithful bit for bit and sends what the problem needs; (d) the weak "
            f"bound exceeds the explicit width. Checks run on crossovers of at most {check_max_length} "
            f"tokens. The precision: at 16 bits every construction a separation claim relies on holds "
            f"(check a; Match2's weights fail there, and its row says so), and the crossovers stay short "
            f"enough to check.")
    if seconds is not None:
        text += f" {seconds:.1f} s."
    return text


def _grouped(claims, derived):
    for group, heading in GROUPS.items():
        members = [r for r in (derived if group == "derived" else claims) if r.spec.group == group]
        if members:
            yield heading, members


def claims_text(claims, derived, caption: str) -> str:
    """The 80-column tables, one per group, then the caption."""
    parts = [text_table(heading, CLAIM_COLUMNS, claim_rows(members))
             for heading, members in _grouped(claims, derived)]
    return "\n".join(parts) + "\n" + "\n".join(_wrap(caption)) + "\n"


def _wrap(text: str) -> list[str]:
    import textwrap

    from commcomp.tables import console_width

    return textwrap.wrap(text, width=console_width(), break_long_words=False, break_on_hyphens=False)


def claims_markdown(claims, derived, caption: str) -> str:
    from .render import markdown

    return "\n".join(markdown(CLAIM_COLUMNS, claim_rows(members), heading, "")
                     for heading, members in _grouped(claims, derived)) + caption + "\n"


def claims_latex(claims, derived, caption: str) -> str:
    from .render import latex

    return "".join(latex(CLAIM_COLUMNS, claim_rows(members), heading, caption if i == 0 else "")
                   for i, (heading, members) in enumerate(_grouped(claims, derived)))
