"""Opt-in export (autonorm.run.export): a gate that never mixes becomes its one branch."""

import json

import pytest
import torch
import torch.nn.functional as F

from autonorm.run import export
from autonorm.layers.norms import AutoNorm
from autonorm.run.train import train_run
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import run_config, save_model


def test_prune_plan_by_hand():
    ranges = {
        "block0.attn": {"dyt": {"min": 0.0, "max": 0.0004}, "ln": {"min": 0.9996, "max": 1.0}},  # LN only
        "block0.mlp": {"dyt": {"min": 0.2, "max": 0.9}, "ln": {"min": 0.1, "max": 0.8}},  # mixes: stays
        "block1.attn": {"dyt": {"min": 0.998, "max": 1.0}, "ln": {"min": 0.0, "max": 0.002}},  # above 1e-3
    }
    assert export.prune_plan(ranges, 1e-3) == {"block0.attn": "ln"}
    assert export.prune_plan(ranges, 0.005) == {"block0.attn": "ln", "block1.attn": "dyt"}
    assert export.prune_plan(ranges, 0.0) == {}


class _Holder(torch.nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.norm = norm


def test_kept_branch_is_exactly_that_branch():
    torch.manual_seed(0)
    norm = AutoNorm(8)
    norm.selector_name = "n"
    with torch.no_grad():
        norm.ln.weight.uniform_(0.5, 1.5)
        norm.ln.bias.uniform_(-1, 1)
    holder = _Holder(norm)
    assert export.apply_plan(holder, {"n": "ln"}) == 1
    x = torch.randn(3, 5, 8)
    # hand form of LN(x) with the branch's own gain and bias
    mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    want = (x - mu) / torch.sqrt(var + 1e-5) * norm.ln.weight + norm.ln.bias
    torch.testing.assert_close(holder.norm(x, mask=None), want, rtol=1e-5, atol=1e-5)
    assert not any("selector" in k for k in holder.state_dict())


def test_export_of_a_trained_run_reports_its_accuracy_change(tmp_path):
    data = make_processed(tmp_path / "data", "image_classification")
    run = tmp_path / "run"
    train_run(run_config(data, run, method="autonorm_s", epochs=2))
    # Make one gate decisive (LN on every sample) and leave the others as trained.
    sd = torch.load(run / "model.pt", weights_only=True)
    sd["encoder.blocks.0.norm1.selector.mlp.2.bias"] = torch.tensor([-50.0, 50.0])
    save_model(run, sd)  # as a retrain would leave it: the new weights and their recorded hash

    assert export.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "exp")]) == 0
    report = json.loads((tmp_path / "exp" / "export.json").read_text())
    assert report["plan"].get("block0.attn") == "ln"
    assert report["ranges"]["block0.attn"]["dyt"]["max"] <= 1e-3
    assert set(report["test_change"]) >= {"accuracy"}
    assert report["test_change"]["accuracy"] == pytest.approx(
        report["test_exported"]["accuracy"] - report["test_full"]["accuracy"])

    # the exported model reloads and gives the outputs of the full model up to the dropped weight
    from autonorm.data import load_processed
    from autonorm.run.tasks import Task, load_trained_model

    d = load_processed(data)
    full = load_trained_model(run, d.meta, torch.device("cpu"))
    small = export.load_exported(tmp_path / "exp", d.meta)
    assert sum(p.numel() for p in small.parameters()) < sum(p.numel() for p in full.parameters())
    task = Task(d.meta, run_config(data, run)["train"], torch.device("cpu"))
    x, _ = d.split("test")
    with torch.no_grad():
        a, b = full(task.inputs(x)), small(task.inputs(x))
    assert F.softmax(a, -1).sub(F.softmax(b, -1)).abs().max() < 1e-3


def test_threshold_out_of_range_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        export.main(["--run-dir", "r", "--data-dir", "d", "--out", str(tmp_path), "--threshold", "0.7"])
    assert "--threshold must be in [0, 0.5)" in capsys.readouterr().err


def test_constant_gate_is_the_hand_mix_of_its_branches():
    """A gate that mixes, exported with constant weights (the paper's "optionally frozen" selector): by
    hand, 0.3 DyT(x) + 0.7 LN(x), with the branches' own parameters, and no selector left."""
    torch.manual_seed(0)
    norm = AutoNorm(8)
    norm.selector_name = "n"
    holder = _Holder(norm)
    assert export.apply_plan(holder, {}, {"n": {"dyt": 0.3, "ln": 0.7}}) == 1
    x = torch.randn(3, 5, 8)
    mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    ln = (x - mu) / torch.sqrt(var + 1e-5) * norm.ln.weight + norm.ln.bias
    dyt = torch.tanh(norm.dyt.alpha * x) * norm.dyt.weight + norm.dyt.bias
    with torch.no_grad():
        torch.testing.assert_close(holder.norm(x), 0.3 * dyt + 0.7 * ln, rtol=1e-5, atol=1e-5)
        from autonorm.layers import kernels
        with kernels.fast_paths(False):  # the generic sum gives the same
            torch.testing.assert_close(holder.norm(x), 0.3 * dyt + 0.7 * ln, rtol=1e-5, atol=1e-5)
    assert not any("selector" in k for k in holder.state_dict())


def test_constant_gates_export_reports_the_mean_weights(tmp_path):
    data = make_processed(tmp_path / "data", "image_classification")
    run = tmp_path / "run"
    train_run(run_config(data, run, method="autonorm_s", epochs=1))
    assert export.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "exp"),
                        "--constant-gates"]) == 0
    report = json.loads((tmp_path / "exp" / "export.json").read_text())
    mixing = set(report["ranges"]) - set(report["plan"])
    assert mixing and set(report["constants"]) == mixing
    for name in mixing:  # the constants are the gate's mean weights over validation: within its range, summing to 1
        w = report["constants"][name]
        assert sum(w.values()) == pytest.approx(1.0, abs=1e-5)
        for c, v in w.items():
            assert report["ranges"][name][c]["min"] - 1e-6 <= v <= report["ranges"][name][c]["max"] + 1e-6
    from autonorm.data import load_processed

    small = export.load_exported(tmp_path / "exp", load_processed(data).meta)
    assert not any("selector" in k for k in small.state_dict())
