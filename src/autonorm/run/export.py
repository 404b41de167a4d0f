"""Opt-in export of a trained AutoNorm model for inference: drop a branch nobody uses, and (with
``--constant-gates``) replace every other gate by constants.

The paper: "the selector can be optionally frozen, making the overhead negligible". A frozen
selector still costs both branches and its MLP at every forward. Where a gate gives one branch
a weight of at most ``threshold`` on EVERY validation sample, the export replaces that gated
norm by its other branch alone (LayerNorm or DyT, weight 1), with no selector. The output of
that layer changes by at most ``threshold x |DyT(x) - LN(x)|`` on the validation samples. With
``--constant-gates`` a gate that mixes is replaced by its mean weights over the validation samples:
both branches are still computed, the selector's MLP is not. The metric change on the test split is
measured and reported, never assumed.

    autonorm-export --run-dir results/runs/mnist/autonorm_s/seed0 \
        --data-dir results/data/mnist --out exported/mnist_autonorm_s_seed0 [--threshold 1e-3] [--constant-gates]

writes ``model.pt`` (weights only; ``load_exported`` rebuilds the model from ``export.json``) and
``export.json``: the run's model settings and the plan; per gated norm, its min / max weight per
branch on validation and what it became; the test metrics of the full and the exported model.
The default evaluation never uses it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from torch import nn

from ..layers import kernels
from ..layers.norms import GatedNorm, recording_gates


class SingleBranchNorm(nn.Module):
    """One branch of a gated norm, alone (the exported form of a gate that never mixes)."""

    def __init__(self, branch: nn.Module, name: str):
        super().__init__()
        self.branch, self.branch_name = branch, name

    def forward(self, x, mask=None):  # per token: a single LN or DyT ignores padding
        return self.branch(x)


class ConstantMixNorm(nn.Module):
    """A gated norm whose gate is replaced by constant weights (the exported form of a gate that
    mixes): sum_i w_i * norm_i(x), with no selector."""

    def __init__(self, branches: dict[str, nn.Module], weights: dict[str, float]):
        super().__init__()
        self.choice_names = tuple(branches)
        for name, branch in branches.items():
            setattr(self, name, branch)
        self.register_buffer("mix", torch.tensor([float(weights[n]) for n in self.choice_names]))

    def forward(self, x, mask=None):
        if self.choice_names == ("dyt", "ln") and kernels.use_fast_paths():
            return kernels.dyt_ln_mix(x, self.mix.to(x.dtype).expand(x.shape[0], 2), self.dyt, self.ln)
        y = self.mix[0] * getattr(self, self.choice_names[0])(x)
        for i, name in enumerate(self.choice_names[1:], start=1):
            y = y + self.mix[i] * getattr(self, name)(x)
        return y


@torch.no_grad()
def gate_ranges(model: nn.Module, task, x: torch.Tensor, y: torch.Tensor, batch_size: int) -> dict:
    """Per learned gated norm: (min, max, mean) of each branch's weight over every sample of (x, y)."""
    model.eval()
    with recording_gates(model) as learned:
        lo = {n: None for n in learned}
        hi = {n: None for n in learned}
        total = {n: None for n in learned}
        for i in range(0, x.shape[0], batch_size):
            xb, _ = task.trim_padding(x[i:i + batch_size], y[i:i + batch_size])
            model(task.inputs(xb))
            for n, m in learned.items():
                w = m.last_weights.float()
                bmin, bmax, bsum = w.min(0).values, w.max(0).values, w.sum(0)
                lo[n] = bmin if lo[n] is None else torch.minimum(lo[n], bmin)
                hi[n] = bmax if hi[n] is None else torch.maximum(hi[n], bmax)
                total[n] = bsum if total[n] is None else total[n] + bsum
    count = max(int(x.shape[0]), 1)
    return {n: {c: {"min": float(lo[n][i]), "max": float(hi[n][i]), "mean": float(total[n][i]) / count}
                for i, c in enumerate(m.choice_names)} for n, m in learned.items()}


def prune_plan(ranges: dict, threshold: float) -> dict:
    """Gated norm -> the branch it keeps, for every gate where all branches but one have weight
    at most ``threshold`` on every sample; gates that mix stay (absent from the plan)."""
    plan = {}
    for name, per_choice in ranges.items():
        keep = [c for c, r in per_choice.items() if r["max"] > threshold]
        if len(keep) == 1:
            plan[name] = keep[0]
    return plan


def constant_plan(ranges: dict, plan: dict) -> dict:
    """Gated norm -> its constant weights (the mean over the validation samples), for every gate that
    ``plan`` does not reduce to one branch."""
    return {name: {c: r["mean"] for c, r in per_choice.items()} for name, per_choice in ranges.items()
            if name not in plan}


def apply_plan(model: nn.Module, plan: dict, constants: dict | None = None) -> int:
    """Replace, in place, each planned gated norm by its kept branch, and each gated norm of
    ``constants`` by its branches mixed with those constant weights; returns how many."""
    constants = constants or {}
    replaced = 0
    for parent in list(model.modules()):
        for attr, child in list(parent.named_children()):
            name = getattr(child, "selector_name", None)
            if isinstance(child, GatedNorm) and name in plan:
                keep = plan[name]
                single = SingleBranchNorm(getattr(child, keep), keep)
                single.selector_name = name
                setattr(parent, attr, single)
                replaced += 1
            elif isinstance(child, GatedNorm) and name in constants:
                mixed = ConstantMixNorm({c: getattr(child, c) for c in child.choice_names}, constants[name])
                mixed.selector_name = name
                setattr(parent, attr, mixed)
                replaced += 1
        if getattr(parent, "shared_gate", False) and not isinstance(parent.norm1, GatedNorm):
            parent.shared_gate = False  # a block whose one gate was planned away: both its norms are single
    return replaced


def export_run(run_dir, data_dir, threshold: float = 1e-3, batch_size: int = 1000,
               constant_gates: bool = False) -> tuple[nn.Module, dict]:
    """The exported model of a trained run and its report (ranges, plan, constants, test metrics
    before/after)."""
    from ..data import load_processed
    from .tasks import Task, load_trained_model, run_eval

    cfg = json.loads((Path(run_dir) / "config.json").read_text())
    data = load_processed(data_dir)
    device = torch.device("cpu")
    task = Task(data.meta, cfg["train"], device)
    model = load_trained_model(run_dir, data.meta, device)
    x_va, y_va = data.split("val", device=device)
    x_te, y_te = data.split("test", device=device)
    ranges = gate_ranges(model, task, x_va, y_va, batch_size)
    _, before, _ = run_eval(model, task, x_te, y_te, batch_size)
    plan = prune_plan(ranges, threshold)
    constants = constant_plan(ranges, plan) if constant_gates else {}
    apply_plan(model, plan, constants)
    _, after, _ = run_eval(model, task, x_te, y_te, batch_size)
    report = {"run_dir": str(run_dir), "method": cfg["method"], "model": cfg["model"],
              "norm_options": cfg.get("norm_options", {}), "threshold": threshold,
              "gates": len(ranges), "dropped": len(plan), "plan": plan, "constants": constants, "ranges": ranges,
              "test_full": before, "test_exported": after,
              "test_change": {k: after[k] - before[k] for k in before if isinstance(before[k], (int, float))}}
    return model, report


def load_exported(export_dir, meta: dict, device="cpu") -> nn.Module:
    """Rebuild an exported model: the run's architecture, the plan's gates reduced, its weights."""
    from ..models import build_model

    export_dir = Path(export_dir)
    report = json.loads((export_dir / "export.json").read_text())
    model = build_model(meta, report["method"], report["model"], report["norm_options"])
    apply_plan(model, report["plan"], report.get("constants"))
    model.load_state_dict(torch.load(export_dir / "model.pt", map_location="cpu", weights_only=True))
    return model.to(device).eval()


def main(argv: list[str] | None = None) -> int:
    """The command line (``autonorm-export``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-export", _main, argv)


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out", required=True, help="folder for model.pt and export.json")
    p.add_argument("--threshold", type=float, default=1e-3,
                   help="drop a branch whose weight is at most this on every validation sample")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--constant-gates", action="store_true",
                   help="replace every gate that mixes by its mean weights over the validation samples (no selector)")
    args = p.parse_args(argv)
    if not 0.0 <= args.threshold < 0.5:
        p.error(f"--threshold must be in [0, 0.5), got {args.threshold}")
    from ..io_utils import write_json_atomic
    from .checkpoint import save_atomic

    model, report = export_run(args.run_dir, args.data_dir, args.threshold, args.batch_size, args.constant_gates)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_atomic(model.state_dict(), out / "model.pt")
    write_json_atomic(out / "export.json", report)
    print(f"{report['dropped']} of {report['gates']} gated norms reduced to one branch, "
          f"{len(report['constants'])} given constant weights; test "
          + ", ".join(f"{k} {report['test_full'][k]:.4f} -> {report['test_exported'][k]:.4f}"
                      for k in report["test_change"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
