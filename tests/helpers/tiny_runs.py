"""Tiny runs: a run config for a 2-block, 16-wide model on a tiny processed dataset
(helpers.tiny_datasets), a run folder's model files written by hand, and one trained run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from .tiny_datasets import make_processed


TINY_MODEL = {"dim": 16, "depth": 2, "heads": 2, "mlp_ratio": 2.0, "patch_size": 4, "drop_path": 0.1,
              "dropout": 0.1, "layerscale_init": 1e-4, "mlp_hidden": [16]}


def run_config(data_dir: Path, out_dir: Path, method: str = "autonorm_s", seed: int = 0, epochs: int = 3,
               **autonorm) -> dict:
    auto = {"tau": 0.5, "t_freeze": 1, "eps_h": 0.1, "freeze_enabled": True, "drop_noise_when_frozen": True}
    auto.update(autonorm)
    return {
        "dataset": "tiny", "method": method, "seed": seed, "family": "x",
        "data_dir": str(data_dir), "out_dir": str(out_dir),
        "model": dict(TINY_MODEL),
        "train": {"epochs": epochs, "batch_size": 16, "eval_batch_size": 32, "lr": 3e-3, "min_lr": 0.0,
                  "weight_decay": 0.05, "warmup_epochs": 1, "label_smoothing": 0.1, "mixup_alpha": 0.8,
                  "cutmix_alpha": 1.0, "mix_prob": 1.0, "grad_clip": 1.0, "crop_padding": 1, "flip": True},
        "autonorm": auto,
        "norm_options": {"tau": 0.5, "drop_noise_when_frozen": True},
        "runtime": {"device": "cpu", "deterministic": True},
        "evaluation": {"latency_repeats": 2},
    }


def save_model(run_dir: Path, state_dict: dict, **model_json) -> None:
    """Write a run's model.pt and its model.json with the sha256 training records (every reader
    checks it): for tests that make or change a model by hand, as a retrain would."""
    run_dir = Path(run_dir)
    torch.save(state_dict, run_dir / "model.pt")
    digest = hashlib.sha256((run_dir / "model.pt").read_bytes()).hexdigest()
    path = run_dir / "model.json"
    info = json.loads(path.read_text()) if path.exists() else {}
    info.update(model_json)
    info.setdefault("sha256", {})["model.pt"] = digest
    path.write_text(json.dumps(info))


def trained_run(tmp_path: Path, task: str = "image_classification", **kw) -> tuple[Path, Path, dict]:
    """(data folder, run folder, run config) of a 2-epoch run of ``task`` trained in this process."""
    from autonorm.run.train import main as train_main

    data = make_processed(tmp_path / "data", task)
    run = tmp_path / "run"
    cfg = run_config(data, run, epochs=2, **kw)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    return data, run, cfg
