"""What the trainer and the evaluator share: the task adapter, batch mixing,
the eval loop, and rebuilding a trained model from its run folder."""

from __future__ import annotations

import contextlib
import json
import math
import random
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..data.augment import normalize_images, random_crop_flip
from ..io_utils import verify_model_file
from ..metrics import IGNORE_INDEX, task_metrics
from ..models import build_model
from ..layers.norms import gate_entropy, recording_gates


# Tasks whose inputs are token ids padded with ``pad_id``.
TOKEN_TASKS = ("token_classification", "sequence_classification")


class Task:
    """Everything task-specific: input preparation, training loss, outputs for metrics."""

    def __init__(self, meta: dict, train_cfg: dict, device: torch.device):
        self.meta, self.cfg, self.device = meta, train_cfg, device
        self.kind = meta["task"]
        if self.kind == "image_classification":
            img = meta["image"]
            self.mean = torch.tensor(img["mean"], device=device, dtype=torch.float32)
            self.std = torch.tensor(img["std"], device=device, dtype=torch.float32)
        if self.kind == "regression":
            self.y_mean, self.y_std = float(meta["y_mean"]), float(meta["y_std"])

    @property
    def num_classes(self) -> int:
        return self.meta.get("num_tags") or self.meta.get("num_classes") or 1

    def inputs(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "image_classification":
            return normalize_images(x, self.mean, self.std)
        return x

    def trim_padding(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Drop the trailing columns that are padding in every row of a token batch.

        Splits are padded to ``max_len`` once at preprocessing, but a shuffled SST-2 batch of short
        phrases is mostly padding. Attention, pooling and the gates all mask padding, so the trimmed
        batch gives the same outputs on the real tokens at a fraction of the cost.
        """
        if self.kind not in TOKEN_TASKS:
            return x, y
        real_cols = (x != self.meta.get("pad_id", 0)).any(0).nonzero()
        keep = int(real_cols.max()) + 1 if real_cols.numel() else 1
        if keep == x.shape[1]:
            return x, y
        return x[:, :keep], (y[:, :keep] if self.kind == "token_classification" else y)

    def augment(self, x: torch.Tensor, y: torch.Tensor, gen: torch.Generator, rng: random.Random):
        """Training-time augmentation on the device; returns inputs and (soft) targets."""
        if self.kind in TOKEN_TASKS:
            return self.word_dropout(x, gen), y
        if self.kind != "image_classification":
            return x, y
        cfg = self.cfg
        if cfg.get("crop_padding", 0) > 0 or cfg.get("flip", False):
            x = random_crop_flip(x, cfg.get("crop_padding", 0), gen, flip=cfg.get("flip", False))
        ls = cfg.get("label_smoothing", 0.0)
        target = F.one_hot(y, self.num_classes).float() * (1.0 - ls) + ls / self.num_classes
        return mix_batch(x, target, rng, cfg)

    def word_dropout(self, x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        """Replace each real token by <unk> with probability ``word_dropout`` (train option, 0 = off).

        Words unseen in training map to <unk> at test time, but <unk> never occurs in the training
        split, so without this the model has never learnt to tag an unknown word from its context.
        """
        p = float(self.cfg.get("word_dropout", 0.0))
        if p <= 0:
            return x
        pad_id, unk_id = self.meta.get("pad_id", 0), self.meta.get("unk_id", 1)
        drop = (torch.rand(x.shape, generator=gen, device=x.device) < p) & (x != pad_id)
        return torch.where(drop, torch.full_like(x, unk_id), x)

    def loss(self, out: torch.Tensor, target: torch.Tensor, smoothing: float) -> torch.Tensor:
        out = out.float()
        if self.kind == "regression":
            return F.mse_loss(out, (target - self.y_mean) / self.y_std)
        if target.dtype.is_floating_point:  # soft targets from MixUp/CutMix (smoothing folded in)
            return torch.sum(-target * F.log_softmax(out, dim=-1), dim=-1).mean()
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1),
                               ignore_index=IGNORE_INDEX, label_smoothing=smoothing)

    def outputs_for_metrics(self, out: torch.Tensor) -> torch.Tensor:
        if self.kind == "regression":
            return out.float() * self.y_std + self.y_mean
        return out.float()


def token_lengths(x: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Per row: the position after its last real token (rows are right-padded)."""
    pos = torch.arange(1, x.shape[1] + 1, device=x.device)
    return ((x != pad_id).long() * pos).amax(dim=1)


def epoch_batches(n: int, batch_size: int, gen: torch.Generator, device,
                  lengths: torch.Tensor | None = None, pool_batches: int = 50) -> list[torch.Tensor]:
    """The index batches of one training epoch.

    Without ``lengths``: consecutive slices of one random permutation. With ``lengths`` (train
    option ``length_batching``, token tasks): the permutation is cut into pools of
    ``pool_batches`` batches, each pool is sorted by length and sliced into batches, and the batch
    order is shuffled, so a batch holds sentences of similar length and little padding is computed
    (the "bucket iterator" of NLP toolkits). Every example is still seen once per epoch; the count
    of batches depends only on ``n``, so the learning-rate schedule is known before the first epoch.
    """
    perm = torch.randperm(n, generator=gen, device=device)
    if lengths is None:
        return [perm[b:b + batch_size] for b in range(0, n, batch_size)]
    pool = batch_size * pool_batches
    batches = []
    for start in range(0, n, pool):
        idx = perm[start:start + pool]
        idx = idx[torch.sort(lengths[idx], stable=True).indices]
        batches.extend(idx[b:b + batch_size] for b in range(0, idx.shape[0], batch_size))
    order = torch.randperm(len(batches), generator=gen, device=device)
    return [batches[i] for i in order.tolist()]


def batches_per_epoch(n: int, batch_size: int, length_batching: bool, pool_batches: int = 50) -> int:
    """``len(epoch_batches(...))`` without drawing anything."""
    if not length_batching:
        return math.ceil(n / batch_size)
    pool = batch_size * pool_batches
    full, rest = divmod(n, pool)
    return full * pool_batches + math.ceil(rest / batch_size)


def mix_batch(x: torch.Tensor, target: torch.Tensor, rng: random.Random, cfg: dict):
    """MixUp or CutMix with the batch reversed as partner (no per-sample Python).

    ``rng`` is a host-side ``random.Random`` so the draws are part of the
    checkpointed state; one of the two is chosen with equal odds when both are on.
    """
    mixup_a, cutmix_a = cfg.get("mixup_alpha", 0.0), cfg.get("cutmix_alpha", 0.0)
    if (mixup_a <= 0 and cutmix_a <= 0) or rng.random() >= cfg.get("mix_prob", 1.0):
        return x, target
    use_cutmix = cutmix_a > 0 and (mixup_a <= 0 or rng.random() < 0.5)
    if use_cutmix:
        lam = rng.betavariate(cutmix_a, cutmix_a)
        h, w = x.shape[-2:]
        cut = math.sqrt(1.0 - lam)
        ch, cw = int(h * cut), int(w * cut)
        cy, cx = rng.randrange(h), rng.randrange(w)
        y1, y2 = max(cy - ch // 2, 0), min(cy + ch // 2, h)
        x1, x2 = max(cx - cw // 2, 0), min(cx + cw // 2, w)
        x = x.clone()
        x[:, :, y1:y2, x1:x2] = x.flip(0)[:, :, y1:y2, x1:x2]
        lam = 1.0 - (y2 - y1) * (x2 - x1) / float(h * w)
    else:
        lam = rng.betavariate(mixup_a, mixup_a)
        x = lam * x + (1.0 - lam) * x.flip(0)
    return x, lam * target + (1.0 - lam) * target.flip(0)


@torch.no_grad()
def run_eval(model: nn.Module, task: Task, x: torch.Tensor, y: torch.Tensor, batch_size: int,
             autocast: bool = False, gates: bool = False) -> tuple[float, dict, dict | None]:
    """Loss, metrics and (optionally) per-selector gate diagnostics on one split."""
    model.eval()
    with recording_gates(model) if gates else contextlib.nullcontext({}) as learned:
        # each gate's choices by name (GatedNorm.choice_names): the paper's is ("dyt", "ln")
        names = {n: tuple(getattr(m, "choice_names", ("dyt", "ln"))) for n, m in learned.items()}
        sums = {n: {"h": 0.0, "w": [0.0] * len(names[n])} for n in learned}
        outs, total_loss, count = [], 0.0, 0
        for i in range(0, x.shape[0], batch_size):
            xb, yb = task.trim_padding(x[i:i + batch_size], y[i:i + batch_size])
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
                out = model(task.inputs(xb))
            total_loss += float(task.loss(out, yb, 0.0)) * yb.shape[0]
            count += yb.shape[0]
            out = task.outputs_for_metrics(out)
            if out.dim() == 3 and out.shape[1] < x.shape[1]:  # tags of trimmed padding: back to full width
                out = F.pad(out, (0, 0, 0, x.shape[1] - out.shape[1]))
            outs.append(out)
            for n, m in learned.items():
                w = m.last_weights.float()
                sums[n]["h"] += float(gate_entropy(w).sum())
                for i in range(len(names[n])):
                    sums[n]["w"][i] += float(w[:, i].sum())
    metrics = task_metrics(task.kind, torch.cat(outs), y, task.meta)
    gate_stats = None
    if learned:
        n_samples = x.shape[0]
        ent = {n: s["h"] / n_samples for n, s in sums.items()}
        weights = {n: {c: s["w"][i] / n_samples for i, c in enumerate(names[n])} for n, s in sums.items()}
        # the paper's two choices under their own keys, only where a gate has them: a gate between
        # RMSNorm and DyT has no w_LN, and its first choice is not "DyT"
        wd = {n: w["dyt"] for n, w in weights.items() if "dyt" in w}
        wl = {n: w["ln"] for n, w in weights.items() if "ln" in w}
        gate_stats = {"entropy": ent, "weights": weights, "w_dyt": wd, "w_ln": wl,
                      "mean_entropy": sum(ent.values()) / len(ent),
                      "mean_w_dyt": sum(wd.values()) / len(wd) if wd else None}
    return total_loss / max(count, 1), metrics, gate_stats


def load_trained_model(run_dir: str | Path, meta: dict, device: torch.device) -> nn.Module:
    """Rebuild a run's model from its config.json and model.pt (weights only), after checking
    model.pt against the hash recorded at training (:func:`verify_model_file`)."""
    run_dir = Path(run_dir)
    verify_model_file(run_dir)
    cfg = json.loads((run_dir / "config.json").read_text())
    model = build_model(meta, cfg["method"], cfg["model"], cfg.get("norm_options", {}))
    model.load_state_dict(torch.load(run_dir / "model.pt", map_location="cpu", weights_only=True))
    return model.to(device).eval()
