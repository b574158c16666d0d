"""``commcomp construct``: build one explicit construction, check it against its task, save it.

:func:`construct` builds the registered construction for a task (or by name) at a size and a
precision, checks it with :func:`.construction.check_construction` on every input when the task is
small enough (``spec.exhaustive_max_n``) or else on ``check`` random inputs, and writes the model
file when asked, under the output-file policy (:mod:`commcomp.output`: atomic, nothing
half-written). It returns a :class:`ConstructRun`; its :meth:`ConstructRun.to_json` is the
command's JSON and :mod:`.construct_view` its table.

Examples
--------
>>> run = construct("index-lookup", 4, "float32", check=8)
>>> run.check["exhaustive"], run.check["correct"] == run.check["admitted"] == run.check["instances"]
(True, True)
>>> parse_builder_options(["codes=jl", "k=12", "scale=0.5", "exact=true"])
{'codes': 'jl', 'k': 12, 'scale': 0.5, 'exact': True}
"""

from __future__ import annotations

from dataclasses import dataclass

from commcomp.errors import CommcompError, InvalidParameterError

__all__ = ["ConstructRun", "construct", "parse_builder_options"]


def parse_builder_options(items) -> dict:
    """``NAME=VALUE`` pairs (``--option``) as builder keywords: values parse as int, float,
    true/false/none, or stay text; ``-`` in a name reads as ``_``."""
    out = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise InvalidParameterError(f"--option expects NAME=VALUE, got {item!r}")
        low = text.lower()
        value = {"true": True, "false": False, "none": None}.get(low, text)
        if value is text:
            for cast in (int, float):
                try:
                    value = cast(text)
                    break
                except ValueError:
                    pass
        out[name.replace("-", "_")] = value
    return out


@dataclass(frozen=True)
class ConstructRun:
    """A built construction, what its check found, and where its model was saved.

    ``check`` is ``None`` when no check ran (``check=0``), else ``instances`` (inputs drawn),
    ``admitted`` (inside the construction's promise), ``correct``, ``exhaustive`` (every input of
    size n) and ``ok``.
    """

    spec: object            # models.constructions.ConstructionSpec
    construction: object    # models.constructions.Construction
    check: dict | None
    saved_to: str | None

    def to_json(self) -> dict:
        """The ``construct --format json`` fields: the construction's summary (without its token
        layout), the key and value dimensions, its width formula, the check and the saved path."""
        model = self.construction.model
        out = {**self.construction.summary(), "d_k": getattr(model, "d_k", None),
               "d_v": getattr(model, "d_v", None), "width_formula": self.spec.width_formula,
               "check": self.check, "saved_to": self.saved_to}
        out.pop("layout", None)
        return out


def construct(task: str, n: int, precision=None, *, arch: str | None = None, layers: int | None = None,
              options: dict | None = None, check: int = 64, seed: int = 0, out: str | None = None) -> ConstructRun:
    """Build the construction for ``task`` (a task name, alias or construction name) at size ``n``.

    Parameters
    ----------
    arch, layers : optional
        Choose among a task's constructions.
    options : dict, optional
        Builder keywords (:func:`parse_builder_options` reads them from ``NAME=VALUE`` text).
    check : int
        0: no check; else every input when ``n <= spec.exhaustive_max_n`` and the construction
        lists its inputs, or else ``check`` random inputs (seeded by ``seed``).
    out : str, optional
        Write the model file there (``-``: standard output), recording the task and size.
    """
    from commcomp.output import write_with
    from models.constructions import get_construction
    from models.files import save_model
    from reductions.registry import canonical_task_name

    from .construction import check_construction

    name = task
    try:  # task aliases (il, nn, ...) as the task registry knows them
        name = canonical_task_name(task)
    except CommcompError:
        pass
    spec = get_construction(name, arch=arch, layers=layers)
    c = spec.make(n, precision, seed=seed, **(options or {}))
    result = None
    if check:
        exhaustive = n <= spec.exhaustive_max_n and spec.inputs is not None
        res = check_construction(c, inputs=spec.inputs(n) if exhaustive else None,
                                 samples=0 if exhaustive else check, seed=seed, stop_early=False)
        result = {"instances": res.total, "admitted": res.admitted, "correct": res.correct,
                  "exhaustive": exhaustive, "ok": res.ok}
    if out:
        about = {"task": name, "task_n": n, "source": f"construction {spec.name}"}  # checked by --weights
        write_with(out, lambda tmp: save_model(c.model, tmp, about=about))
    return ConstructRun(spec, c, result, out)
