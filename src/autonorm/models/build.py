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
    norm = gated_norm_name(m.norm, norm_options.pop("gates", 2))
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
        return ViTLite(img["height"], img["channels"], meta["num_classes"], norm,
                       norm_options=norm_options, **cfg)
    if task in ("token_classification", "sequence_classification"):
        return TextEncoder(meta["vocab_size"], meta["max_len"], _num_outputs(meta), task, norm,
                           pad_id=meta.get("pad_id", 0), norm_options=norm_options, **cfg)
    if task == "regression":
        return TabularTransformer(meta["num_features"], norm, norm_options=norm_options, **cfg)
    raise ValueError(f"unknown task {task!r}")


def gated_norm_name(norm: str | None, gates: int) -> str | None:
    """The norm a method builds given ``autonorm.gates``: 3 turns AutoNorm (DyT / LN) into the
    three-way gate DyT / LN / RMSNorm (the paper's PTB ablation); other norms have no gate to widen
    (like ``tau``, the option is theirs to ignore)."""
    if int(gates) not in (2, 3):
        raise ValueError(f"autonorm.gates must be 2 or 3, got {gates!r}")
    return "autonorm3" if int(gates) == 3 and norm == "autonorm" else norm


def _num_outputs(meta: dict) -> int:
    if meta["task"] == "token_classification":
        return meta["num_tags"]
    if meta["task"] == "regression":
        return 1
    return meta["num_classes"]
