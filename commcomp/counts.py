"""Counts as counts: ``49150/49152 (99.996%)``, never ``1.0000`` for a run that was wrong twice.

A fraction rounded to four places hides a wrong input (49,150 of 49,152 prints as 1.0000), which is a
wrong statement for a tool that certifies things. :func:`fraction_text` leads with the exact counts
and adds a percentage with as many digits as it takes to stay strictly between 0 and 100 when the
count is neither none nor all.

Examples
--------
>>> fraction_text(49150, 49152)
'49150/49152 (99.996%)'
>>> fraction_text(2048, 2048), fraction_text(0, 8), fraction_text(1532, 2048)
('2048/2048 (all)', '0/8 (none)', '1532/2048 (74.8%)')
>>> fraction_text(2 ** 70 - 1, 2 ** 70)
'1180591620717411303423/1180591620717411303424 (99.9999999999999999999%)'
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["fraction_text"]


def fraction_text(count: int, total: int, show=str) -> str:
    """``count/total`` with ``(all)``, ``(none)`` or a percentage that is never rounded to 0 or 100;
    ``show`` writes each count (say ``2^1000`` for a huge one)."""
    count, total = int(count), int(total)
    counts = f"{show(count)}/{show(total)}"
    if total <= 0:
        return counts
    if count == total:
        return f"{counts} (all)"
    if count == 0:
        return f"{counts} (none)"
    exact = Fraction(100 * count, total)
    digits = 1
    while True:
        scale = 10 ** digits
        shown = round(exact * scale)  # round half to even on exact rationals
        if 0 < shown < 100 * scale:
            break
        digits += 1
    text = f"{shown // scale}.{shown % scale:0{digits}d}".rstrip("0").rstrip(".")
    return f"{counts} ({text}%)"
