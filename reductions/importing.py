"""``commcomp import torch``: a trained torch model's ``state_dict`` -> a commcomp model file.

:func:`import_torch` reads the state dict (``.pt`` with torch, ``.npz`` without), maps it
(:mod:`models.torch_import`), checks it against a task at size n when given one (the same check
``--weights FILE`` makes: vocabulary, outputs, input length), and, when torch is installed, runs the
torch modules rebuilt from the same arrays on seeded random tokens beside the converted model (float64,
no rounding) and reports the largest difference of the logits: the conversion is checked, not assumed.
The file is written atomically, and records what it was made for (``task``, ``n``) so that a later run
at another size is refused with a message saying so.

Examples
--------
>>> import os, tempfile
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> sd = {"embedding.weight": rng.normal(size=(8, 4)), "rnn.weight_ih_l0": rng.normal(size=(12, 4)),
...       "rnn.weight_hh_l0": rng.normal(size=(12, 4)), "rnn.bias_ih_l0": np.zeros(12),
...       "rnn.bias_hh_l0": np.zeros(12), "readout.weight": rng.normal(size=(2, 4)),
...       "readout.bias": np.zeros(2)}
>>> folder = tempfile.mkdtemp()
>>> np.savez(os.path.join(folder, "sd.npz"), **sd)
>>> out = import_torch(os.path.join(folder, "sd.npz"), "gru", os.path.join(folder, "gru.npz"),
...                    task="index-lookup", n=6, check_with_torch=False)
>>> out["arch"], out["vocab_size"], out["width"], out["n_outputs"], out["compute_dtype"]
('gru', 8, 4, 2, 'float64')
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["import_torch", "torch_difference", "import_rows", "import_view"]

CHECK_BATCH, CHECK_LENGTH = 64, 12


def _save_atomic(model, out, about) -> None:
    from commcomp.output import write_with
    from models.files import save_model

    out = Path(out)
    directory = out.resolve().parent
    if not directory.is_dir():
        raise InvalidParameterError(f"cannot write {out}: directory {directory} does not exist")
    if out.is_symlink() or (out.exists() and not out.is_file()):
        raise InvalidParameterError(f"cannot write {out}: it exists and is not a regular file (a folder, a "
                                    "link, a device): commcomp replaces regular files only")
    write_with(str(out), lambda tmp: save_model(model, tmp, about=about))  # the output-file policy


def _torch_modules(sd: dict, arch: str, layout: dict, model, options: dict):
    """The torch forward pass the state dict describes, rebuilt from its arrays: tokens -> logits."""
    import torch

    nn = torch.nn
    state = {k: torch.from_numpy(np.asarray(v, dtype=np.float64)) for k, v in sd.items()}

    def sub(prefix):
        return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}

    emb = nn.Embedding.from_pretrained(state[layout["embedding"]]) if layout["embedding"] else None
    head = nn.Linear(1, 1).double() if layout["readout"] else None
    if head is not None:
        w = state[f"{layout['readout']}weight"]
        head = nn.Linear(w.shape[1], w.shape[0], bias=f"{layout['readout']}bias" in state).double()
        head.load_state_dict(sub(layout["readout"]))
    if arch in ("elman", "lstm", "gru"):
        body_sd = {k: v for k, v in sub(layout["body"]).items() if "_l" in k}
        w_ih, w_hh = body_sd["weight_ih_l0"], body_sd["weight_hh_l0"]
        kw = {"num_layers": model.layers.__len__(), "bias": "bias_ih_l0" in body_sd, "batch_first": True}
        if arch == "elman":
            rnn = nn.RNN(w_ih.shape[1], w_hh.shape[1], nonlinearity=options.get("nonlinearity", "tanh"), **kw)
        else:
            rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[arch](w_ih.shape[1], w_hh.shape[1], **kw)
        rnn = rnn.double()
        rnn.load_state_dict(body_sd)

        def forward(tokens):
            x = emb(tokens) if emb is not None else nn.functional.one_hot(tokens, w_ih.shape[1]).double()
            h = rnn(x)[0][:, -1]
            return head(h) if head is not None else h
        return forward
    d, H = model.d_model, model.n_heads
    pos = state[layout["positional"]].reshape(-1, d) if layout["positional"] else None
    if model.d_mlp:
        layer = nn.TransformerEncoderLayer(d, H, dim_feedforward=model.d_mlp, dropout=0.0, batch_first=True,
                                           norm_first=model.layer_norm == "pre").double()
        stack = nn.TransformerEncoder(layer, model.n_layers, enable_nested_tensor=False,
                                      norm=nn.LayerNorm(d).double() if layout["final_norm"] else None).double()
        stem = layout["body"]
        enc = stem[: -len("layers.")] if stem.endswith("layers.") else None
        if enc is not None:
            stack.load_state_dict(sub(enc))
        else:  # a single encoder layer under its own prefix
            stack.layers[0].load_state_dict(sub(stem))
    else:
        mha = nn.MultiheadAttention(d, H, batch_first=True, bias=f"{layout['body']}in_proj_bias" in state).double()
        mha.load_state_dict({k: v for k, v in sub(layout["body"]).items() if not k.startswith("num_heads")})

    def forward(tokens):
        x = emb(tokens)
        if pos is not None:
            x = x + pos[: tokens.shape[1]]
        T = tokens.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if model.causal else None
        if model.d_mlp:
            x = stack(x, mask=mask, is_causal=False)
        else:
            a = mha(x, x, x, attn_mask=mask, need_weights=False)[0]
            x = x + a if model.residual else a
        return head(x[:, -1])
    return forward


def torch_difference(sd: dict, arch: str, layout: dict, model, options: dict, length: int, seed: int = 0):
    """Largest |logit difference| between torch's forward pass and the converted model (float64, no
    rounding) on ``CHECK_BATCH`` seeded random token sequences of ``length``; None without torch."""
    try:
        import torch
    except ImportError:
        return None
    reference = model.with_precision(None)
    vocab = int(model.config["vocab_size"])
    tokens = np.random.default_rng(seed).integers(0, vocab, size=(CHECK_BATCH, int(length)))  # (B, T)
    forward = _torch_modules(sd, arch, layout, model, options)
    with torch.no_grad():
        theirs = forward(torch.from_numpy(tokens)).numpy()                                      # (B, C)
    if arch in ("elman", "lstm", "gru"):
        ours = np.asarray(reference.run_with_output(tokens)[1])
    else:
        ours = np.asarray(reference.forward(tokens))
    return float(np.max(np.abs(theirs - ours)))


def import_torch(source, arch: str, out, *, task=None, n=None, problem=None, prefix=None, embedding=None,
                 readout=None, nonlinearity=None, heads=None, causal=None, norm_first=None, residual=None,
                 activation=None, config=None, check_with_torch=True, seed=0) -> dict:
    """Convert ``source`` (a state dict ``.pt``/``.npz``) to the commcomp model file ``out``.

    Parameters
    ----------
    source, out : path
    arch : str
        ``elman``/``rnn``, ``lstm``, ``gru`` or ``transformer``.
    task, n, problem : optional
        Check the model against this task at size n (vocabulary, outputs, input length) and record them.
    prefix, embedding, readout
        See :func:`models.torch_import.model_from_state_dict`.
    nonlinearity, heads, causal, norm_first, residual, activation : optional
        What a state dict does not record (None: not given). Each comes from the state dict (``num_heads``),
        the JSON ``config`` (default: ``SOURCE.config.json`` when it exists) or this argument, never from a
        default where a wrong value changes the outputs (:mod:`models.torch_options`); a value that
        contradicts a file is an error.
    config : path, optional
        A JSON object of torch options (``nonlinearity``, ``num_heads``, ``activation``, ``norm_first``, ...).
    check_with_torch : bool
        Compare with torch's own forward pass when torch is installed.

    Returns
    -------
    dict
        ``source, out, arch, vocab_size, width, layers, heads, n_outputs, layout, task, n,
        compute_dtype, torch_max_abs_difference`` (None when not checked), ``torch_checked``, ``options``
        (the values the model was built with), ``option_sources`` (where each came from) and
        ``unconfirmed`` (the options no file recorded).

    Raises
    ------
    TorchImportError, ModelFileError, InvalidParameterError
    """
    from models.files import check_model_file, read_model_info
    from models.torch_import import model_from_state_dict, read_state_dict

    from commcomp.architectures import get_architecture
    from commcomp.errors import UnknownNameError
    from models.torch_import import TorchImportError
    from models.torch_options import config_beside, read_config, resolve_options

    if (task is None) != (n is None):
        raise InvalidParameterError("give --task and --n together (the model is checked against the task at n)")
    if problem is not None and task is None:
        raise InvalidParameterError("--problem picks a task's reduction: give it with --task and --n")
    try:
        name = get_architecture(arch).name
    except UnknownNameError as exc:
        raise TorchImportError(str(exc)) from None
    sd = read_state_dict(source)
    config_path = Path(config) if config is not None else config_beside(source)
    if config is not None and not config_path.is_file():
        raise TorchImportError(f"--config {config}: no such file")
    cfg = read_config(config_path) if config_path.is_file() else {}
    opts = resolve_options(name, {"nonlinearity": nonlinearity, "heads": heads, "activation": activation,
                                  "causal": causal, "norm_first": norm_first, "residual": residual},
                           config=cfg, state_dict=sd, config_path=str(config_path),
                           encoder_layer=any(k.endswith("self_attn.out_proj.weight") for k in sd))
    options = dict(opts.values)
    model, layout = model_from_state_dict(sd, arch, prefix=prefix, embedding=embedding, readout=readout,
                                          nonlinearity=options.get("nonlinearity", "tanh"),
                                          heads=options.get("heads"), causal=options.get("causal", True),
                                          norm_first=options.get("norm_first", False),
                                          residual=options.get("residual", False),
                                          activation=options.get("activation", "relu"))
    about = {"source": f"torch {_source_name(model)}"}
    length = CHECK_LENGTH
    if task is not None:
        from .registry import get_reduction

        reduction = get_reduction(task, problem)
        reduction.check_n(int(n))
        about.update(task=reduction.task_name, n=int(n))
        length = reduction.length(int(n))
        from models.files import ModelFileInfo

        check_model_file(ModelFileInfo(str(source), model.arch, model.config), arch=arch,
                         vocab_size=reduction.task.vocab_size(reduction.task_size(int(n))),
                         n_outputs=reduction.answer_classes(int(n)), task=reduction.task_name, n=int(n),
                         length=length)
    max_len = getattr(model, "max_len", None)
    if max_len and getattr(model, "positional_kind", None) in ("learned", "fixed"):
        length = min(length, max_len)
    difference = torch_difference(sd, model.arch, layout, model, options, length, seed) if check_with_torch else None
    _save_atomic(model, out, about)
    info = read_model_info(out)
    return {"source": str(source), "out": str(out), "arch": info.arch, "vocab_size": info.vocab_size,
            "width": info.width, "layers": info.layers, "heads": info.heads, "n_outputs": info.n_outputs,
            "layout": layout, "task": about.get("task"), "n": about.get("n"), "description": info.describe(),
            "compute_dtype": _compute_dtype(model), "torch_checked": difference is not None,
            "torch_max_abs_difference": difference, "check_tokens": [CHECK_BATCH, int(length)],
            "options": options, "option_sources": dict(opts.sources), "unconfirmed": list(opts.unconfirmed)}


def _source_name(model) -> str:
    if model.arch == "transformer":
        return "nn.TransformerEncoder" if model.d_mlp else "nn.MultiheadAttention"
    return {"elman": "nn.RNN", "lstm": "nn.LSTM", "gru": "nn.GRU"}[model.arch]


def _compute_dtype(model) -> str:
    """The dtype the kernels compute in (a float32 precision is emulated by rounding when it is float64)."""
    layers = getattr(model, "layers", None)
    dtype = getattr(layers[0], "dtype", None) if layers else None
    if dtype is None:
        dtypes = {str(getattr(v, "dtype", "")) for v in getattr(model, "w", {}).values()}
        return "float32" if dtypes == {"float32"} else "float64"
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)


def import_rows(out: dict) -> list[list[str]]:
    """The ``import`` command's table rows."""
    diff = out["torch_max_abs_difference"]
    check = (f"largest |logit difference| {diff:.3g} against torch's own forward pass on "
             f"{out['check_tokens'][0]} random sequences of {out['check_tokens'][1]} tokens (float64)"
             if diff is not None else "not run (torch is not installed; the .npz path needs no torch)")
    layout = out["layout"]
    built = ", ".join(f"{k} {v} ({out['option_sources'][k]})" for k, v in out["options"].items()) or "-"
    unconfirmed = out["unconfirmed"]
    if unconfirmed and diff is not None:
        check += f"; torch was rebuilt with the same {', '.join(unconfirmed)}, so this cannot catch a wrong one"
    return [["wrote", out["out"]], ["holds", out["description"]],
            ["built with", built],
            ["no file confirms", ", ".join(unconfirmed) + " (a state dict does not record them: check them "
             "against the code that trained the model)" if unconfirmed else "- (every option read from a file)"],
            ["from", f"embedding {layout['embedding'] or '(identity)'}, body {layout['body']!r}, readout "
                     f"{layout['readout'] or '(identity)'}"
                     + (f", positions {layout['positional']}" if layout.get("positional") else "")
                     + (f", final norm {layout['final_norm']}" if layout.get("final_norm") else "")],
            ["compute dtype", f"{out['compute_dtype']} (a --precision format is applied by rounding onto its grid)"],
            ["conversion check", check]]


def import_view(out: dict):
    """The ``import`` command's table (rich), titled by the state dict it read."""
    from commcomp.tables import rich_table

    return rich_table(f"import torch {out['source']} ({out['arch']})", ["", ""], import_rows(out))
