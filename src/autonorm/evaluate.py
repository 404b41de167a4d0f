"""Evaluate one trained run: test metrics, rotation and CIFAR-10-C accuracy, cost.

    autonorm-evaluate --run-dir results/runs/cifar10/autonorm_s/seed0 \
        --data-dir results/data/cifar10 --corruptions results/data/cifar10c \
        --out results/eval/cifar10/autonorm_s/seed0.json

Rotation accuracy is test accuracy on the 90-degree rotated test images (no
rotation augmentation in training). Corruption accuracy is reported for every
corruption x severity, the paper's subset at severity 3 and their mean, and
the mean over all 15 x 5.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import numpy as np
import torch

from .data import CORRUPTIONS, load_corruptions, load_processed
from .device import resolve_device
from .io_utils import read_json, write_json_atomic
from .metrics import classification_metrics
from .tasks import Task, load_trained_model, run_eval

log = logging.getLogger("autonorm.evaluate")

PAPER_CORRUPTIONS = ("gaussian_noise", "motion_blur", "brightness")


@torch.no_grad()
def accuracy_on(model, task: Task, x_uint8: torch.Tensor, y: torch.Tensor, batch_size: int) -> float:
    preds = []
    for i in range(0, x_uint8.shape[0], batch_size):
        preds.append(model(task.inputs(x_uint8[i:i + batch_size])).argmax(-1))
    return classification_metrics(torch.cat(preds), y, task.num_classes)["accuracy"]


def corruption_accuracies(model, task: Task, corr_dir: str | Path, device: torch.device,
                          batch_size: int) -> tuple[dict, dict]:
    meta, arrays, labels = load_corruptions(corr_dir)
    n = int(meta["n_per_severity"])
    y_all = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    out = {}
    for name in CORRUPTIONS:
        out[name] = {}
        imgs = arrays[name]
        for s in range(1, int(meta.get("severities", 5)) + 1):
            # official layout: NHWC uint8, severity s in rows (s-1)*n .. s*n
            block = torch.as_tensor(np.ascontiguousarray(imgs[(s - 1) * n:s * n])).permute(0, 3, 1, 2)
            out[name][str(s)] = accuracy_on(model, task, block.to(device), y_all[(s - 1) * n:s * n], batch_size)
    return out, meta


def summarise_corruptions(acc: dict, severity: int = 3) -> dict:
    s = str(severity)
    summary = {f"{c}_s{s}": acc[c][s] for c in PAPER_CORRUPTIONS}
    summary[f"mean_s{s}"] = float(np.mean([acc[c][s] for c in PAPER_CORRUPTIONS]))
    summary["mean_all"] = float(np.mean([v for c in acc.values() for v in c.values()]))
    return summary


def evaluate_run(run_dir: str | Path, data_dir: str | Path, corr_dir: str | Path | None = None,
                 device_name: str = "auto", batch_size: int = 1000, severity: int = 3) -> dict:
    run_dir = Path(run_dir)
    metrics = read_json(run_dir / "metrics.json")
    cfg = read_json(run_dir / "config.json")
    device = resolve_device(device_name)
    data = load_processed(data_dir)
    task = Task(data.meta, cfg["train"], device)
    model = load_trained_model(run_dir, data.meta, device)
    x_te, y_te = data.split("test", device=device)
    _, test, _ = run_eval(model, task, x_te, y_te, batch_size)
    result = {"dataset": metrics["dataset"], "method": metrics["method"], "seed": metrics["seed"],
              "status": "ok", "standin": bool(data.meta.get("standin", False)), "task": task.kind, "test": test,
              "rotation": None, "corruptions": None, "corruption_summary": None,
              "corruption_generated": None, "cost": metrics["cost"]}
    if task.kind == "image_classification":
        x_rot, y_rot = data.split("test_rot90", device=device)
        result["rotation"] = {"accuracy": accuracy_on(model, task, x_rot, y_rot, batch_size)}
    if corr_dir:
        acc, cmeta = corruption_accuracies(model, task, corr_dir, device, batch_size)
        result["corruptions"] = acc
        result["corruption_summary"] = summarise_corruptions(acc, severity)
        result["corruption_generated"] = bool(cmeta.get("generated", False))
        result["corruption_source"] = cmeta.get("source")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--corruptions", help="corruption set folder (official CIFAR-10-C layout)")
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--severity", type=int, default=3, help="severity of the paper's corruption table")
    p.add_argument("--threads", type=int)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    failed = Path(args.run_dir) / "failed.json"
    if failed.exists():
        # A diverged run has no model to evaluate: record it so the report lists it.
        info = read_json(failed)
        status = read_json(Path(args.run_dir) / "config.json")
        result = {"dataset": status["dataset"], "method": status["method"], "seed": status["seed"],
                  "status": "diverged", "message": info.get("message")}
        write_json_atomic(args.out, result)
        log.warning("run diverged: %s", info.get("message"))
        return 0
    result = evaluate_run(args.run_dir, args.data_dir, args.corruptions, args.device, args.batch_size,
                          args.severity)
    write_json_atomic(args.out, result)
    log.info("%s", json.dumps({k: result[k] for k in ("test", "rotation", "corruption_summary")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
