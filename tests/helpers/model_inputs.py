"""A tiny model of every task and a batch for it: dataset metas, a 2-block 16-wide model config,
and an input batch with the output shape it gives."""
from __future__ import annotations

import torch

META = {
    "image_classification": {"task": "image_classification", "num_classes": 3,
                             "image": {"channels": 3, "height": 8, "width": 8}},
    "token_classification": {"task": "token_classification", "vocab_size": 12, "pad_id": 0, "max_len": 6,
                             "num_tags": 4},
    "sequence_classification": {"task": "sequence_classification", "vocab_size": 12, "pad_id": 0, "max_len": 6,
                                "num_classes": 2},
    "regression": {"task": "regression", "num_features": 5},
}
MODEL = {"dim": 16, "depth": 2, "heads": 2, "mlp_ratio": 2.0, "patch_size": 4, "mlp_hidden": [16]}


def batch(task):
    """(a batch of 3 inputs of ``task``, the model's output shape on it)."""
    if task == "image_classification":
        return torch.randn(3, 3, 8, 8), (3,)
    if task == "token_classification":
        x = torch.randint(1, 12, (3, 6))
        x[0, 4:] = 0
        return x, (3, 6, 4)
    if task == "sequence_classification":
        x = torch.randint(1, 12, (3, 6))
        x[0, 3:] = 0
        return x, (3,)
    return torch.randn(3, 5), (3,)
