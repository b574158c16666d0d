"""Explicit constructions: models with hand-set weights that solve a task (theorems.md §7).

One file per construction; each defines ``SPECS``, a tuple of
:class:`~models.constructions.base.ConstructionSpec`, and the registry below collects them by
importing every module on first use (a module that does not exist yet is skipped; any other
import error is kept in :func:`import_errors` and raised by :func:`get_construction`).

=====================  ==========================  ======================================
module                 constructions               catalogue
=====================  ==========================  ======================================
``jl.py``              C1 (a lemma: no model)      BHBK-JL
``index_lookup.py``    C2, Multi-Index Lookup      BHBK-IL-1TF, BHBK-MIL-1TF
``string_equality.py`` C3 Equality, Disjointness   BHBK-EQ-2TF, BHBK-DISJ-2TF
``nearest_neighbour``  C4 NN and exact-key MQAR    BHBK-NN-2TF, BHBK-MQAR-2TF
``dnf.py``             C5 k-DNF / k-CNF            BHBK-kDNF-2TF
``dyck_rnn.py``        C6                          BHBK-Dyck-RNN
``dyck_2tf.py``        2-layer Dyck-(2,2)          BHBK-Dyck-2TF
``index_first_rnn.py`` index-first Index Lookup    BHBK-IL-order
``qsa.py``             C7a, C7b                    SHT qSA
``match2.py``          C8                          SHT Match2-UB
``induction_heads.py`` 2-layer induction heads     SHT24-IH-2TF
``function_compos...`` composition (pairs, split)  COMMCOMP-FC-2TF, COMMCOMP-FC-split-3TF
``copy.py``            copy (blank encoding)       COMMCOMP-copy-1TF
=====================  ==========================  ======================================

The builder signature (every construction)::

    get_construction(name_or_task).make(n, precision=None, *, seed=0, **options) -> Construction

Examples
--------
>>> spec = get_construction("string-equality")
>>> spec.name, spec.layers, spec.source
('string-equality-2tf', 2, 'BHBK-EQ-2TF')
>>> "index-lookup-1tf" in [s.name for s in list_constructions()]
True
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from commcomp.errors import InvalidParameterError, UnknownNameError

from .base import CheckResult, Construction, ConstructionSpec

__all__ = ["CONSTRUCTIONS", "Construction", "ConstructionSpec", "CheckResult", "get_construction",
           "list_constructions", "build_construction", "make_construction", "import_errors",
           "construction_rows", "MODULES"]

#: Every construction module, in the order of theorems.md §7.
MODULES = ("jl", "index_lookup", "string_equality", "nearest_neighbour", "dnf", "dyck_rnn", "dyck_2tf",
           "index_first_rnn", "hybrid_lookup", "qsa", "match2", "induction_heads", "function_composition", "copy")

_SPECS: dict[str, ConstructionSpec] = {}
_ERRORS: dict[str, str] = {}
_LOADED = False


def _key(name) -> str:
    return str(name).strip().lower().replace("_", "-")


def _load() -> dict[str, ConstructionSpec]:
    global _LOADED
    if _LOADED:
        return _SPECS
    for module in MODULES:
        full = f"{__name__}.{module}"
        try:
            mod = importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name == full:  # not written yet
                continue
            _ERRORS[module] = f"{type(exc).__name__}: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 - a broken module must not hide the others
            _ERRORS[module] = f"{type(exc).__name__}: {exc}"
            continue
        for spec in getattr(mod, "SPECS", ()):
            if spec.name in _SPECS:
                raise InvalidParameterError(f"construction name {spec.name!r} registered twice")
            _SPECS[spec.name] = spec
    _LOADED = True
    return _SPECS


class _LazyRegistry(Mapping):
    """Name -> :class:`ConstructionSpec`, filled on first access."""

    def __getitem__(self, name):
        return _load()[name]

    def __iter__(self):
        return iter(_load())

    def __len__(self):
        return len(_load())

    def __repr__(self):
        return f"CONSTRUCTIONS({', '.join(_load())})"


#: Registry name -> :class:`ConstructionSpec` (every module imported on first access).
CONSTRUCTIONS: Mapping[str, ConstructionSpec] = _LazyRegistry()


def import_errors() -> dict[str, str]:
    """Modules that exist but failed to import, with the error (empty when all is well)."""
    _load()
    return dict(_ERRORS)


def list_constructions() -> tuple[ConstructionSpec, ...]:
    """Every registered construction, in module order."""
    return tuple(_load().values())


def construction_rows() -> list[dict]:
    """One dict per registered construction (``commcomp list constructions``): its ``row()``."""
    return [s.row() for s in list_constructions()]


def get_construction(name_or_task, *, arch: str | None = None,
                     layers: int | None = None) -> ConstructionSpec:
    """The construction registered under a name or alias, or the one for a task.

    A task name (``index-lookup``) picks that task's construction; ``arch`` and ``layers``
    narrow the choice when a task has several (a 1-layer Transformer and an RNN, say).

    Raises
    ------
    UnknownNameError
        With the known names in the message (and the import errors of broken modules).
    """
    specs = _load()
    key = _key(name_or_task)
    if key in specs:
        return specs[key]
    for spec in specs.values():
        if key in spec.aliases and _fits(spec, arch, layers):
            return spec
    matches = [s for s in specs.values() if s.task == key and _fits(s, arch, layers)]
    if matches:
        defaults = [s for s in matches if s.default]
        return (defaults or matches)[0]
    broken = f"; modules that failed to import: {_ERRORS}" if _ERRORS else ""
    what = key + (f" (arch={arch}, layers={layers})" if arch or layers else "")
    raise UnknownNameError(f"no construction for {what!r}; known: "
                           f"{', '.join(f'{s.name} ({s.task})' for s in specs.values())}{broken}")


def _fits(spec: ConstructionSpec, arch, layers) -> bool:
    if arch is not None and _key(arch) != spec.arch:
        return False
    return layers is None or int(layers) == spec.layers


def make_construction(name_or_task, n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """``get_construction(name_or_task).make(n, precision, seed=seed, **options)``."""
    return get_construction(name_or_task).make(n, precision, seed=seed, **options)


def build_construction(task, arch=None, *, n: int, precision=None, width=None, layers=None,
                       heads=None, n_outputs=None, vocab_size=None, seed: int = 0, **options):
    """The ready model of a task's construction (what ``--weights construction`` runs).

    ``width`` and ``heads`` are ignored (the construction sets them; read ``model.d_model``);
    ``layers`` and ``arch`` choose among a task's constructions; ``n_outputs`` and
    ``vocab_size`` are checked against the model.

    Raises
    ------
    UnknownNameError
        No construction for this task / architecture / depth.
    InvalidParameterError
        The model reads fewer token ids or has fewer outputs than asked for.
    """
    spec = get_construction(task, arch=arch, layers=layers)
    model = spec.make(n, precision, seed=seed, **options).model
    if vocab_size is not None and getattr(model, "vocab_size", vocab_size) < vocab_size:
        raise InvalidParameterError(f"construction {spec.name} reads {model.vocab_size} token ids, "
                                    f"the task needs {vocab_size}")
    if n_outputs is not None and getattr(model, "n_outputs", n_outputs) < n_outputs:
        raise InvalidParameterError(f"construction {spec.name} has {model.n_outputs} outputs, "
                                    f"the task needs {n_outputs}")
    return model

