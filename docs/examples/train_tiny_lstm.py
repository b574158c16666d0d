"""Train a tiny torch LSTM on commcomp's Index Lookup task and save its ``state_dict``.

Needs the ``reference`` extra (torch).  Run from the repository root::

    python docs/examples/train_tiny_lstm.py --n 8 --width 16 --out tiny_lstm.pt

It writes ``tiny_lstm.pt`` (``torch.save`` of the state dict) and ``tiny_lstm.state_dict.npz`` (the
same arrays, float64, readable without torch).  Then (docs/import_torch.md)::

    commcomp import torch tiny_lstm.pt --arch lstm --task index-lookup --n 8 --out tiny_lstm.npz
    commcomp verify index-lookup --arch lstm --n 8 --precision float32 --weights tiny_lstm.npz --exhaustive

The data are commcomp's own encoding of every instance (x, y) of INDEX at size n (``reduction.encode``):
Alice's n bits as tokens, then Bob's query token; the label is the task's answer at the last position,
which is where a commcomp recurrent model reads out.  The module is what ``commcomp import torch``
expects of a recurrent model: ``embedding`` (``nn.Embedding``), ``rnn`` (``nn.LSTM``/``nn.GRU``/``nn.RNN``,
``batch_first``) and ``readout`` (``nn.Linear`` on the last step's top hidden state).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def index_lookup_data(n: int):
    """Every instance of Index Lookup at size n: tokens ``(B, T)``, labels ``(B,)``, vocabulary, classes."""
    from reductions.registry import get_reduction
    from commcomp.problems import get_problem

    reduction = get_reduction("index-lookup")
    problem = get_problem(reduction.problem)
    xs, ys = problem.alice_inputs(n), problem.bob_inputs(n)          # (2^n, n), (n,)
    x = np.repeat(xs, len(ys), axis=0)                                 # (2^n * n, n)
    y = np.tile(ys, len(xs))                                           # (2^n * n,)
    batch = reduction.encode(x, y, n)
    labels = np.asarray(reduction.task_answers(batch)).reshape(len(x), -1)[:, 0]
    vocab = reduction.task.vocab_size(reduction.task_size(n))
    return np.asarray(batch.tokens), labels.astype(np.int64), vocab, 2


def train(n: int = 8, width: int = 16, arch: str = "lstm", steps: int = 400, seed: int = 0):
    """Train on all instances (full batch, Adam); return the module and its training accuracy."""
    import torch

    torch.manual_seed(seed)
    tokens, labels, vocab, classes = index_lookup_data(n)
    rnn_class = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[arch]

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(vocab, width)
            self.rnn = rnn_class(width, width, batch_first=True)
            self.readout = torch.nn.Linear(width, classes)

        def forward(self, t):                                          # t: (B, T) token ids
            h, _ = self.rnn(self.embedding(t))                         # (B, T, m)
            return self.readout(h[:, -1])                              # (B, C): the last step

    model = Tiny()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    t, y = torch.from_numpy(tokens), torch.from_numpy(labels)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(t), y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        accuracy = float((model(t).argmax(-1) == y).double().mean())
    return model, accuracy, float(loss.detach())


def main(argv=None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="problem size (default 8)")
    parser.add_argument("--width", type=int, default=16, help="hidden size (default 16)")
    parser.add_argument("--arch", choices=["lstm", "gru", "rnn"], default="lstm")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("tiny_lstm.pt"))
    args = parser.parse_args(argv)
    import torch

    model, accuracy, loss = train(args.n, args.width, args.arch, args.steps, args.seed)
    state = model.state_dict()
    torch.save(state, args.out)
    npz = args.out.with_suffix(".state_dict.npz")
    with open(npz, "wb") as fh:
        np.savez(fh, **{k: v.detach().double().numpy() for k, v in state.items()})
    print(f"trained {args.arch} width {args.width} on all {2 ** args.n * args.n} instances of index-lookup "
          f"at n = {args.n}: accuracy {accuracy:.4f}, loss {loss:.4g}; wrote {args.out} and {npz}")
    return args.out


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout
    main()
