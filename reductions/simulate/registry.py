"""The split registry: which :class:`~.splits.Split` family runs an architecture, decided here only.

:data:`SPLITS` lists the families in the order they are tried; the first whose
:meth:`~.splits.Split.handles` accepts the architecture (and the model, once one is built) runs it:
qSA's row-reading unit before the token Transformer (all three are Transformer-class: the 1-layer
split takes depth 1, :class:`~.deep_transformer.DeepTransformerSplit` depth 2 and more), then the hybrid
and the recurrent family. An architecture no family handles (the feed-forward class) has no
protocol simulation. Everything that asks whether or how an architecture is split calls this
module: :func:`prepare <reductions.simulate.setup.prepare>` (through :func:`refuse_unsplittable`,
:func:`make_split`, :func:`model_options` and :func:`random_model`), ``commcomp list archs``
(:func:`simulation_text`), and the views of a result's JSON (:func:`bob_step_text`,
:func:`verify_note`, by its ``split_kind``).

Examples
--------
>>> split_class("lstm").__name__, split_class("transformer").__name__, split_class("hybrid").kind
('RecurrentSplit', 'TransformerSplit', 'hybrid')
>>> [simulation_text(a) for a in ("gru", "transformer", "hybrid", "feedforward")]
['one-way, state', 'partition, 1 layer: partial sums; 2+ layers: keys and values', 'prefix/suffix, 3 messages', 'refused']
>>> split_class("transformer", layers=2).__name__     # 2 layers or more: rows per layer
'DeepTransformerSplit'
>>> refuse_unsplittable("transformer", 2) is None
True
>>> refuse_unsplittable("feedforward", 1)
Traceback (most recent call last):
...
commcomp.errors.UnsupportedSplitError: feedforward (feedforward) has no protocol simulation
>>> kind_class("attention-row").__name__
'RowAttentionSplit'
"""

from __future__ import annotations

from commcomp.architectures import get_architecture
from commcomp.errors import UnknownNameError, UnsupportedSplitError

from .deep_transformer import DeepTransformerSplit
from .hybrid import HybridSplit
from .qsa import RowAttentionSplit
from .recurrent import RecurrentSplit
from .splits import Split
from .transformer import TransformerSplit

__all__ = ["SPLITS", "split_class", "kind_class", "refuse_unsplittable", "make_split", "model_options",
           "random_model", "simulation_text", "architecture_rows", "bob_step_text", "verify_note"]

#: The split families, in the order they are tried (the first that handles an architecture wins).
SPLITS: tuple[type[Split], ...] = (RowAttentionSplit, TransformerSplit, DeepTransformerSplit, HybridSplit,
                                   RecurrentSplit)
_BY_KIND = {cls.kind: cls for cls in SPLITS}


def split_class(arch, model=None, layers=None) -> type[Split]:
    """The family that splits architecture ``arch`` (a name, alias or spec), and ``model`` if given
    (else a model of ``layers`` layers, if given).

    Raises
    ------
    UnsupportedSplitError
        For an architecture no family splits.
    """
    spec = get_architecture(arch) if isinstance(arch, str) else arch
    for cls in SPLITS:
        if cls.handles(spec, model, layers):
            return cls
    raise UnsupportedSplitError(f"{spec.name} ({spec.arch_class}) has no protocol simulation")


def kind_class(kind: str) -> type[Split]:
    """The family whose ``kind`` (the JSON's ``split_kind``) this is."""
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise UnknownNameError(f"unknown split kind {kind!r}; known: {', '.join(_BY_KIND)}") from None


def refuse_unsplittable(arch, layers: int, reduction=None, model=None) -> None:
    """Raise :class:`UnsupportedSplitError` for an architecture (at ``layers``, for ``reduction``'s
    sequences) with no protocol of bounded cost: the one place that decides it."""
    spec = get_architecture(arch) if isinstance(arch, str) else arch
    split_class(spec, model, layers).refuse(spec, layers, reduction)


def make_split(arch, model, reduction, n: int, cot: bool = False) -> Split:
    """The split of ``model`` (architecture ``arch``) for ``reduction`` at size ``n``."""
    return split_class(arch, model)(model, reduction, n, cot=cot)


def model_options(arch, reduction, n: int) -> dict:
    """Extra :func:`models.registry.build_model` keywords the family of ``arch`` needs."""
    return split_class(arch).model_options(reduction, n)


def random_model(arch, reduction, n: int, width: int, heads: int, precision, seed: int):
    """A family's own random model for ``reduction`` on ``arch`` (qsa's row unit), or None (the
    model registry builds one). Every family of the architecture's class is asked, in order."""
    spec = get_architecture(arch) if isinstance(arch, str) else arch
    for cls in SPLITS:
        if cls.arch_class == spec.arch_class:
            model = cls.random_model(reduction, n, width, heads, precision, seed)
            if model is not None:
                return model
    return None


def simulation_text(arch) -> str:
    """How ``arch`` is simulated, in a few words (``commcomp list archs``); ``refused`` when it is not
    (at one layer, for any reduction)."""
    try:
        spec = get_architecture(arch) if isinstance(arch, str) else arch
        cls = split_class(spec)
        cls.refuse(spec, 1)
    except UnsupportedSplitError:
        return "refused"
    deep = split_class(spec, layers=2)  # a family of its own for deeper models (the Transformer's)
    return cls.simulation if deep is cls else f"{cls.simulation}; {deep.simulation}"


def architecture_rows() -> list[dict]:
    """One dict per architecture (``commcomp list archs``): class, hyperparameters, the state-numbers
    formula (``-`` where there is no state to count), how it is split, and whether a model is built.

    >>> next(r for r in architecture_rows() if r["name"] == "lstm")["simulation"]
    'one-way, state'
    """
    from commcomp.architectures import list_architectures, state_numbers_formula
    from models.registry import available_architectures

    built = set(available_architectures())
    rows = []
    for a in list_architectures():
        split = simulation_text(a)
        try:
            state = str(state_numbers_formula(a))
        except UnsupportedSplitError:
            state = "-"
        rows.append({"name": a.name, "class": a.arch_class, "aliases": list(a.aliases),
                     "hyper": ", ".join(f"{k}={v}" for k, v in a.defaults().items()),
                     "state_numbers": state, "simulation": split, "model": a.name in built,
                     "description": a.description})
    return rows


def bob_step_text(out: dict) -> str:
    """What Bob computes after the messages, in words, from a ``simulate`` JSON (its ``split_kind``)."""
    return kind_class(out["split_kind"]).bob_step_text(out)


def verify_note(out: dict) -> str | None:
    """The family's note on a ``verify`` JSON (None: none, or no ``split_kind``)."""
    kind = out.get("split_kind")
    return None if kind is None else kind_class(kind).verify_note(out)
