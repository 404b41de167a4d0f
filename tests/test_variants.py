"""Method variants (the paper's ablations), distillation, and runs that are the same training.

Hand-computed distillation loss; variant resolution and its validation (each error names the
config key); AutoNorm-S on NLP resolved as AutoNorm's run; dry runs of the default grid and of
the paper-scale ablations preset (workflow/presets/ablations.yaml).
"""

import copy
import json
import math
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import torch

from autonorm.data.integrity import data_identity
import yaml

from autonorm.config.run_config import ConfigError, resolve_run_config
from autonorm.config.workflow import check_config, load_config
from autonorm.config.variants import VARIANT_AXES
from autonorm.run.distill import DistillationError, Distiller, distillation_loss, kd_divergence
from autonorm.models import build_model
from autonorm.provenance import run_config_hash
from autonorm.config.variants import (active_variants, same_runs, training_signature, variant_datasets,
                               write_same_run_eval)
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import TINY_MODEL, run_config, save_model
from helpers.limits import limit

ROOT = Path(__file__).resolve().parents[1]
ABLATIONS = ROOT / "workflow" / "presets" / "ablations.yaml"


def base_config() -> dict:
    return load_config(ROOT / "config.yaml")


def ablation_config() -> dict:
    return load_config(ROOT / "config.yaml", ABLATIONS)


# --------------------------------------------------------------------------- distillation loss
def test_kd_divergence_by_hand():
    # teacher logits / T = [0, ln 3] -> p_t = [1/4, 3/4]; student [0, 0] -> p_s = [1/2, 1/2]
    t = 2.0
    teacher = torch.tensor([[0.0, 2 * math.log(3.0)]])
    student = torch.zeros(1, 2, requires_grad=True)
    kl = 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)  # 0.1308120
    kd = kd_divergence(student, teacher, t)
    assert kd.item() == pytest.approx(t * t * kl, abs=1e-6)  # 0.5232481
    kd.backward()
    # d/ds [T^2 KL(p_t || softmax(s/T))] = T (p_s - p_t) = 2 * ([1/2, 1/2] - [1/4, 3/4])
    torch.testing.assert_close(student.grad, torch.tensor([[0.5, -0.5]]))


def test_distillation_loss_mixes_task_and_soft_terms():
    teacher = torch.tensor([[0.0, 2 * math.log(3.0)]], requires_grad=True)
    student = torch.zeros(1, 2, requires_grad=True)
    task = torch.tensor(1.0)
    kd = 4 * (0.25 * math.log(0.5) + 0.75 * math.log(1.5))
    loss = distillation_loss(task, student, teacher, temperature=2.0, weight=0.5)
    assert loss.item() == pytest.approx(0.5 * 1.0 + 0.5 * kd, abs=1e-6)  # 0.7616241
    assert distillation_loss(task, student, teacher, 2.0, 0.0).item() == 1.0  # weight 0: the task loss
    loss.backward()
    assert teacher.grad is None  # the teacher is a fixed target


def test_kd_divergence_counts_labelled_tokens_only():
    t = 1.0
    student = torch.tensor([[[0.0, 0.0], [5.0, -5.0]], [[1.0, 0.0], [0.0, 0.0]]])
    teacher = torch.tensor([[[0.0, math.log(3.0)], [-7.0, 9.0]], [[1.0, 0.0], [3.0, 3.0]]])
    valid = torch.tensor([[True, False], [True, True]])
    # positions kept: (0,0): KL([1/4,3/4] || [1/2,1/2]); (1,0): 0 (same logits); (1,1): 0 (both uniform)
    kl00 = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    assert kd_divergence(student, teacher, t, valid).item() == pytest.approx(kl00 / 3, abs=1e-6)


# --------------------------------------------------------------------------- Distiller
def _fake_teacher_run(run_dir: Path, data_dir: Path, status="ok", config_hash="abc"):
    meta = json.loads((data_dir / "meta.json").read_text())
    torch.manual_seed(5)
    teacher = build_model(meta, "teacher_mlp", TINY_MODEL)
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"method": "teacher_mlp", "model": TINY_MODEL}))
    save_model(run_dir, teacher.state_dict())
    (run_dir / "metrics.json").write_text(json.dumps({"status": status, "config_hash": config_hash,
                                                      "data_identity": data_identity(meta, data_dir)}))
    return meta, teacher


def test_teacher_trained_on_other_data_is_refused(tmp_path):
    data = make_processed(tmp_path, "image_classification")
    meta, _ = _fake_teacher_run(tmp_path / "teacher", data)
    cfg = {"distill": {"temperature": 4.0, "weight": 0.5, "teacher_run_dir": str(tmp_path / "teacher")}}
    assert Distiller.from_run_config(cfg, meta, torch.device("cpu"), data_identity(meta, data)) is not None
    with pytest.raises(DistillationError, match="trained on other data"):
        Distiller.from_run_config(cfg, meta, torch.device("cpu"), "0123456789abcdef")


def test_distiller_loads_the_teacher_run_without_touching_the_random_stream(tmp_path):
    data = make_processed(tmp_path, "image_classification")
    meta, teacher = _fake_teacher_run(tmp_path / "teacher", data)
    cfg = {"distill": {"temperature": 4.0, "weight": 0.5, "teacher_run_dir": str(tmp_path / "teacher")}}
    assert Distiller.from_run_config({}, meta, torch.device("cpu")) is None
    torch.manual_seed(0)
    before = torch.get_rng_state()
    dist = Distiller.from_run_config(cfg, meta, torch.device("cpu"))
    assert torch.equal(torch.get_rng_state(), before)
    x = torch.randn(4, 3, 8, 8)
    student_out = torch.randn(4, 3, requires_grad=True)
    task = torch.tensor(0.7)
    expected = distillation_loss(task, student_out, teacher.eval()(x), 4.0, 0.5)
    torch.testing.assert_close(dist.loss(task, student_out, x, torch.zeros(4, dtype=torch.long)), expected)
    assert all(not p.requires_grad for p in dist.teacher.parameters())


def test_distiller_refuses_a_missing_or_failed_teacher(tmp_path):
    data = make_processed(tmp_path, "image_classification")
    meta = json.loads((data / "meta.json").read_text())
    cfg = {"distill": {"temperature": 4.0, "weight": 0.5, "teacher_run_dir": str(tmp_path / "none")}}
    with pytest.raises(DistillationError, match="has no trained model"):
        Distiller.from_run_config(cfg, meta, torch.device("cpu"))
    _fake_teacher_run(tmp_path / "bad", data, status="diverged")
    cfg["distill"]["teacher_run_dir"] = str(tmp_path / "bad")
    with pytest.raises(DistillationError, match="status 'diverged'"):
        Distiller.from_run_config(cfg, meta, torch.device("cpu"))
    _fake_teacher_run(tmp_path / "stale", data, config_hash="old")
    cfg["distill"].update(teacher_run_dir=str(tmp_path / "stale"), teacher_config_hash="new")
    with pytest.raises(DistillationError, match="config hash 'old', this student expects 'new'"):
        Distiller.from_run_config(cfg, meta, torch.device("cpu"))
    cfg["distill"]["teacher_config_hash"] = "old"
    assert Distiller.from_run_config(cfg, meta, torch.device("cpu")) is not None


@pytest.mark.parametrize("task", ["image_classification", "token_classification"])
def test_distilled_student_trains_and_weight_zero_is_its_base(tmp_path, task):
    from autonorm.run.train import train_run

    data = make_processed(tmp_path, task)
    teacher_dir = tmp_path / "runs" / "teacher_mlp"
    _fake_teacher_run(teacher_dir, data)  # an untrained MLP: its logits differ from the labels all the same
    base = train_run(run_config(data, tmp_path / "runs" / "base", method="autonorm_s", epochs=1))
    results = {}
    for weight in (0.0, 0.7):
        cfg = run_config(data, tmp_path / "runs" / f"w{weight}", method="autonorm_s", epochs=1)
        cfg["distill"] = {"temperature": 4.0, "weight": weight, "teacher": "teacher_mlp",
                          "teacher_run_dir": str(teacher_dir)}
        results[weight] = train_run(cfg)
        hist = json.loads((Path(cfg["out_dir"]) / "history.json").read_text())
        assert all(math.isfinite(h["train_loss"]) for h in hist)
    # weight 0 changes nothing: same losses, same metrics (the teacher draws no random numbers)
    assert results[0.0]["test"] == base["test"] and results[0.0]["val"] == base["val"]
    assert results[0.7]["val"] != base["val"] or results[0.7]["test"] != base["test"]


# --------------------------------------------------------------------------- variants in the config
def test_variant_run_config_is_its_base_plus_overrides():
    cfg = ablation_config()
    base = resolve_run_config(cfg, "cifar10", "autonorm_s", 3)
    tau = resolve_run_config(cfg, "cifar10", "tau_2", 3)
    assert tau["method"] == "autonorm_s" and tau["seed"] == 3
    assert tau["out_dir"].endswith("/runs/cifar10/tau_2/seed3")
    assert tau["variant"] == {"name": "tau_2", "base": "autonorm_s", "axis": "tau", "value": 2.0}
    assert tau["autonorm"]["tau"] == 2.0 and tau["norm_options"]["tau"] == 2.0
    rest = {k: v for k, v in tau.items() if k not in ("autonorm", "norm_options", "out_dir", "variant")}
    assert rest == {k: v for k, v in base.items() if k not in ("autonorm", "norm_options", "out_dir")}
    lin = resolve_run_config(cfg, "ptb_pos", "selector_linear", 0)
    assert lin["norm_options"]["selector"] == "linear" and "selector" not in base["norm_options"]
    assert resolve_run_config(cfg, "ptb_pos", "gumbel_hard", 0)["norm_options"]["hard"] is True
    assert resolve_run_config(cfg, "cifar10", "t_freeze_5", 0)["autonorm"]["t_freeze"] == 5
    assert resolve_run_config(cfg, "cifar10", "eps_h_0_2", 0)["autonorm"]["eps_h"] == 0.2
    g3 = resolve_run_config(cfg, "ptb_pos", "gate_3", 1)
    assert g3["method"] == "autonorm_s" and g3["variant"]["axis"] == "gate3" and g3["norm_options"]["gates"] == 3
    d = resolve_run_config(cfg, "cifar10", "distill", 4)
    teacher_hash = run_config_hash(resolve_run_config(cfg, "cifar10", "teacher_mlp", 4))
    assert d["distill"] == {"temperature": 4.0, "weight": 0.5, "teacher": "teacher_mlp",
                            "teacher_run_dir": "results/ablations/runs/cifar10/teacher_mlp/seed4",
                            "teacher_config_hash": teacher_hash}
    # a teacher trained with other settings is another student
    other = _with(cfg, dataset_config__cifar10__model__mlp_hidden=[64])
    assert resolve_run_config(other, "cifar10", "distill", 4)["distill"]["teacher_config_hash"] != teacher_hash
    # the model a variant builds carries its options
    meta = {"task": "token_classification", "vocab_size": 12, "pad_id": 0, "max_len": 6, "num_tags": 4}
    model = build_model(meta, lin["method"], TINY_MODEL, lin["norm_options"])
    assert model.encoder.blocks[0].norm1.selector.capacity == "linear"
    model = build_model(meta, g3["method"], TINY_MODEL, g3["norm_options"])
    assert model.encoder.blocks[1].norm2.choice_names == ("dyt", "ln", "rms")


def test_variants_run_on_their_datasets_only():
    cfg = ablation_config()
    assert variant_datasets(cfg, "tau_1") == ["cifar10", "ptb_pos"]
    assert variant_datasets(cfg, "t_freeze_5") == ["cifar10"]      # families: [vision]
    assert variant_datasets(cfg, "distill") == ["cifar10"]
    assert variant_datasets(cfg, "gate_3") == ["ptb_pos"]          # families: [nlp]
    assert variant_datasets(cfg, "gumbel_hard") == ["cifar10", "cifar100", "ptb_pos"]  # its own list
    assert active_variants(base_config()) == []  # the default grid has no ablations


def test_every_axis_is_in_the_ablations_preset():
    cfg = ablation_config()
    axes = {cfg["variants"][v]["axis"] for v in active_variants(cfg)}
    assert axes == set(VARIANT_AXES)  # every axis the config knows (the selector's width included)
    assert "selector_width" in axes
    assert sorted(cfg["variants"][v]["value"] for v in active_variants(cfg)
                  if cfg["variants"][v]["axis"] == "tau") == [0.1, 0.25, 0.5, 1.0, 2.0]


def _with(cfg, **changes):
    cfg = copy.deepcopy(cfg)
    for path, value in changes.items():
        *head, last = path.split("__")
        node = cfg
        for k in head:
            node = node.setdefault(k, {})
        node[last] = value
    return cfg


@pytest.mark.parametrize("change,key", [
    ({"variants__x": {"base": "batchnorm", "axis": "tau"}}, "variants.x.base"),
    ({"variants__x": {"base": "autonorm_s", "axis": "depth"}}, "variants.x.axis"),
    ({"variants__x": {"base": "autonorm_s", "axis": "tau", "autonorm": {"tauu": 1.0}}}, "variants.x.autonorm.tauu"),
    ({"variants__x": {"base": "autonorm_s", "axis": "tau", "optimizer": {"lr": 1}}}, "variants.x.optimizer"),
    ({"variants__x": {"base": "autonorm_s", "axis": "selector", "autonorm": {"selector": "deep"}}},
     "variants.x.autonorm.selector"),
    ({"variants__x": {"base": "autonorm_s", "axis": "distill", "distill": {"temperature": 2}}},
     "variants.x.distill.weight"),
    ({"variants__Tau-1": {"base": "autonorm_s", "axis": "tau"}}, "variants"),
    ({"variants__dyt": {"base": "autonorm_s", "axis": "tau"}}, "variants.dyt"),
    ({"variants__x": {"base": "teacher_mlp", "axis": "tau"}}, "variants.x.base"),
    ({"variants__x": {"base": "autonorm_s", "axis": "distill"}}, "variants.x.distill"),
    ({"variants__x": {"base": "dyt", "axis": "gate3", "autonorm": {"gates": 3}}}, "variants.x.autonorm.gates"),
    ({"variants__x": {"base": "autonorm_s", "axis": "gate3", "autonorm": {"gates": 4}}}, "variants.x.autonorm.gates"),
    ({"variants__x": {"base": "autonorm_s", "axis": "tau", "datasets": ["svhn"]}, "datasets": ["mnist"]},
     "variants.x.datasets"),
    ({"ablations": {"variants": ["tau_7"], "datasets": ["mnist"]}}, "ablations.variants"),
    ({"ablations": {"variants": ["tau_1"], "datasets": ["cifar10"]}, "datasets": ["mnist"]}, "ablations.datasets"),
    ({"ablations": {"variants": ["gate_3"], "datasets": ["mnist"]}}, "ablations.variants"),  # runs nowhere
    ({"ablations": {"variants": ["t_freeze_20"], "datasets": ["mnist"]}, "dataset_config__mnist__train__epochs": 10},
     "variants.t_freeze_20.autonorm.t_freeze"),
    ({"ablations": {"variants": ["x"], "datasets": ["energy_efficiency"]},
      "variants__x": {"base": "autonorm_s", "axis": "distill", "distill": {"temperature": 2, "weight": 0.5}}},
     "variants.x.distill"),
])
def test_bad_variants_are_rejected_naming_the_key(change, key):
    cfg = _with(base_config(), **change)
    with pytest.raises(ConfigError) as err:
        check_config(cfg)
    assert f"config key {key}" in str(err.value), str(err.value)


def test_the_catalogue_validates_and_a_small_laptop_set_is_one_key():
    cfg = base_config()
    cfg["ablations"] = {"datasets": ["mnist", "ptb_pos"],
                        "variants": ["tau_0_1", "tau_2", "selector_linear", "gumbel_hard", "t_freeze_5",
                                     "distill", "gate_3"]}
    check_config(cfg)
    runs = {(d, v) for v in active_variants(cfg) for d in variant_datasets(cfg, v)}
    assert ("mnist", "distill") in runs and ("ptb_pos", "gate_3") in runs and ("ptb_pos", "distill") not in runs


# --------------------------------------------------------------------------- same runs
def test_autonorm_s_on_nlp_is_autonorm():
    cfg = base_config()
    assert same_runs(cfg) == {("ptb_pos", "autonorm_s"): "autonorm", ("sst2", "autonorm_s"): "autonorm"}
    # the config's order of methods does not decide which one trains
    cfg2 = _with(cfg, methods=["autonorm_s", "frozen_ln", "autonorm"])
    assert same_runs(cfg2) == same_runs(cfg)
    # without autonorm in the grid, autonorm_s trains
    assert same_runs(_with(cfg, methods=["frozen_ln", "autonorm_s"], reference_method="autonorm_s")) == {}
    # freezing on NLP: different runs
    assert same_runs(_with(cfg, autonorm__freeze__nlp=True)) == {}
    for d in ("cifar10", "ptb_pos"):
        a, s = (training_signature(resolve_run_config(cfg, d, m, 0)) for m in ("autonorm", "autonorm_s"))
        assert (a == s) is (d == "ptb_pos")


def test_default_valued_variants_are_their_base_run():
    same = same_runs(ablation_config())
    assert same[("cifar10", "tau_0_5")] == "autonorm_s"
    assert same[("cifar10", "selector_mlp")] == "autonorm_s"   # explicit default selector
    assert same[("cifar10", "gumbel_soft")] == "autonorm_s"    # explicit hard: false
    assert same[("cifar10", "t_freeze_10")] == same[("cifar10", "eps_h_0_1")] == "autonorm_s"
    assert same[("ptb_pos", "tau_0_5")] == "autonorm"          # on NLP autonorm_s is autonorm
    assert same[("ptb_pos", "gate_2")] == "autonorm"
    for trained in ("tau_0_1", "tau_2", "selector_linear", "gumbel_hard", "t_freeze_5", "eps_h_0_2", "distill"):
        assert ("cifar10", trained) not in same


def test_same_run_eval_file(tmp_path):
    cfg = ablation_config()
    src = tmp_path / "primary.json"
    src.write_text(json.dumps({"dataset": "ptb_pos", "method": "autonorm", "seed": 0, "test": {"accuracy": 0.9}}))
    out = write_same_run_eval(src, tmp_path / "a.json", cfg, "autonorm_s", "autonorm")
    assert out == {"dataset": "ptb_pos", "method": "autonorm_s", "seed": 0, "test": {"accuracy": 0.9},
                   "same_run_as": "autonorm"}
    assert json.loads((tmp_path / "a.json").read_text()) == out
    out = write_same_run_eval(src, tmp_path / "b.json", cfg, "tau_0_5", "autonorm")
    assert out["method"] == "autonorm_s" and out["same_run_as"] == "autonorm"
    assert out["variant"] == {"name": "tau_0_5", "base": "autonorm_s", "axis": "tau", "value": 0.5}


# --------------------------------------------------------------------------- dry runs
def _dry_run(tmp_path, *args):
    p = subprocess.run(["snakemake", "-n", "--quiet", "host", "all", *args, "--config", f"results_dir={tmp_path}/r",
                        f"raw_dir={tmp_path}/raw"], cwd=ROOT, capture_output=True, text=True, timeout=limit(300),
                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    jobs = Counter()
    # jobs of SLURM groups (tabular, stand-ins) are printed indented
    for rule, output in re.findall(r"rule (\w+):\n(?:[ ]+.*\n)*?[ ]+output: (\S+)", out):
        m = re.search(r"/(?:runs|eval)/(\w+)/(\w+)/seed\d+", output)
        if m:
            jobs[(rule, m.group(1), m.group(2))] += 1
    return out, jobs


@pytest.mark.dag  # runs Snakemake
def test_default_grid_trains_autonorm_s_once_on_nlp(tmp_path):
    out, jobs = _dry_run(tmp_path)
    for d in ("ptb_pos", "sst2"):
        assert jobs[("train", d, "autonorm_s")] == 0 and jobs[("evaluate", d, "autonorm_s")] == 0
        assert jobs[("same_run_eval", d, "autonorm_s")] == 5 and jobs[("train", d, "autonorm")] == 5
    assert jobs[("train", "cifar10", "autonorm_s")] == 5  # vision freezes: its own runs
    assert sum(n for (rule, _, _), n in jobs.items() if rule == "train") == 9 * 8 * 5 - 2 * 5
    assert sum(n for (rule, _, _), n in jobs.items() if rule == "same_run_eval") == 2 * 5


@pytest.mark.dag  # runs Snakemake
def test_ablations_preset_dry_run_shows_every_axis(tmp_path):
    out, jobs = _dry_run(tmp_path, "--configfile", str(ABLATIONS))
    trained = {(d, n) for (rule, d, n) in jobs if rule == "train"}
    for run in [("cifar10", "tau_0_1"), ("cifar10", "tau_0_25"), ("cifar10", "tau_1"), ("cifar10", "tau_2"),
                ("ptb_pos", "tau_0_1"), ("ptb_pos", "tau_2"), ("cifar10", "selector_linear"),
                ("ptb_pos", "selector_linear"), ("cifar10", "gumbel_hard"), ("cifar100", "gumbel_hard"),
                ("ptb_pos", "gumbel_hard"), ("cifar10", "t_freeze_5"), ("cifar10", "t_freeze_20"),
                ("cifar10", "eps_h_0_05"), ("cifar10", "eps_h_0_2"), ("cifar10", "distill"),
                ("ptb_pos", "gate_3"), ("cifar10", "teacher_mlp"), ("mnist", "selector_width_5"),
                ("ptb_pos", "selector_width_5"), ("mnist", "autonorm_s")]:
        assert jobs[("train",) + run] == 5, run
    assert ("ptb_pos", "t_freeze_5") not in trained and ("ptb_pos", "distill") not in trained
    assert jobs[("same_run_eval", "cifar10", "tau_0_5")] == 5
    totals = Counter()
    for (rule, _, _), n in jobs.items():
        totals[rule] += n
    # 150 before the selector-width axis; + MNIST's 4 methods and the width-5 variant on MNIST and PTB
    assert totals["train"] == 150 + 4 * 5 + 2 * 5 and totals["evaluate"] == 180
    assert totals["same_run_eval"] == 55
    # the student's training job waits for its teacher run
    m = re.search(r"rule train:\n    input: (.*)\n    output: \S+/runs/cifar10/distill/seed2/status.json", out)
    assert m and "runs/cifar10/teacher_mlp/seed2/status.json" in m.group(1)


def test_schema_axes_are_the_code_axes():
    from autonorm.config.workflow import SCHEMA_PATH
    from autonorm.config.variants import VARIANT_AXES

    schema = yaml.safe_load(Path(SCHEMA_PATH).read_text())
    assert tuple(schema["$defs"]["variant"]["properties"]["axis"]["enum"]) == VARIANT_AXES
