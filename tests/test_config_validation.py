"""Configs that make no sense are rejected before any job, each naming its key.

One table of malformed configs (MALFORMED) goes through ``check_config``, the
same check the Snakefile runs first; a few go through ``snakemake -n`` to show
the refusal happens before the DAG runs a job.
"""

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autonorm.config.run_config import ConfigError, deep_merge
from autonorm.config.workflow import check_config, check_report_grid
from autonorm.run.train import main as train_main
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import run_config

ROOT = Path(__file__).resolve().parents[1]
PAPER = yaml.safe_load((ROOT / "config.yaml").read_text())
SMOKE = deep_merge(PAPER, yaml.safe_load((ROOT / "workflow" / "presets" / "smoke.yaml").read_text()))
DELETE = object()
REGULAR_FILE = "<a regular file>"  # replaced by a path under a file created in tmp_path


def edited(base: dict, edits: dict) -> dict:
    cfg = copy.deepcopy(base)
    for dotted, value in edits.items():
        node, keys = cfg, dotted.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        if value is DELETE:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    return cfg


# (case id, base config, edits, the key the message must name)
MALFORMED = [
    # top level
    ("missing results_dir", PAPER, {"results_dir": DELETE}, "results_dir"),
    ("empty results_dir", PAPER, {"results_dir": ""}, "results_dir"),
    ("misspelt top-level key", PAPER, {"result_dir": "x"}, "result_dir"),
    ("misspelt seeds key", PAPER, {"seed": [0]}, "seed"),
    ("results_dir with a brace", PAPER, {"results_dir": "out/{x}"}, "results_dir"),
    ("results_dir under a regular file", PAPER, {"results_dir": REGULAR_FILE}, "results_dir"),
    ("raw_dir under a regular file", PAPER, {"raw_dir": REGULAR_FILE}, "raw_dir"),
    ("report_name with a slash", PAPER, {"report_name": "a/b"}, "report_name"),
    ("raw_from of an unknown dataset", PAPER, {"raw_from": {"imagenet": "/tmp"}}, "raw_from"),
    ("raw_from not a folder", PAPER, {"raw_from": {"mnist": REGULAR_FILE}}, "raw_from.mnist"),
    ("unknown dataset", PAPER, {"datasets": ["mnist", "imagenet"]}, "datasets[1]"),
    ("datasets empty", PAPER, {"datasets": []}, "datasets"),
    ("datasets a string", PAPER, {"datasets": "mnist"}, "datasets"),
    ("datasets repeated", PAPER, {"datasets": ["mnist", "mnist"]}, "datasets"),
    ("dataset without a block", SMOKE, {"datasets": ["smoke_digits", "mnist"],
                                        "dataset_config.mnist": DELETE}, "dataset_config"),
    ("unknown method", PAPER, {"methods": ["frozen_ln", "batchnorm"]}, "methods[1]"),
    ("methods empty", PAPER, {"methods": []}, "methods"),
    ("negative seed", PAPER, {"seeds": [-1]}, "seeds[0]"),
    ("seed not an integer", PAPER, {"seeds": ["a"]}, "seeds[0]"),
    ("reference method not run", PAPER, {"methods": ["frozen_ln", "dyt"]}, "reference_method"),
    # autonorm
    ("tau a string", PAPER, {"autonorm.tau": "hot"}, "autonorm.tau"),
    ("tau zero", PAPER, {"autonorm.tau": 0}, "autonorm.tau"),
    ("t_freeze zero", PAPER, {"autonorm.t_freeze": 0}, "autonorm.t_freeze"),
    ("eps_h negative", PAPER, {"autonorm.eps_h": -0.1}, "autonorm.eps_h"),
    ("eps_h above ln 2", PAPER, {"autonorm.eps_h": 0.7}, "autonorm.eps_h"),
    ("eps_h equal to ln 2", PAPER, {"autonorm.eps_h": 0.6931471805599453}, "autonorm.eps_h"),
    ("misspelt autonorm key", PAPER, {"autonorm.t_frezee": 3}, "autonorm.t_frezee"),
    ("freeze of an unknown family", PAPER, {"autonorm.freeze.audio": True}, "autonorm.freeze.audio"),
    ("t_freeze after the last epoch", SMOKE, {"autonorm.t_freeze": 7}, "autonorm.t_freeze"),
    ("t_freeze after a dataset's last epoch", SMOKE, {"dataset_config.smoke_digits.train": {"epochs": 1,
                                                      "warmup_epochs": 0}}, "autonorm.t_freeze"),
    # norm options, runtime, evaluation, resources
    ("misspelt norm option", PAPER, {"norm_options.alpha": 0.5}, "norm_options.alpha"),
    ("AdaNorm k negative", PAPER, {"norm_options.k": -1}, "norm_options.k"),
    ("unknown device", PAPER, {"runtime.device": "tpu"}, "runtime.device"),
    ("cuda without CUDA", PAPER, {"runtime.device": "cuda"}, "runtime.device"),
    ("zero threads", PAPER, {"runtime.threads": 0}, "runtime.threads"),
    ("misspelt runtime key", PAPER, {"runtime.bf61": True}, "runtime.bf61"),
    ("severity 6", PAPER, {"evaluation.corruption_severity": 6}, "evaluation.corruption_severity"),
    ("misspelt evaluation key", PAPER, {"evaluation.latency_repeat": 3}, "evaluation.latency_repeat"),
    ("resources of an unknown rule", PAPER, {"resources.trian": {"threads": 1}}, "resources.trian"),
    ("negative GPUs", PAPER, {"resources.train.gpu": -1}, "resources.train.gpu"),
    ("misspelt resource", PAPER, {"resources.train.memory": 1}, "resources.train.memory"),
    # families
    ("unknown family block", PAPER, {"families.audio": {"model": {}}}, "families.audio"),
    ("misspelt family model key", PAPER, {"families.vision.model.dimm": 64}, "families.vision.model.dimm"),
    ("misspelt family train key", PAPER, {"families.nlp.train.learning_rate": 1e-3},
     "families.nlp.train.learning_rate"),
    ("misspelt family section", PAPER, {"families.vision.optim": {}}, "families.vision.optim"),
    ("lr zero", PAPER, {"families.vision.train.lr": 0}, "families.vision.train.lr"),
    ("epochs zero", PAPER, {"families.vision.train.epochs": 0}, "families.vision.train.epochs"),
    ("betas of length 3", PAPER, {"families.vision.train.betas": [0.9, 0.99, 0.999]}, "families.vision.train.betas"),
    ("label smoothing 1", PAPER, {"families.vision.train.label_smoothing": 1.0},
     "families.vision.train.label_smoothing"),
    ("pooling unknown", PAPER, {"families.nlp.model.pooling": "max"}, "families.nlp.model.pooling"),
    ("min_lr above lr", PAPER, {"families.vision.train.min_lr": 0.01}, "families.vision.train.min_lr"),
    ("min_lr above a dataset's lr", PAPER, {"dataset_config.cifar10.train": {"lr": 1e-6}},
     "families.vision.train.min_lr"),
    ("warmup longer than the run", PAPER, {"families.nlp.train.warmup_epochs": 31},
     "families.nlp.train.warmup_epochs"),
    ("warmup longer than a dataset's run", PAPER, {"dataset_config.mnist.train": {"epochs": 4}},
     "families.vision.train.warmup_epochs"),
    ("dim not divisible by heads", PAPER, {"families.nlp.model.heads": 6}, "families.nlp.model.heads"),
    ("dataset's dim not divisible by heads", PAPER, {"dataset_config.sst2.model": {"dim": 100}},
     "families.nlp.model.heads"),
    # dataset blocks
    ("misspelt data option", PAPER, {"dataset_config.mnist.data.val_fracton": 0.1},
     "dataset_config.mnist.data.val_fracton"),
    ("val_fraction 1", PAPER, {"dataset_config.mnist.data.val_fraction": 1.0},
     "dataset_config.mnist.data.val_fraction"),
    ("val_fraction above 1", PAPER, {"dataset_config.sst2.data.val_fraction": 1.5},
     "dataset_config.sst2.data.val_fraction"),
    ("val_fraction zero", PAPER, {"dataset_config.mnist.data.val_fraction": 0},
     "dataset_config.mnist.data.val_fraction"),
    ("val_fraction negative", PAPER, {"dataset_config.mnist.data.val_fraction": -0.1},
     "dataset_config.mnist.data.val_fraction"),
    ("val + test fraction 1", SMOKE, {"dataset_config.smoke_diabetes.data": {"val_fraction": 0.5,
                                                                             "test_fraction": 0.5}},
     "dataset_config.smoke_diabetes.data.val_fraction"),
    ("val_fraction a string", PAPER, {"dataset_config.mnist.data.val_fraction": "10%"},
     "dataset_config.mnist.data.val_fraction"),
    ("unknown ptb source", PAPER, {"dataset_config.ptb_pos.data.ptb_source": "ldc"},
     "dataset_config.ptb_pos.data.ptb_source"),
    ("unknown energy target", PAPER, {"dataset_config.energy_efficiency.data.target": "y1"},
     "dataset_config.energy_efficiency.data.target"),
    ("allow_unverified not a boolean", PAPER, {"dataset_config.sst2.data.allow_unverified": "yes"},
     "dataset_config.sst2.data.allow_unverified"),
    ("misspelt dataset block key", PAPER, {"dataset_config.mnist.trian": {"epochs": 3}},
     "dataset_config.mnist.trian"),
    ("misspelt dataset train key", PAPER, {"dataset_config.mnist.train.epoch": 3},
     "dataset_config.mnist.train.epoch"),
    ("misspelt dataset model key", PAPER, {"dataset_config.cifar10.model.patch": 4},
     "dataset_config.cifar10.model.patch"),
    ("dataset block without family", PAPER, {"dataset_config.mnist.family": DELETE},
     "dataset_config.mnist.family"),
    ("unknown family name", PAPER, {"dataset_config.mnist.family": "audio"}, "dataset_config.mnist.family"),
    ("wrong family for the dataset", PAPER, {"dataset_config.mnist.family": "nlp"}, "dataset_config.mnist.family"),
    ("block of an unknown dataset", PAPER, {"dataset_config.imagenet": {"family": "vision"}},
     "dataset_config"),
    ("unknown corruption set", PAPER, {"dataset_config.cifar10.corruptions": "imagenet_c"},
     "dataset_config.cifar10.corruptions"),
    ("corruption set of another dataset", PAPER, {"dataset_config.svhn.corruptions": "cifar10c"},
     "dataset_config.svhn.corruptions"),
]


def test_the_table_is_large():
    assert len(MALFORMED) >= 41
    assert len({case[0] for case in MALFORMED}) == len(MALFORMED)


@pytest.mark.parametrize("case,base,edits,key", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_config_is_rejected_naming_the_key(tmp_path, case, base, edits, key):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    edits = {k: (str(blocker / "sub") if v == REGULAR_FILE else
                 {d: str(blocker) for d in v} if isinstance(v, dict) and REGULAR_FILE in v.values() else v)
             for k, v in edits.items()}
    cfg = edited(base, edits)
    with pytest.raises(ConfigError) as err:
        check_config(cfg, check_device=True, cuda_available=False)
    message = str(err.value)
    assert f"config key {key}" in message, message


@pytest.mark.parametrize("name,base", [("paper", PAPER), ("smoke", SMOKE)])
def test_shipped_configs_pass(name, base):
    check_config(copy.deepcopy(base), check_device=True, cuda_available=False)


def test_checks_that_sound_alike_do_not_overreach():
    # the boundaries themselves are fine: min_lr == lr, warmup == epochs, t_freeze == epochs,
    # eps_h just below ln 2, a freezing family's long t_freeze when AutoNorm-S is not run
    check_config(edited(PAPER, {"families.vision.train.min_lr": 1e-3}))
    check_config(edited(SMOKE, {"families.tabular.train.warmup_epochs": 6}))
    check_config(edited(SMOKE, {"autonorm.t_freeze": 6}))
    check_config(edited(PAPER, {"autonorm.eps_h": 0.69}))
    check_config(edited(SMOKE, {"autonorm.t_freeze": 50, "methods": ["frozen_ln", "autonorm"],
                                "reference_method": "autonorm"}))
    check_config(edited(SMOKE, {"autonorm.t_freeze": 50, "autonorm.freeze": {"vision": False, "nlp": False,
                                                                             "tabular": False}}))
    # an unselected dataset's block is not checked for run-time nonsense
    check_config(edited(SMOKE, {"dataset_config.mnist.train": {"epochs": 1}}))
    # a cuda request passes where CUDA is present, and when the jobs run elsewhere
    check_config(edited(PAPER, {"runtime.device": "cuda"}), check_device=True, cuda_available=True)
    check_config(edited(PAPER, {"runtime.device": "cuda"}), check_device=False)


def test_every_problem_is_reported_at_once():
    cfg = edited(PAPER, {"families.vision.train.min_lr": 0.01, "families.nlp.model.heads": 6})
    with pytest.raises(ConfigError) as err:
        check_config(cfg)
    assert "families.vision.train.min_lr" in str(err.value) and "families.nlp.model.heads" in str(err.value)


def test_misspelt_key_gets_a_suggestion():
    with pytest.raises(ConfigError, match="did you mean 'val_fraction'"):
        check_config(edited(PAPER, {"dataset_config.mnist.data.val_fracton": 0.1}))


# ---- the report's grid guard (issue item 4) ----------------------------------------------------

GRID = {"datasets": ["cifar10", "mnist"], "methods": ["autonorm_s", "frozen_ln"], "seeds": [0, 1]}


def test_report_grid_guard(tmp_path):
    grid_file = tmp_path / "tables" / "grid.json"
    check_report_grid(grid_file, GRID, None)  # no report yet
    grid_file.parent.mkdir()
    grid_file.write_text(__import__("json").dumps(GRID))
    check_report_grid(grid_file, GRID, None)  # the same grid
    check_report_grid(grid_file, {**GRID, "seeds": [0, 1, 2]}, None)  # a larger grid
    with pytest.raises(ConfigError, match=r"lacks datasets \['mnist'\].*--config report_name="):
        check_report_grid(grid_file, {**GRID, "datasets": ["cifar10"]}, None)
    with pytest.raises(ConfigError, match=r"lacks seeds \[1\]"):
        check_report_grid(grid_file, {**GRID, "seeds": [0, 2]}, "subset")
    grid_file.write_text("{not json")
    with pytest.raises(ConfigError, match="grid.json"):
        check_report_grid(grid_file, GRID, None)


# ---- through Snakemake: refused while the DAG is built, before any job --------------------------

def snakemake_dry(tmp_path, *args):
    out = tmp_path / "results"
    p = subprocess.run(["snakemake", "-n", "all", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return p, p.stdout + p.stderr, out


@pytest.mark.dag  # runs Snakemake
def test_snakemake_refuses_nonsense_before_any_job(tmp_path):
    tweak = tmp_path / "tweak.yaml"
    tweak.write_text(f"results_dir: {tmp_path}/results\nraw_dir: {tmp_path}/raw\n"
                     "families:\n  vision:\n    train: {min_lr: 0.01}\n"
                     "dataset_config:\n  mnist:\n    family: vision\n    data: {val_fracton: 0.1}\n")
    p, out, res = snakemake_dry(tmp_path, "--configfile", str(tweak))
    assert p.returncode != 0
    assert "config key dataset_config.mnist.data.val_fracton" in out, out[-3000:]
    assert "Job stats" not in out and not res.exists()
    tweak.write_text(f"results_dir: {tmp_path}/results\nraw_dir: {tmp_path}/raw\n"
                     "families:\n  vision:\n    train: {min_lr: 0.01}\n")
    p, out, res = snakemake_dry(tmp_path, "--configfile", str(tweak))
    assert p.returncode != 0 and "config key families.vision.train.min_lr" in out, out[-3000:]
    assert "Job stats" not in out and not res.exists()


@pytest.mark.dag  # runs Snakemake
def test_yaml_syntax_error_names_file_and_line(tmp_path):
    # the workflow's own config.yaml: the Snakefile reads it first and names file and line
    work = tmp_path / "work"
    work.mkdir()
    for name in ["Snakefile", "workflow", "profiles", "envs"]:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, work / name)
    text = (ROOT / "config.yaml").read_text().replace("seeds: [0, 1, 2, 3, 4]", "seeds: [0, 1, 2, 3, 4")
    (work / "config.yaml").write_text(text)
    line = text[:text.index("seeds: [0, 1, 2, 3, 4")].count("\n") + 2  # the parser stops on the next line
    p = subprocess.run(["snakemake", "-n", "all"], cwd=work, capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode != 0 and f"config.yaml, line {line}" in out, out[-3000:]
    assert "Job stats" not in out
    # a --configfile: Snakemake reads it before the Snakefile runs and names neither file nor line,
    # but it stops before any job, and `python -m autonorm.config.workflow` names both
    bad = tmp_path / "bad.yaml"
    bad.write_text("results_dir: out\nseeds: [0, 1\nmethods: [dyt]\n")
    p, out, _ = snakemake_dry(tmp_path, "--configfile", str(bad))
    assert p.returncode != 0 and "not valid JSON or YAML" in out and "Job stats" not in out
    p = subprocess.run([sys.executable, "-m", "autonorm.config.workflow", "config.yaml", str(bad)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and f"{bad}, line 3, column 8: YAML syntax error" in p.stderr, p.stderr


def test_config_check_command(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "autonorm.config.workflow", "config.yaml", "workflow/presets/smoke.yaml"],
                        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    typo = tmp_path / "typo.yaml"
    typo.write_text("dataset_config:\n  mnist:\n    family: vision\n    data: {val_fracton: 0.2}\n")
    bad = subprocess.run([sys.executable, "-m", "autonorm.config.workflow", "config.yaml", str(typo)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "config key dataset_config.mnist.data.val_fracton" in bad.stderr


@pytest.mark.dag  # runs Snakemake
@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has CUDA")
def test_snakemake_refuses_cuda_without_cuda(tmp_path):
    p, out, res = snakemake_dry(tmp_path, "--config", "runtime={'device': 'cuda'}",
                                f"results_dir={tmp_path}/results")
    assert p.returncode != 0 and "config key runtime.device" in out, out[-3000:]
    assert "Job stats" not in out and not res.exists()


@pytest.mark.parametrize("preset", sorted(p.name for p in (ROOT / "workflow" / "presets").glob("*.yaml")))
def test_every_shipped_preset_passes_the_config_check(preset, monkeypatch, capsys):
    """A preset the README or a study record names is a documented command: it must pass the check
    Snakemake runs before any job (a method added to a study's preset, say, must be known and keep
    the reference method among the methods)."""
    from autonorm.config import workflow

    monkeypatch.chdir(ROOT)
    assert workflow.main(["config.yaml", f"workflow/presets/{preset}"]) == 0, capsys.readouterr().err


# --------------------------------------------------------------------------- checks of one run's settings
def test_patch_size_and_variant_eps_h_are_checked_before_any_job():
    from autonorm.config.run_config import ConfigError
    from autonorm.config.workflow import check_config, load_config

    cfg = load_config(ROOT / "config.yaml")
    cfg["dataset_config"]["mnist"]["model"] = {"patch_size": 5}
    with pytest.raises(ConfigError, match=r"dataset_config.mnist.model.patch_size: patch_size=5 does not "
                                          r"divide the 28x28 images \(datasets mnist\)"):
        check_config(cfg)
    cfg = load_config(ROOT / "config.yaml")
    cfg["ablations"] = {"datasets": ["ptb_pos"], "variants": ["gate_3"]}
    cfg["variants"]["gate_3"]["autonorm"]["eps_h"] = 1.2
    cfg["autonorm"]["freeze"]["nlp"] = True
    with pytest.raises(ConfigError, match=r"variants.gate_3.autonorm.eps_h: eps_h=1.2 is not below ln 3"):
        check_config(cfg)


@pytest.mark.parametrize("eps_h, t_freeze, key", [(0.0, 1, "eps_h"), (10.0, 1, "eps_h"), (0.1, 9, "t_freeze")])
def test_training_entry_point_refuses_what_the_workflow_refuses(tmp_path, capsys, eps_h, t_freeze, key):
    """autonorm-train and the workflow's config check run one validation of the AutoNorm settings:
    eps_h 0 (always freezes), eps_h 10 (never freezes: above ln 2) and a t_freeze after the last
    epoch are refused by both, naming the key."""
    import copy

    import yaml

    from autonorm.config.run_config import ConfigError, run_settings_problems
    from autonorm.config.workflow import check_config

    data = make_processed(tmp_path / "data", "regression")
    cfg = run_config(data, tmp_path / "run", method="autonorm_s", epochs=2, eps_h=eps_h, t_freeze=t_freeze)
    assert [k for k, _ in run_settings_problems(cfg)] == [f"autonorm.{key}"]
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 2
    assert f"run config key autonorm.{key}" in capsys.readouterr().err
    assert not (tmp_path / "run" / "metrics.json").exists()

    base = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow" / "presets" / "smoke.yaml").read_text())
    wf = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    wf.update(copy.deepcopy(base))
    wf["autonorm"] = dict(wf.get("autonorm") or {}, eps_h=eps_h if eps_h > 0 else 1e-9,
                          t_freeze=t_freeze if key == "t_freeze" else 1)
    if eps_h == 0:  # the schema refuses it (exclusiveMinimum 0), naming the key
        wf["autonorm"]["eps_h"] = 0.0
    with pytest.raises(ConfigError, match=rf"autonorm\.{key}"):
        check_config(wf)


def test_run_settings_of_a_good_run_pass():
    from autonorm.config.run_config import run_settings_problems

    cfg = run_config(Path("/nowhere"), Path("/nowhere/run"), method="autonorm_s", epochs=3, eps_h=0.1, t_freeze=2)
    assert run_settings_problems(cfg) == []
    assert run_settings_problems(dict(cfg, method="frozen_ln", autonorm=dict(cfg["autonorm"], eps_h=10))) == []
