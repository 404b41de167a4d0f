"""Trivial baselines, fitted on the train split and scored on the test split.

Why: a trained model is only evidence if it beats what needs no learning.
The report flags any method below its dataset's trivial baseline, so the
baseline is computed once, at preprocess time, and stored in ``meta.json``:

* classification (image / sentence): predict the train majority class;
* token tagging: each word's most frequent train tag; words never seen in
  train (and ``<unk>``) get the overall most frequent train tag;
* regression: predict the train mean.

Scores use ``autonorm.metrics`` so keys and units (accuracy in percent,
RMSE in target units) are exactly those of the trained models' metrics.
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import torch

IGNORE_INDEX = -100

NAMES = {
    "image_classification": "majority class",
    "sequence_classification": "majority class",
    "token_classification": "most-frequent tag per word (unknown words: most frequent tag)",
    "regression": "train-mean predictor",
}


def _np(a) -> np.ndarray:
    return a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)


def trivial_baseline(task: str, train, test, meta: Dict[str, Any]) -> Dict[str, Any]:
    """``{"name": ..., "test": {metric: value}}`` for ``task`` from (x, y) pairs of train and test."""
    from ..metrics import classification_metrics, regression_metrics
    (x_tr, y_tr), (x_te, y_te) = train, test
    y_tr, y_te = _np(y_tr), _np(y_te)
    if task == "regression":
        mean = float(np.mean(y_tr.astype(np.float64)))
        pred = torch.full((len(y_te),), mean, dtype=torch.float64)
        scores = regression_metrics(pred, torch.as_tensor(y_te, dtype=torch.float64))
    elif task in ("image_classification", "sequence_classification"):
        n_cls = int(meta["num_classes"])
        majority = int(np.bincount(y_tr.astype(np.int64), minlength=n_cls).argmax())
        pred = torch.full((len(y_te),), majority, dtype=torch.int64)
        scores = classification_metrics(pred, torch.as_tensor(y_te, dtype=torch.int64), n_cls)
    elif task == "token_classification":
        n_tags = int(meta["num_tags"])
        x_tr, x_te = _np(x_tr).astype(np.int64), _np(x_te).astype(np.int64)
        keep = y_tr != IGNORE_INDEX
        words, tags = x_tr[keep], y_tr[keep].astype(np.int64)
        overall = int(np.bincount(tags, minlength=n_tags).argmax())
        vocab = int(max(words.max(initial=0), x_te.max(initial=0))) + 1
        counts = np.zeros((vocab, n_tags), dtype=np.int64)
        np.add.at(counts, (words, tags), 1)
        best = np.where(counts.sum(1) > 0, counts.argmax(1), overall)
        unk_id = meta.get("unk_id")
        if unk_id is not None and 0 <= int(unk_id) < vocab:
            best[int(unk_id)] = overall  # <unk> stands for words unseen in train
        keep_te = y_te != IGNORE_INDEX
        pred = torch.as_tensor(best[x_te[keep_te]], dtype=torch.int64)
        scores = classification_metrics(pred, torch.as_tensor(y_te[keep_te], dtype=torch.int64), n_tags)
    else:
        raise ValueError(f"no trivial baseline for task {task!r}")
    return {"name": NAMES[task], "test": {k: round(float(v), 6) for k, v in scores.items()}}
