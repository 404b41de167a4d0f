"""Test metrics of docs/method.md section 5, computed from logits/predictions in torch.

Accuracy and macro precision/recall/F1 are reported in percent (the paper's unit);
macro averages run over the classes present in the targets or the predictions
(scikit-learn's convention), with 0 for an undefined precision or recall.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


def classification_metrics(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> dict[str, float]:
    pred, target = pred.reshape(-1).long().cpu(), target.reshape(-1).long().cpu()
    cm = torch.bincount(target * num_classes + pred, minlength=num_classes**2).reshape(num_classes, num_classes)
    cm = cm.double()
    tp = cm.diag()
    support, predicted = cm.sum(1), cm.sum(0)
    present = (support + predicted) > 0
    precision = torch.where(predicted > 0, tp / predicted.clamp_min(1), torch.zeros_like(tp))
    recall = torch.where(support > 0, tp / support.clamp_min(1), torch.zeros_like(tp))
    denom = precision + recall
    f1 = torch.where(denom > 0, 2 * precision * recall / denom.clamp_min(1e-300), torch.zeros_like(tp))
    n = float(cm.sum())
    return {
        "accuracy": 100.0 * float(tp.sum()) / max(n, 1.0),
        "precision_macro": 100.0 * float(precision[present].mean()),
        "recall_macro": 100.0 * float(recall[present].mean()),
        "f1_macro": 100.0 * float(f1[present].mean()),
    }


def tagging_metrics(logits: torch.Tensor, target: torch.Tensor, num_tags: int) -> dict[str, float]:
    """Token-level metrics over real (non-padding) tokens, plus the tag perplexity
    exp(mean token cross-entropy) of docs/method.md section 5 (not a language-model perplexity)."""
    logits = logits.reshape(-1, logits.shape[-1]).float().cpu()
    target = target.reshape(-1).long().cpu()
    keep = target != IGNORE_INDEX
    logits, target = logits[keep], target[keep]
    out = classification_metrics(logits.argmax(-1), target, num_tags)
    out["tag_perplexity"] = math.exp(float(F.cross_entropy(logits, target)))
    return out


def regression_metrics(pred: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
    err = pred.reshape(-1).double().cpu() - target.reshape(-1).double().cpu()
    return {"rmse": float(err.pow(2).mean().sqrt()), "mae": float(err.abs().mean())}


# The metric each task reports every epoch on the validation set, and whether higher is better.
VAL_METRIC = {
    "image_classification": ("accuracy", True),
    "sequence_classification": ("accuracy", True),
    "token_classification": ("accuracy", True),
    "regression": ("rmse", False),
}


def task_metrics(task: str, outputs: torch.Tensor, target: torch.Tensor, meta: dict) -> dict[str, float]:
    """Outputs are logits (classification) or predictions in the target's units (regression)."""
    if task == "regression":
        return regression_metrics(outputs, target)
    if task == "token_classification":
        return tagging_metrics(outputs, target, meta["num_tags"])
    return classification_metrics(outputs.argmax(-1), target, meta["num_classes"])
