"""The recipes of docs/develop.md work as written: a new gated norm is a norm class (layers/norms.py) and
a method entry (methods.py), and then trains, is evaluated, gets gate diagnostics, and appears in
the tables and the report's mechanism section without any other file changing.

Why: "one place per fact" is only true if adding the next method touches the files the recipe
names; this test adds one through those same entry points.
"""
from __future__ import annotations

import json

import pytest

from autonorm.analysis import aggregate
from autonorm.run import evaluate
from autonorm import methods, report
from autonorm.layers import norms
from autonorm.run.train import main as train_main
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import run_config


def test_a_toy_gated_norm_runs_through_training_evaluation_and_the_report(tmp_path, monkeypatch):
    # the recipe: 1. register the gate by its candidates' names (layers/norms.py: one line), 2. one
    # Method entry (methods.py); the registry entry is removed again after the test
    monkeypatch.setitem(norms.NORM_REGISTRY, "toy_gate", None)
    toy = norms.register_gated_norm("toy_gate", ("rms", "ln"))  # a learned gate between RMSNorm and LN
    assert norms.NORM_REGISTRY["toy_gate"] is toy and toy.choice_names == ("rms", "ln")
    monkeypatch.setitem(methods.METHODS, "toy_s", methods.Method("toy_s", "toy_gate", freeze_selectors=True,
                                                                 gate_choices=2, gated=True))
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
    # gates named by what they choose: RMSNorm and LN, never recorded as the paper's DyT
    gates = hist[0]["gates"]
    assert set(gates["weights"]["block0.attn"]) == {"rms", "ln"}
    assert gates["w_dyt"] == {} and gates["mean_w_dyt"] is None
    assert gates["w_ln"]["block0.attn"] == pytest.approx(gates["weights"]["block0.attn"]["ln"])
    assert sum(gates["weights"]["block0.attn"].values()) == pytest.approx(1.0)
    tables = tmp_path / "tables"
    assert aggregate.main(["--results", str(results), "--datasets", "mnist", "--methods", "frozen_ln",
                           "toy_s", "--seeds", "0", "1", "2", "--reference-method", "toy_s",
                           "--out-dir", str(tables)]) == 0
    out = tmp_path / "report.md"
    assert report.main(["--tables", str(tables), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| toy_s | accuracy" in text and "**toy_s** (3 seeds)" in text
    # the overhead table lists every gated method of the registry, a new one included
    cost = text[text.index("## Cost"):]
    assert "| toy_s |" in cost.split("\n\n## ")[0]
    # its gates are no DyT/LN gates: the gate table holds no w_DyT for them
    g = __import__("pandas").read_csv(tables / "gates.csv")
    toy = g[g.method == "toy_s"]
    assert len(toy) and toy.w_dyt.isna().all() and toy.w_ln.notna().all()


def test_a_toy_dataset_is_one_registry_entry_and_one_source(tmp_path, monkeypatch):
    """The dataset recipe: a DatasetSpec (registry.py) naming a DatasetSource beside its loader
    (here monkeypatched onto tabular.py). The download step (with --from), preprocess, the config
    check, training, evaluation, the tables and the report then take it with no other change."""
    import copy
    from pathlib import Path

    import numpy as np
    import yaml

    from autonorm.config.workflow import check_config
    from autonorm.data import pipeline, registry, tabular
    from autonorm.data.integrity import Checks, sha256_of
    from autonorm.data.local_source import plan_files
    from autonorm.data.source import DatasetSource

    # the raw format: one CSV, x1,x2,y; its checksum registered like any published file
    mirror = tmp_path / "mirror" / "toy"
    mirror.mkdir(parents=True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 2))
    y = 2.0 * x[:, 0] - x[:, 1] + 5.0
    np.savetxt(mirror / "toy.csv", np.c_[x, y], delimiter=",", header="x1,x2,y", comments="")

    def raw_file(raw):
        return Path(raw) / "toy_table" / "toy.csv"

    def verify(raw, opts):
        checks = Checks("toy_table", raw, bool(opts.get("allow_unverified", False)))
        if sha256_of(raw_file(raw)) == registry.CHECKSUMS["toy_table"]["toy.csv"][1]:
            checks.record(raw_file(raw), "sha256 (published)", True)
        else:
            checks.unverified(raw_file(raw), "checksum differs", "the published toy.csv")
        return checks

    def build(raw, opts):
        checks = verify(raw, opts)
        a = np.loadtxt(raw_file(raw), delimiter=",", skiprows=1)
        return tabular.build_regression("toy_table", a[:, :2], a[:, 2], ["x1", "x2"], "y", opts,
                                        {"provenance": checks.provenance("toy")})

    source = DatasetSource(build=build, present=lambda raw, opts: raw_file(raw).is_file(), verify=verify,
                           fetch=lambda raw, opts: (_ for _ in ()).throw(AssertionError("offline test")),
                           plan_from=plan_files({"toy.csv": "toy.csv"}, "toy_table"), hints=("toy",))
    monkeypatch.setattr(tabular, "TOY_TABLE", source, raising=False)
    monkeypatch.setitem(registry.DATASETS, "toy_table", registry.DatasetSpec(
        "toy_table", "tabular", "regression", False, "a toy regression table",
        defaults={"split_seed": 0, "val_fraction": 0.2, "test_fraction": 0.2}, display="Toy table",
        source="tabular:TOY_TABLE"))
    monkeypatch.setitem(registry.CHECKSUMS, "toy_table", {"toy.csv": ("sha256", sha256_of(mirror / "toy.csv"))})

    cfg = copy.deepcopy(yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text()))
    cfg["datasets"] = ["toy_table"]
    cfg["dataset_config"]["toy_table"] = {"family": "tabular"}
    check_config(cfg)

    raw, data = tmp_path / "raw", tmp_path / "results" / "data" / "toy_table"
    marker = pipeline.download("toy_table", raw, from_dir=tmp_path / "mirror")
    assert json.loads(marker.read_text())["provenance"]["status"] == "verified"
    meta = pipeline.preprocess("toy_table", raw, data)
    assert meta["sizes"] == {"train": 72, "val": 24, "test": 24}

    results = tmp_path / "results"
    for m in ("frozen_ln", "autonorm_s"):
        for seed in (0, 1, 2):
            run = results / "runs" / "toy_table" / m / f"seed{seed}"
            rc = run_config(data, run, method=m, seed=seed, epochs=2)
            rc["dataset"], rc["family"] = "toy_table", "tabular"
            rc["train"].update({"mix_prob": 0.0, "label_smoothing": 0.0})
            assert train_main(["--run-config", json.dumps(rc), "--threads", "1"]) == 0
            out = results / "eval" / "toy_table" / m / f"seed{seed}.json"
            assert evaluate.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(out),
                                  "--device", "cpu", "--threads", "1"]) == 0
    tables = tmp_path / "tables"
    assert aggregate.main(["--results", str(results), "--datasets", "toy_table", "--methods", "frozen_ln",
                           "autonorm_s", "--seeds", "0", "1", "2", "--out-dir", str(tables)]) == 0
    out = tmp_path / "report.md"
    assert report.main(["--tables", str(tables), "--out", str(out)]) == 0
    assert "Toy table" in out.read_text()
