"""The selectors' placement (``autonorm.placement``): one selector per residual sub-layer, or one
per block whose weights both sub-layers use (the paper's "a lightweight two-layer MLP per block")."""

import json
from pathlib import Path

import pytest
import torch

from autonorm.config.run_config import resolve_run_config
from autonorm.layers.norms import GatedNorm, gated_norms, selectors
from autonorm.layers.selector_layout import selector_param_count, selectors_per_block
from autonorm.models import build_model
from autonorm.models.blocks import Block
from autonorm.provenance import run_config_hash
from autonorm.run.train import train_run
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import run_config

MNIST = {"name": "m", "task": "image_classification", "family": "vision", "num_classes": 10,
         "image": {"channels": 1, "height": 28, "width": 28, "mean": [0.13], "std": [0.31]}}
VIT = dict(dim=128, depth=8, heads=4, mlp_ratio=2.0, patch_size=7, drop_path=0.1, dropout=0.1, layerscale_init=1e-4)


def _model(method, placement, seed=0):
    torch.manual_seed(seed)
    return build_model(MNIST, method, VIT, {"tau": 0.5, "drop_noise_when_frozen": True, "placement": placement})


def _params(m):
    return sum(p.numel() for p in m.parameters())


def test_per_block_has_one_selector_per_block_named_by_its_block():
    m = _model("autonorm_s", "per_block")
    assert sorted(selectors(m)) == sorted(f"block{i}" for i in range(8))
    blocks = [b for b in m.modules() if isinstance(b, Block)]
    assert all(b.shared_gate and hasattr(b.norm1, "selector") and not hasattr(b.norm2, "selector") for b in blocks)
    assert sorted(selectors(_model("autonorm_s", "per_sublayer"))) == sorted(
        f"block{i}.{s}" for i in range(8) for s in ("attn", "mlp"))


def test_parameter_counts_by_hand():
    # ViT-Lite 8 x 128, patch 7 on 28 x 28 (16 patches + class token), MLP ratio 2, 10 classes:
    # patch conv 1*49*128 + 128; cls 128; pos 17*128; per block: 2 LN (2*256), qkv 128*384 + 384,
    # proj 128*128 + 128, fc1 128*256 + 256, fc2 256*128 + 128, 2 LayerScales (2*128); final LN 256;
    # head 128*10 + 10
    block = 2 * 256 + (128 * 384 + 384) + (128 * 128 + 128) + (128 * 256 + 256) + (256 * 128 + 128) + 2 * 128
    frozen = (49 * 128 + 128) + 128 + 17 * 128 + 8 * block + 256 + (128 * 10 + 10)
    assert _params(_model("frozen_ln", "per_block")) == frozen == 1_072_138
    # AutoNorm adds DyT (alpha, gamma, beta: 1 + 2 * 128) beside every LN, and a selector
    # Linear(128, 64) + Linear(64, 2) = 128*64 + 64 + 64*2 + 2 = 8,386 per gate
    selector = 128 * 64 + 64 + 64 * 2 + 2
    assert selector_param_count(128) == selector == 8_386
    dyt = 16 * 257
    assert _params(_model("autonorm_s", "per_sublayer")) == frozen + dyt + 16 * selector == 1_210_426
    assert _params(_model("autonorm_s", "per_block")) == frozen + dyt + 8 * selector == 1_143_338
    assert selectors_per_block("per_block") == 1 and selectors_per_block("per_sublayer") == 2
    # the Random Selector has no parameters in its gate: the placement changes only how often it draws
    assert _params(_model("random", "per_block")) == _params(_model("random", "per_sublayer")) == frozen + dyt


@pytest.mark.parametrize("method", ["autonorm_s", "random"])
def test_per_block_both_sublayers_mix_with_the_blocks_one_draw(method, monkeypatch):
    m = _model(method, "per_block").train()
    seen = []
    orig = GatedNorm.forward

    def spy(self, x, mask=None, weights=None):
        seen.append((self.selector_name, weights))
        return orig(self, x, mask, weights)

    monkeypatch.setattr(GatedNorm, "forward", spy)
    m(torch.randn(5, 1, 28, 28))
    assert [n for n, _ in seen] == [f"block{i}" for i in range(8) for _ in (0, 1)]
    for i in range(0, 16, 2):  # one draw per block and sample, given to both of its norms
        w1, w2 = seen[i][1], seen[i + 1][1]
        assert w1 is w2 and w1.shape == (5, 2)
        assert torch.allclose(w1.sum(-1), torch.ones(5))
    assert len({id(w) for _, w in seen}) == 8


def test_per_block_gate_reads_the_block_input_and_mixes_each_sublayers_own_norms():
    m = _model("autonorm_s", "per_block").eval()
    block = next(b for b in m.modules() if isinstance(b, Block))
    x = torch.randn(3, 17, 128)
    w = block.norm1.selector(x)  # eval: softmax(logits / tau) of the block input's token-mean
    h = block.norm2.ln(x)
    d = block.norm2.dyt(x)
    expect = w[:, 0, None, None] * d + w[:, 1, None, None] * h
    assert torch.allclose(block.norm2(x, weights=w), expect, atol=1e-6)
    with pytest.raises(RuntimeError, match="shares its block's gate"):
        block.norm2(x)


def test_placement_enters_a_run_config_only_for_gated_methods_and_per_block():
    import yaml
    cfg = yaml.safe_load(open("config.yaml"))
    assert cfg["autonorm"]["placement"] == "per_block"  # the paper grid: the paper's reading
    per_block = {m: resolve_run_config(cfg, "mnist", m, 0) for m in ("frozen_ln", "random", "autonorm_s", "adanorm")}
    assert {m: r["norm_options"].get("placement") for m, r in per_block.items()} == {
        "frozen_ln": None, "random": "per_block", "autonorm_s": "per_block", "adanorm": None}
    cfg["autonorm"]["placement"] = "per_sublayer"
    per_sub = {m: resolve_run_config(cfg, "mnist", m, 0) for m in per_block}
    assert all("placement" not in r["norm_options"] for r in per_sub.values())
    # a method without a gate is the same run under both placements; a gated one is another run
    assert run_config_hash(per_sub["frozen_ln"]) == run_config_hash(per_block["frozen_ln"])
    assert run_config_hash(per_sub["autonorm_s"]) != run_config_hash(per_block["autonorm_s"])


def test_unknown_placement_is_refused():
    with pytest.raises(ValueError, match="placement must be one of"):
        _model("autonorm_s", "per_head")


@pytest.mark.parametrize("placement", ["per_sublayer", "per_block"])
def test_autonorm_s_trains_records_and_freezes_under_each_placement(placement, tmp_path):
    data = make_processed(tmp_path / "data", "image_classification")
    cfg = run_config(data, tmp_path / "run", epochs=2, t_freeze=1, eps_h=0.0)
    cfg["norm_options"]["placement"] = placement
    train_run(cfg)
    hist = json.loads((tmp_path / "run" / "history.json").read_text())
    gates = hist[-1]["gates"]["entropy"]
    assert hist[0]["frozen"]  # eps_h 0: the rule fires at epoch 1 on whatever selectors there are
    depth = cfg["model"]["depth"]
    assert len(gates) == depth * selectors_per_block(placement)
    sd = torch.load(tmp_path / "run" / "model.pt", weights_only=True)
    assert len({k.split(".selector.")[0] for k in sd if ".selector." in k}) == depth * selectors_per_block(placement)
    assert len(gated_norms(build_model(json.loads((data / "meta.json").read_text()), "autonorm_s", cfg["model"],
                                       cfg["norm_options"]))) == depth * selectors_per_block(placement)


@pytest.mark.slow
@pytest.mark.parametrize("placement", ["per_sublayer"])
def test_smoke_dag_end_to_end_with_each_placement(placement, tmp_path):
    """The smoke DAG on one stand-in with the gated methods, to the report, under the placement the
    smoke preset does not use (its own, the default per_block, is the whole smoke DAG's test): the
    gates are recorded, tabled and reported per selector (one per block, or two)."""
    import shutil
    import subprocess

    import pandas as pd

    root = Path(__file__).resolve().parents[1]
    for name in ["Snakefile", "config.yaml", "workflow", "profiles", "envs"]:
        src = root / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    (tmp_path / "placement.yaml").write_text(f"autonorm:\n  placement: {placement}\n")
    p = subprocess.run(["snakemake", "all", "--cores", "2", "--configfile", "workflow/presets/smoke.yaml",
                        "placement.yaml", "--config", "results_dir=results", "datasets=[smoke_digits]",
                        "methods=[frozen_ln,random,autonorm_s]", "seeds=[0]"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    res = tmp_path / "results"
    assert (res / "report.md").is_file()
    gates = pd.read_csv(res / "tables" / "gates.csv")
    names = set(gates[gates.method == "autonorm_s"].selector)
    depth = 2  # the smoke preset's blocks
    want = ({f"block{i}" for i in range(depth)} if placement == "per_block"
            else {f"block{i}.{s}" for i in range(depth) for s in ("attn", "mlp")})
    assert names == want
    cfg = json.loads((res / "runs" / "smoke_digits" / "autonorm_s" / "seed0" / "config.json").read_text())
    assert cfg["norm_options"].get("placement") == (placement if placement == "per_block" else None)
