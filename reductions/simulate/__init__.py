"""Models as protocols: a model split between Alice and Bob, run and checked (DESIGN §1).

* :mod:`.setup`: :func:`prepare` resolves names (task, architecture, precision, weights) into a
  :class:`Simulation`, refusing architectures with no protocol of bounded cost.
* :mod:`.splits`: the :class:`Split` interface every family below implements (messages, rounds,
  lower bound, capabilities, ``refuse``); :mod:`.registry` chooses the family of an architecture.
* :mod:`.recurrent`: any recurrent model, one way (Alice's prefix, then Bob's suffix; §8.1, §8.2).
* :mod:`.transformer`: a 1-layer Transformer under any partition, one or two rounds (§8.3).
* :mod:`.qsa`: qSA's row-reading attention unit with the output row on Alice's side: she sends that
  row's query, key and value in one message (§8.7, SHT Thm 4).
* :mod:`.running`: the recurrence in time blocks, over a prefix tree, and greedy generation.
* :mod:`.batch`: :func:`run_batch`, the pipeline on one batch: encode, protocol, unsplit model, checks.
* :mod:`.api`: :func:`simulate` and :func:`verify`, the JSON of DESIGN §4.

Examples
--------
>>> out = verify("string-equality", "elman", 3, "fixed:4:2", width=2, exhaustive=True)
>>> out["instances"], out["faithful"], out["bits_per_message"], out["lower_bound_bits"]
(64, 1.0, 8, 3)
"""

from .api import DEFAULT_INSTANCES, simulate, simulate_instance, verify
from .batch import BatchResult, DistinctMessages, exhaustive_batches, random_batches, run_batch
from .outputs import CotSpec, ModelRun, compare_runs
from .hybrid import HybridSplit
from .qsa import RowAttentionSplit
from .recurrent import RecurrentSplit, split_point
from .registry import SPLITS, refuse_unsplittable, split_class
from .running import generate, prefix_tree_run, run_blocks
from .setup import Simulation, answer_classes, prepare
from .splits import MessageSpec, Split, SplitBound
from .transformer import TransformerSplit

__all__ = ["simulate", "verify", "simulate_instance", "prepare", "Simulation", "refuse_unsplittable",
           "answer_classes", "RecurrentSplit", "TransformerSplit", "RowAttentionSplit", "split_point",
           "run_batch", "BatchResult", "exhaustive_batches", "random_batches", "DistinctMessages", "ModelRun",
           "CotSpec", "compare_runs", "run_blocks", "prefix_tree_run", "generate", "DEFAULT_INSTANCES",
           "Split", "SplitBound", "MessageSpec", "SPLITS", "split_class", "HybridSplit"]
