"""One training run: dataset x method x seed -> a run folder (see README "Outputs").

    autonorm-train --run-config run.json          # or a JSON string
    autonorm-train --config config.yaml --dataset mnist --method autonorm_s --seed 0

The run checkpoints every epoch (atomically) and resumes from the checkpoint
when rerun with the same config; on CPU a resumed run ends with the same
metrics as an uninterrupted one. A NaN/inf loss stops the run with an error
naming the epoch and step and writes ``failed.json`` instead of metrics.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from . import cost
from .config import load_config, resolve_run_config
from .data import load_processed
from .data.augment import normalize_images, random_crop_flip
from .device import resolve_device
from .io_utils import write_json_atomic
from .methods import get_method
from .metrics import IGNORE_INDEX, VAL_METRIC, task_metrics
from .models import build_model
from .norms import freeze_selectors, gate_entropy, gated_norms
from .provenance import config_hash, env_info

log = logging.getLogger("autonorm.train")

CHECKPOINT_FORMAT = 1


class TrainingDiverged(RuntimeError):
    pass


# --------------------------------------------------------------------------- task adapter
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

    def augment(self, x: torch.Tensor, y: torch.Tensor, gen: torch.Generator, rng: random.Random):
        """Training-time augmentation on the device; returns inputs and (soft) targets."""
        if self.kind != "image_classification":
            return x, y
        cfg = self.cfg
        if cfg.get("crop_padding", 0) > 0 or cfg.get("flip", False):
            x = random_crop_flip(x, cfg.get("crop_padding", 0), gen, flip=cfg.get("flip", False))
        ls = cfg.get("label_smoothing", 0.0)
        target = F.one_hot(y, self.num_classes).float() * (1.0 - ls) + ls / self.num_classes
        return mix_batch(x, target, rng, cfg)

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


# --------------------------------------------------------------------------- schedule
def lr_at(step: int, total_steps: int, warmup_steps: int, base_lr: float, min_lr: float = 0.0) -> float:
    """Linear warm-up to base_lr, then cosine decay to min_lr."""
    if warmup_steps > 0 and step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(total_steps - warmup_steps, 1)
    progress = min(max(progress, 0.0), 1.0)
    return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model: nn.Module, cfg: dict) -> torch.optim.Optimizer:
    """AdamW; biases, norm parameters, scalars, tokens and positions get no weight decay."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 or "pos" in name or "cls" in name or ".norm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg["weight_decay"]},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=tuple(cfg.get("betas", (0.9, 0.999))))


# --------------------------------------------------------------------------- evaluation
@torch.no_grad()
def run_eval(model: nn.Module, task: Task, x: torch.Tensor, y: torch.Tensor, batch_size: int,
             autocast: bool = False, gates: bool = False) -> tuple[float, dict, dict | None]:
    """Loss, metrics and (optionally) per-selector gate diagnostics on one split."""
    model.eval()
    learned = {n: m for n, m in gated_norms(model).items() if hasattr(m, "selector")} if gates else {}
    for m in learned.values():
        m.record = True
    sums = {n: {"h": 0.0, "w": 0.0} for n in learned}
    outs, total_loss, count = [], 0.0, 0
    try:
        for i in range(0, x.shape[0], batch_size):
            xb, yb = task.inputs(x[i:i + batch_size]), y[i:i + batch_size]
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
                out = model(xb)
            total_loss += float(task.loss(out, yb, 0.0)) * yb.shape[0]
            count += yb.shape[0]
            outs.append(task.outputs_for_metrics(out))
            for n, m in learned.items():
                w = m.last_weights.float()
                sums[n]["h"] += float(gate_entropy(w).sum())
                sums[n]["w"] += float(w[:, 0].sum())
    finally:
        for m in learned.values():
            m.record, m.last_weights = False, None
    metrics = task_metrics(task.kind, torch.cat(outs), y, task.meta)
    gate_stats = None
    if learned:
        n_samples = x.shape[0]
        ent = {n: s["h"] / n_samples for n, s in sums.items()}
        wd = {n: s["w"] / n_samples for n, s in sums.items()}
        gate_stats = {"entropy": ent, "w_dyt": wd, "mean_entropy": sum(ent.values()) / len(ent),
                      "mean_w_dyt": sum(wd.values()) / len(wd)}
    return total_loss / max(count, 1), metrics, gate_stats


# --------------------------------------------------------------------------- checkpoint
def _save_atomic(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _rng_state(gen: torch.Generator, rng: random.Random) -> dict:
    version, state, gauss = rng.getstate()
    return {"torch": torch.get_rng_state(), "data": gen.get_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "py": [version, list(state), gauss]}


def _set_rng_state(s: dict, gen: torch.Generator, rng: random.Random) -> None:
    torch.set_rng_state(s["torch"])
    gen.set_state(s["data"])
    if s["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(s["cuda"])
    version, state, gauss = s["py"]
    rng.setstate((version, tuple(state), gauss))


# --------------------------------------------------------------------------- the run
def _setup_determinism(seed: int, runtime: dict) -> None:
    if runtime.get("threads"):
        torch.set_num_threads(int(runtime["threads"]))
    torch.manual_seed(seed)
    if runtime.get("deterministic", True):
        torch.use_deterministic_algorithms(True, warn_only=True)


def train_run(cfg: dict, stop_after_epochs: int | None = None) -> dict | None:
    """Train (or resume) one run described by a resolved run config.

    Returns the final metrics, or None when ``stop_after_epochs`` stopped it
    early (used to simulate a preemption in tests).
    """
    t_start = time.time()
    out_dir = Path(cfg["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "failed.json").unlink(missing_ok=True)
    method = get_method(cfg["method"])
    runtime, tcfg, acfg = cfg.get("runtime", {}), cfg["train"], cfg.get("autonorm", {})
    _setup_determinism(int(cfg["seed"]), runtime)
    device = resolve_device(runtime.get("device", "auto"))
    autocast = bool(runtime.get("bf16", False)) and device.type == "cuda"

    data = load_processed(cfg["data_dir"])
    meta = data.meta
    x_tr, y_tr = data.split("train", device=device)
    x_va, y_va = data.split("val", device=device)
    task = Task(meta, tcfg, device)

    model = build_model(meta, cfg["method"], cfg["model"], cfg.get("norm_options", {})).to(device)
    step_model = torch.compile(model) if runtime.get("compile") and device.type == "cuda" else model
    opt = make_optimizer(model, tcfg)

    epochs, bs = int(tcfg["epochs"]), int(tcfg["batch_size"])
    steps_per_epoch = math.ceil(x_tr.shape[0] / bs)
    total_steps = epochs * steps_per_epoch
    warmup_steps = int(round(tcfg.get("warmup_epochs", 0) * steps_per_epoch))
    freeze_enabled = bool(method.freeze_selectors and acfg.get("freeze_enabled", True))
    freeze = {"enabled": freeze_enabled, "t_freeze": acfg.get("t_freeze"), "eps_h": acfg.get("eps_h"),
              "froze": False, "epoch": None, "entropy_at_decision": None}

    gen = torch.Generator(device=device)
    gen.manual_seed(int(cfg["seed"]))
    rng = random.Random(int(cfg["seed"]))
    history: list[dict] = []
    start_epoch, step, train_time = 0, 0, 0.0
    chash = config_hash({k: v for k, v in cfg.items() if k not in ("out_dir",)})
    ckpt_path = out_dir / "checkpoint.pt"

    if ckpt_path.exists():
        ckpt = torch.load(ckpt_path, map_location=device, weights_only=True)
        if ckpt.get("format") == CHECKPOINT_FORMAT and ckpt.get("config_hash") == chash:
            if ckpt["freeze"]["froze"]:
                freeze_selectors(model)
            model.load_state_dict(ckpt["model"])
            opt.load_state_dict(ckpt["optimizer"])
            history, freeze = ckpt["history"], ckpt["freeze"]
            start_epoch, step, train_time = ckpt["epoch"], ckpt["step"], ckpt["train_time_s"]
            _set_rng_state(ckpt["rng"], gen, rng)
            log.info("resumed from %s after epoch %d", ckpt_path, start_epoch)
        else:
            log.warning("ignoring checkpoint %s: it belongs to another config", ckpt_path)
        del ckpt

    write_json_atomic(out_dir / "config.json", cfg)
    write_json_atomic(out_dir / "env.json", env_info(device))
    metric_name, _ = VAL_METRIC[task.kind]
    smoothing = float(tcfg.get("label_smoothing", 0.0))
    log.info("%s / %s / seed %s: %d params, %d epochs x %d steps on %s", cfg["dataset"], cfg["method"],
             cfg["seed"], cost.count_params(model), epochs, steps_per_epoch, device)

    for epoch in range(start_epoch + 1, epochs + 1):
        t0 = time.time()
        model.train()
        perm = torch.randperm(x_tr.shape[0], generator=gen, device=device)
        loss_sum = torch.zeros((), device=device)
        for b in range(steps_per_epoch):
            idx = perm[b * bs:(b + 1) * bs]
            xb, yb = task.augment(task.inputs(x_tr[idx]), y_tr[idx], gen, rng)
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total_steps, warmup_steps, tcfg["lr"], tcfg.get("min_lr", 0.0))
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                out = step_model(xb)
            loss = task.loss(out, yb, smoothing)
            if not torch.isfinite(loss):
                msg = (f"{cfg['dataset']}/{cfg['method']}/seed{cfg['seed']}: loss is {float(loss.detach())} "
                       f"at epoch {epoch}, step {b + 1} (global step {step + 1}); no metrics written")
                write_json_atomic(out_dir / "failed.json", {"status": "diverged", "epoch": epoch,
                                                            "step": b + 1, "message": msg})
                raise TrainingDiverged(msg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if tcfg.get("grad_clip"):
                nn.utils.clip_grad_norm_(model.parameters(), tcfg["grad_clip"])
            opt.step()
            loss_sum += loss.detach()
            step += 1
        train_loss = float(loss_sum) / steps_per_epoch
        val_loss, val_metrics, gates = run_eval(model, task, x_va, y_va, int(tcfg.get("eval_batch_size", 512)),
                                                autocast, gates=True)
        if freeze_enabled and not freeze["froze"] and epoch == int(acfg["t_freeze"]) and gates:
            freeze["entropy_at_decision"] = gates["mean_entropy"]
            # SPEC 1: freeze when the entropy has NOT collapsed below eps_H by T_freeze.
            if gates["mean_entropy"] >= float(acfg["eps_h"]):
                freeze_selectors(model)
                freeze.update(froze=True, epoch=epoch)
        epoch_time = time.time() - t0
        train_time += epoch_time
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss,
                        "val_metric": val_metrics[metric_name], "val_metric_name": metric_name,
                        "lr": opt.param_groups[0]["lr"], "epoch_time_s": epoch_time,
                        "frozen": freeze["froze"], "gates": gates})
        gate_txt = f" H={gates['mean_entropy']:.3f} w_dyt={gates['mean_w_dyt']:.3f}" if gates else ""
        log.info("epoch %d/%d loss %.4f val_%s %.4f%s%s (%.1fs)", epoch, epochs, train_loss, metric_name,
                 val_metrics[metric_name], gate_txt, " [selectors frozen]" if freeze["froze"] else "",
                 epoch_time)
        _save_atomic({"format": CHECKPOINT_FORMAT, "config_hash": chash, "epoch": epoch, "step": step,
                      "train_time_s": train_time, "model": model.state_dict(), "optimizer": opt.state_dict(),
                      "history": history, "freeze": freeze, "rng": _rng_state(gen, rng)}, ckpt_path)
        write_json_atomic(out_dir / "history.json", history)
        if stop_after_epochs is not None and epoch >= stop_after_epochs and epoch < epochs:
            log.info("stopping after epoch %d as asked (simulated preemption)", epoch)
            return None

    return _finish(cfg, model, task, data, device, autocast, history, freeze, train_time, t_start)


def _finish(cfg, model, task, data, device, autocast, history, freeze, train_time, t_start) -> dict:
    ebs = int(cfg["train"].get("eval_batch_size", 512))
    x_va, y_va = data.split("val", device=device)
    x_te, y_te = data.split("test", device=device)
    _, val_metrics, _ = run_eval(model, task, x_va, y_va, ebs, autocast)
    _, test_metrics, _ = run_eval(model, task, x_te, y_te, ebs, autocast)
    example = task.inputs(x_te[:ebs])
    ecfg = cfg.get("evaluation", {})
    costs = {
        "params": cost.count_params(model),
        "flops_per_sample": cost.flops_per_sample(model, example),
        "latency_ms_per_batch": cost.latency_ms_per_batch(model, example, ecfg.get("latency_repeats", 10)),
        "latency_batch_size": int(example.shape[0]),
        "train_wall_time_s": train_time,
        "device": str(device),
    }
    metrics = {"dataset": cfg["dataset"], "method": cfg["method"], "seed": cfg["seed"], "task": task.kind,
               "family": data.meta.get("family"), "standin": bool(data.meta.get("standin", False)),
               "status": "ok", "epochs": len(history), "test": test_metrics, "val": val_metrics,
               "cost": costs, "wall_time_s": time.time() - t_start}
    out_dir = Path(cfg["out_dir"])
    _save_atomic(model.state_dict(), out_dir / "model.pt")
    write_json_atomic(out_dir / "freeze.json", freeze)
    write_json_atomic(out_dir / "metrics.json", metrics)  # last: its presence means the run is done
    log.info("test %s", json.dumps(test_metrics))
    return metrics


def load_trained_model(run_dir: str | Path, meta: dict, device: torch.device) -> nn.Module:
    """Rebuild a run's model from its config.json and model.pt (weights only)."""
    run_dir = Path(run_dir)
    cfg = json.loads((run_dir / "config.json").read_text())
    model = build_model(meta, cfg["method"], cfg["model"], cfg.get("norm_options", {}))
    model.load_state_dict(torch.load(run_dir / "model.pt", map_location="cpu", weights_only=True))
    return model.to(device).eval()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-config", help="resolved run config: a JSON string or a path to a JSON file")
    p.add_argument("--config", help="workflow config.yaml (with --dataset/--method/--seed)")
    p.add_argument("--configfile", action="append", default=[], help="extra config files merged on top")
    p.add_argument("--dataset")
    p.add_argument("--method")
    p.add_argument("--seed", type=int)
    p.add_argument("--out-dir", help="override the run folder")
    p.add_argument("--data-dir", help="override the processed dataset folder")
    p.add_argument("--threads", type=int, help="torch CPU threads (overrides runtime.threads)")
    p.add_argument("--record-divergence", action="store_true",
                   help="on a NaN/inf loss write status.json 'diverged' and exit 0 (the workflow's mode)")
    p.add_argument("--stop-after-epochs", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(message)s")

    if args.run_config:
        text = args.run_config
        cfg = json.loads(Path(text).read_text() if not text.lstrip().startswith("{") else text)
    elif args.config and args.dataset and args.method and args.seed is not None:
        cfg = resolve_run_config(load_config(args.config, *args.configfile), args.dataset, args.method, args.seed)
    else:
        p.error("give --run-config, or --config with --dataset, --method and --seed")
    if args.out_dir:
        cfg["out_dir"] = args.out_dir
    if args.data_dir:
        cfg["data_dir"] = args.data_dir
    if args.threads:
        cfg.setdefault("runtime", {})["threads"] = args.threads
    status_path = Path(cfg["out_dir"]) / "status.json"
    try:
        metrics = train_run(cfg, stop_after_epochs=args.stop_after_epochs)
    except TrainingDiverged as e:
        log.error("%s", e)
        if not args.record_divergence:
            return 3
        write_json_atomic(status_path, {"status": "diverged", "message": str(e)})
        return 0
    if metrics is not None:
        write_json_atomic(status_path, {"status": "ok", "test": metrics["test"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
