"""The information curve: log2 of the distinct messages after each of Alice's positions.

:func:`save_information_curve` draws log2 |S_t| against t (the information the model keeps),
with the bits of x read so far (what a correct one-way protocol must keep when the problem's rows
are distinct), the problem's lower bound and the protocol's nominal message size on the same axes,
and writes the PNG atomically (a temporary file renamed into place). :func:`describe_count` prints
exact counts that run to hundreds of digits in a line.

Examples
--------
>>> describe_count(1000 * 2 ** 1000), describe_count(2 ** 1034), describe_count(300 * 2 ** 300)
('1000 x 2^1000', '2^1034', '300 x 2^300')
>>> describe_count(12345)
'12345'
>>> describe_count(3 ** 100)
'5.1537752073e47 (48 digits)'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from commcomp.errors import InvalidParameterError
from commcomp.output import write_with

__all__ = ["save_information_curve", "describe_count"]


def describe_count(k) -> str:
    """An exact integer in a short line: itself when short, else ``m x 2^e`` or its leading digits."""
    if k is None:
        return "-"
    k = int(k)
    if abs(k) < 10 ** 12:
        return str(k)
    e = (k & -k).bit_length() - 1  # the power of 2 that divides k
    if abs(k >> e) < 10 ** 6:  # m x 2^(e - j): the roundest m (most trailing zeros), then the smallest
        forms = [(k >> e) << j for j in range(e + 1) if abs((k >> e) << j) < 10 ** 6]
        m = min(forms, key=lambda v: (-(len(str(abs(v))) - len(str(abs(v)).rstrip("0"))), abs(v)))
        p = (k // m).bit_length() - 1
        return f"2^{p}" if m == 1 else f"{m} x 2^{p}"
    digits = str(abs(k))
    return f"{'-' if k < 0 else ''}{digits[0]}.{digits[1:11]}e{len(digits) - 1} ({len(digits)} digits)"


def save_information_curve(out: dict, path, *, title: str | None = None) -> Path:
    """Draw the curve of a result that has ``distinct_messages_per_level`` (the reachable-states
    ``verify``, ``witness`` or analysis JSON) into the PNG ``path``.

    Raises
    ------
    InvalidParameterError
        When the result has no per-level counts (another method ran) or the path's folder is missing.
    """
    sizes = out.get("distinct_messages_per_level")
    if not sizes:
        raise InvalidParameterError(f"no per-level message counts to plot: method {out.get('method')!r} ran "
                                    f"(the plot needs reachable-states){'; ' + out['fallback'] if out.get('fallback') else ''}")
    path = Path(path)
    if not path.parent.exists():
        raise InvalidParameterError(f"the folder of {path} does not exist")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(len(sizes))
    info = np.log2(np.asarray(sizes, dtype=np.float64))
    read = np.minimum(t, out.get("n", len(sizes)))
    fig, ax = plt.subplots(figsize=(5.5, 3.4), dpi=100)
    ax.plot(t, read, "--", color="grey", lw=1, label="bits of x read (needed if correct)")
    ax.axhline(out["lower_bound_bits"], color="tab:red", lw=1, label=f"lower bound {out['lower_bound_bits']} bits")
    ax.axhline(out["bits_per_message"], color="tab:green", lw=1, ls=":",
               label=f"nominal message {out['bits_per_message']} bits")
    ax.plot(t, info, color="tab:blue", lw=1.6, label="log2 distinct messages (model)")
    ax.set_yscale("symlog", base=2, linthresh=1)
    ax.set_xlabel("Alice's positions run, t")
    ax.set_ylabel("bits")
    ax.set_title(title or f"{out.get('arch')} w{out.get('width')} {out.get('precision')}: "
                          f"{out.get('problem')} -> {out.get('task')}, n = {out.get('n')}", fontsize=9)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    try:
        write_with(str(path), fig.savefig)  # the output-file policy: atomic, an ordinary file's mode
    finally:
        plt.close(fig)
    return path
