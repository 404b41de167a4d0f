"""Tiny processed datasets written in the contract's on-disk form (README "Outputs", docs/data.md),
so the core library's tests do not depend on any download or preprocessing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch


def _save(d: Path, split: str, x, y):
    torch.save({"x": x, "y": y}, d / f"{split}.pt")


def _record(d: Path, split: str) -> dict:
    """The checksum record of one split file, as preprocessing writes it into meta.json."""
    p = d / f"{split}.pt"
    obj = torch.load(p, weights_only=True)
    return {"file": p.name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size,
            **{k: {"shape": list(obj[k].shape), "dtype": str(obj[k].dtype).replace("torch.", "")}
               for k in ("x", "y")}}


def rewrite_split(d: Path, split: str, obj: dict) -> None:
    """Replace a split and its checksum record, as a rerun of preprocess would (a test that
    changes a split on purpose: e.g. puts a NaN in it)."""
    torch.save(obj, d / f"{split}.pt")
    meta = json.loads((d / "meta.json").read_text())
    meta.setdefault("split_files", {})[split] = _record(d, split)
    (d / "meta.json").write_text(json.dumps(meta))


def make_processed(root: Path, task: str, n: int = 48, seed: int = 0) -> Path:
    g = torch.Generator().manual_seed(seed)
    d = Path(root) / task
    d.mkdir(parents=True, exist_ok=True)
    sizes = {"train": n, "val": n // 2, "test": n // 2}
    meta = {"name": f"tiny_{task}", "task": task, "standin": True, "description": "test fixture",
            "sizes": sizes, "split_seed": seed}
    for split, m in sizes.items():
        if task == "image_classification":
            y = torch.randint(0, 3, (m,), generator=g)
            x = (torch.rand(m, 3, 8, 8, generator=g) * 80 + y[:, None, None, None] * 60).to(torch.uint8)
            if split == "test":
                _save(d, "test_rot90", torch.rot90(x, 1, dims=(2, 3)), y)
        elif task in ("token_classification", "sequence_classification"):
            x = torch.randint(2, 12, (m, 6), generator=g)
            x[: m // 3, 4:] = 0  # padding
            if task == "token_classification":
                y = x % 3
                y[x == 0] = -100
            else:
                y = (x[:, 0] > 6).long()
        else:
            x = torch.randn(m, 4, generator=g)
            y = (3.0 * x[:, 0] - x[:, 1] + 10.0).float()
        _save(d, split, x, y)
    if task == "image_classification":
        meta.update(family="vision", num_classes=3, class_names=["a", "b", "c"],
                    image={"channels": 3, "height": 8, "width": 8, "mean": [0.4] * 3, "std": [0.25] * 3})
    elif task == "token_classification":
        meta.update(family="nlp", vocab_size=12, pad_id=0, unk_id=1, max_len=6, num_tags=3,
                    tag_names=["A", "B", "C"])
    elif task == "sequence_classification":
        meta.update(family="nlp", vocab_size=12, pad_id=0, unk_id=1, max_len=6, num_classes=2,
                    class_names=["neg", "pos"])
    else:
        meta.update(family="tabular", num_features=4, feature_names=list("abcd"), target_name="t",
                    y_mean=10.0, y_std=3.2)
    meta["split_files"] = {p.stem: _record(d, p.stem) for p in sorted(d.glob("*.pt"))}
    (d / "meta.json").write_text(json.dumps(meta))
    return d
