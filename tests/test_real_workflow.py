"""Real data through the whole Snakemake DAG: download from a local folder, verify, preprocess,
train, evaluate, aggregate, figures and report, on MNIST (a 5,000-image training subset) and
UCI Energy Efficiency with two methods and one seed.

Inputs: the shared folder of real files (``AUTONORM_SHARED_DATA``, or ``shared/data`` beside the
checkout). Skips with a printed reason when it is absent. The laptop preset is the base config,
so this also checks that the preset runs as shipped (only epochs, subset and grid are narrowed).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from helpers.limits import limit
from helpers.snakemake_runs import copy_workflow, snakemake

pytestmark = pytest.mark.dag  # real data through the whole Snakemake DAG

SHARED = Path(os.environ.get("AUTONORM_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")

NARROW = """\
datasets: [mnist, energy_efficiency]
methods: [frozen_ln, autonorm_s]
seeds: [0]
results_dir: results/real
raw_dir: raw
dataset_config:
  mnist:
    family: vision
    data: {max_train: 5000}
    train: {epochs: 3, batch_size: 64}
  energy_efficiency:
    family: tabular
    train: {epochs: 40}
"""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    if not (SHARED / "mnist").is_dir() or not (SHARED / "energy_efficiency").is_dir():
        print(f"SKIP: no shared real-data folder with mnist/ and energy_efficiency/ at {SHARED} "
              "(set AUTONORM_SHARED_DATA)")
        pytest.skip(f"no shared real-data folder at {SHARED}")
    work = copy_workflow(tmp_path_factory.mktemp("real wf"))  # a space in the path, on purpose
    (work / "narrow.yaml").write_text(NARROW)
    raw_from = json.dumps({"mnist": str(SHARED / "mnist"), "energy_efficiency": str(SHARED / "energy_efficiency")})
    snakemake("all", "--cores", "2", "--configfile", "workflow/presets/laptop.yaml", "narrow.yaml",
              "--config", f"raw_from={raw_from}", cwd=work, timeout=limit(600))
    return work / "results" / "real"


@pytest.mark.slow
def test_real_data_dag_learns_and_reports(real_run):
    res = real_run
    summary = pd.read_csv(res / "tables" / "summary.csv")

    def mean(dataset, method, metric):
        row = summary[(summary.dataset == dataset) & (summary.method == method) & (summary.metric == metric)]
        assert len(row) == 1, (dataset, method, metric)
        return float(row["mean"].iloc[0])

    mnist_meta = json.loads((res / "data" / "mnist" / "meta.json").read_text())
    energy_meta = json.loads((res / "data" / "energy_efficiency" / "meta.json").read_text())
    assert mnist_meta["provenance"]["status"] == "verified"
    assert energy_meta["provenance"]["status"] == "verified"
    assert mnist_meta["sizes"] == {"train": 5000, "val": 6000, "test": 10000}
    majority = mnist_meta["trivial_baseline"]["test"]["accuracy"]
    mean_predictor = energy_meta["trivial_baseline"]["test"]["rmse"]
    for method in ("frozen_ln", "autonorm_s"):
        # 5,000 images and 3 epochs: far above the 11% majority class, not the paper's 99%
        assert mean("mnist", method, "accuracy") > max(75.0, majority + 50)
        # the train-mean predictor's RMSE is ~10 kWh/m^2; 40 epochs get well below it
        assert mean("energy_efficiency", method, "rmse") < 0.6 * mean_predictor
    ev = json.loads((res / "eval" / "mnist" / "autonorm_s" / "seed0.json").read_text())
    assert ev["rotation"]["accuracy"] < ev["test"]["accuracy"]  # no rotation augmentation in training
    report = (res / "report.md").read_text()
    assert "verified" in report and "stand-in" not in report.split("## ")[0].lower()
    for f in ["method_comparison.png", "gate_entropy.png", "wdyt_heatmap.png"]:
        assert (res / "figures" / f).stat().st_size > 5000
