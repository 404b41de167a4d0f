"""Pick the backbone from the dataset's task and the method."""

from __future__ import annotations

from torch import nn

from ..methods import get_method
from .mlp import TeacherMLP
from .tabular import TabularTransformer
from .text import TextEncoder
from .vit import ViTLite


def build_model(meta: dict, method: str, model_cfg: dict, norm_options: dict | None = None) -> nn.Module:
    """``meta`` is the processed dataset's meta.json; ``model_cfg`` the family's model block."""
    m = get_method(method)
    task = meta["task"]
    cfg = dict(model_cfg)
    norm_options = dict(norm_options or {})
    if m.backbone == "mlp":
        if task == "image_classification":
            img = meta["image"]
            in_features = img["channels"] * img["height"] * img["width"]
        else:
            in_features = meta.get("num_features", 0)
        return TeacherMLP(task, in_features, _num_outputs(meta), hidden=tuple(cfg.get("mlp_hidden", (512, 256))),
                          dropout=cfg.get("dropout", 0.1), vocab_size=meta.get("vocab_size"),
                          embed_dim=cfg.get("dim", 128), pad_id=meta.get("pad_id", 0))
    if task == "image_classification":
        img = meta["image"]
        if img["height"] != img["width"]:
            raise ValueError("ViT-Lite expects square images")
        return ViTLite(img["height"], img["channels"], meta["num_classes"], m.norm,
                       norm_options=norm_options, **cfg)
    if task in ("token_classification", "sequence_classification"):
        return TextEncoder(meta["vocab_size"], meta["max_len"], _num_outputs(meta), task, m.norm,
                           pad_id=meta.get("pad_id", 0), norm_options=norm_options, **cfg)
    if task == "regression":
        return TabularTransformer(meta["num_features"], m.norm, norm_options=norm_options, **cfg)
    raise ValueError(f"unknown task {task!r}")


def _num_outputs(meta: dict) -> int:
    if meta["task"] == "token_classification":
        return meta["num_tags"]
    if meta["task"] == "regression":
        return 1
    return meta["num_classes"]
