"""The recipes of docs/develop.md work as written: a new gated norm is a norm class (norms.py) and
a method entry (methods.py), and then trains, is evaluated, gets gate diagnostics, and appears in
the tables and the report's mechanism section without any other file changing.

Why: "one place per fact" is only true if adding the next method touches the files the recipe
names; this test adds one through those same entry points.
"""
from __future__ import annotations

import json

import torch

from autonorm import aggregate, evaluate, methods, norms, report
from autonorm.norms import GatedNorm, NormSelector, RMSNorm
from autonorm.train import main as train_main
from core_fixtures import make_processed, run_config


class ToyGate(GatedNorm):
    """A learned gate between RMSNorm and LayerNorm (index 0 plays DyT's part in the diagnostics)."""

    choice_names = ("rms", "ln")

    def __init__(self, dim: int, tau: float = 0.5, drop_noise_when_frozen: bool = True):
        super().__init__()
        self.rms, self.ln = RMSNorm(dim), torch.nn.LayerNorm(dim)
        self.selector = NormSelector(dim, 2, tau=tau, drop_noise_when_frozen=drop_noise_when_frozen)

    def weights(self, x, mask=None):
        return self.selector(x, mask)

    def candidates(self, x):
        return [self.rms(x), self.ln(x)]


def test_a_toy_gated_norm_runs_through_training_evaluation_and_the_report(tmp_path, monkeypatch):
    # the recipe: 1. register the norm (norms.py), 2. one Method entry (methods.py)
    monkeypatch.setitem(norms.NORM_REGISTRY, "toy_gate", ToyGate)
    monkeypatch.setitem(methods.METHODS, "toy_s", methods.Method("toy_s", "toy_gate", freeze_selectors=True,
                                                                 gate_choices=2))
    monkeypatch.setattr(methods, "DISPLAY_ORDER", methods.DISPLAY_ORDER + ("toy_s",))
    monkeypatch.setattr(methods, "GATED_METHODS", methods.GATED_METHODS + ("toy_s",))
    from autonorm.report.sections import mechanism
    monkeypatch.setattr(mechanism, "GATED_METHODS", methods.GATED_METHODS)

    data = make_processed(tmp_path / "data" / "mnist", "image_classification").parent
    data = data / "image_classification"
    results = tmp_path / "results"
    for m in ("frozen_ln", "toy_s"):
        for seed in (0, 1, 2):
            run = results / "runs" / "mnist" / m / f"seed{seed}"
            cfg = run_config(data, run, method=m, seed=seed, epochs=2)
            cfg["dataset"] = "mnist"
            assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
            out = results / "eval" / "mnist" / m / f"seed{seed}.json"
            assert evaluate.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(out),
                                  "--device", "cpu", "--threads", "1"]) == 0
    hist = json.loads((results / "runs" / "mnist" / "toy_s" / "seed0" / "history.json").read_text())
    assert set(hist[0]["gates"]["entropy"]) == {"block0.attn", "block0.mlp", "block1.attn", "block1.mlp"}
    tables = tmp_path / "tables"
    assert aggregate.main(["--results", str(results), "--datasets", "mnist", "--methods", "frozen_ln",
                           "toy_s", "--seeds", "0", "1", "2", "--reference-method", "toy_s",
                           "--out-dir", str(tables)]) == 0
    out = tmp_path / "report.md"
    assert report.main(["--tables", str(tables), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| toy_s | accuracy" in text and "**toy_s** (3 seeds)" in text
