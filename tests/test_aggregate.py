"""Aggregation on a hand-written results folder (run folders + eval jsons per the contract).

Why: the tables are the source of every number in the report, so they are
checked against values chosen by hand: means/stds of known seeds, that a
diverged or missing run is reported and never averaged in, that paper values
sit only beside paper datasets, and that the CIFAR-10-C summary is filed
under ``cifar10c`` for cifar10 only.

``build_results`` is also imported by test_figures.py and test_report.py.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autonorm.analysis import aggregate

CORRUPTIONS = ["gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur",
               "motion_blur", "zoom_blur", "snow", "frost", "fog", "brightness", "contrast",
               "elastic_transform", "pixelate", "jpeg_compression"]

METHODS = ["autonorm_s", "frozen_ln", "autonorm"]
SEEDS = [0, 1, 2]
DATASETS = ["mnist", "cifar10", "smoke_pos", "smoke_shapes32"]

#: hand-chosen MNIST test accuracies (percent); frozen_ln seed 2 diverges, autonorm seed 2 is missing
MNIST_ACC = {"autonorm_s": [99.0, 99.2, 99.4], "frozen_ln": [98.0, 98.5, None],
             "autonorm": [98.8, 99.1, None]}

INFO = {
    "mnist": dict(task="image_classification", family="vision", standin=False, blocks=2),
    "cifar10": dict(task="image_classification", family="vision", standin=False, blocks=2),
    "smoke_pos": dict(task="token_classification", family="nlp", standin=True, blocks=6),
    "smoke_shapes32": dict(task="image_classification", family="vision", standin=True, blocks=2),
}


def _w(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def _acc(d: str, m: str, s: int) -> float | None:
    if d == "mnist":
        return MNIST_ACC[m][s]
    base = {"cifar10": 85.0, "smoke_pos": 90.0, "smoke_shapes32": 70.0}[d]
    bonus = {"autonorm_s": 1.0, "frozen_ln": 0.0, "autonorm": 0.5}[m]
    return base + bonus + 0.3 * s + 0.1 * (s * s % 3)


def _history(d: str, m: str, epochs: int, blocks: int) -> list[dict]:
    hist = []
    for e in range(1, epochs + 1):
        gates = None
        if m in ("autonorm", "autonorm_s"):
            ent, wd = {}, {}
            for b in range(blocks):
                for sub in ("attn", "mlp"):
                    sel = f"block{b}.{sub}"
                    if d == "smoke_pos":
                        # early layers mixed, deep layers DyT, H ~0.45 early
                        target = 0.5 if b < blocks // 3 else (0.9 if b >= blocks - blocks // 3 else 0.6)
                        w = 0.5 + (target - 0.5) * e / epochs
                        h = 0.45 if e <= epochs // 2 else 0.3
                    else:
                        # MNIST-like: collapse to LN (w_DyT -> 0.05) within 4 epochs
                        w = max(0.05, 0.5 - 0.15 * e)
                        h = max(0.02, 0.6 - 0.15 * e)
                    wd[sel] = w + 0.001 * b
                    ent[sel] = h
            gates = {"entropy": ent, "w_dyt": wd, "mean_entropy": float(np.mean(list(ent.values()))),
                     "mean_w_dyt": float(np.mean(list(wd.values())))}
        hist.append({"epoch": e, "train_loss": 1.0 / e, "val_loss": 1.1 / e,
                     "val_metric": 80.0 + e, "val_metric_name": "accuracy", "lr": 1e-3,
                     "epoch_time_s": 1.5, "frozen": bool(m == "autonorm_s" and d == "smoke_shapes32"
                                                         and e > 3), "gates": gates})
    return hist


def build_results(root: Path, datasets=DATASETS, methods=METHODS, seeds=SEEDS) -> Path:
    """Write run folders, eval jsons and data meta.json files (docs/data.md's formats).

    cifar10 only has seed 0 (seeds 1, 2 missing) so that its comparisons have n=1.
    """
    root = Path(root)
    for d in datasets:
        info = INFO[d]
        _w(root / "data" / d / "meta.json", {"name": d, "task": info["task"], "family": info["family"],
                                             "standin": info["standin"], "description": d})
        for m in methods:
            for s in seeds:
                run = root / "runs" / d / m / f"seed{s}"
                if d == "cifar10" and s > 0:
                    continue  # missing
                acc = _acc(d, m, s)
                if d == "mnist" and m == "autonorm" and s == 2:
                    continue  # missing run
                _w(run / "config.json", {"dataset": d, "method": m, "seed": s})
                _w(run / "env.json", {"python": "3.11.9", "torch": "2.4.0", "device": "cpu",
                                      "threads": 4, "host": "secret-host",
                                      "start_time": "2026-01-01T00:00:00"})
                epochs = 6
                _w(run / "history.json", _history(d, m, epochs, info["blocks"]))
                frz = m == "autonorm_s" and d == "smoke_shapes32"
                _w(run / "freeze.json", {"enabled": m == "autonorm_s" and info["family"] == "vision",
                                         "t_freeze": 3, "eps_h": 0.1, "froze": frz,
                                         "epoch": 3 if frz else None,
                                         "entropy_at_decision": 0.2 if frz else 0.05})
                if acc is None:  # diverged
                    _w(run / "failed.json", {"status": "diverged", "epoch": 2, "step": 17,
                                             "message": "NaN loss"})
                    # autonorm-evaluate's stub for a diverged run (no numbers)
                    _w(root / "eval" / d / m / f"seed{s}.json",
                       {"dataset": d, "method": m, "seed": s, "status": "diverged",
                        "message": "NaN loss"})
                    continue
                if info["task"] == "token_classification":
                    test = {"accuracy": acc, "precision_macro": acc - 5, "recall_macro": acc - 6,
                            "f1_macro": acc - 5.5, "tag_perplexity": 1.0 + (100 - acc) / 20}
                else:
                    test = {"accuracy": acc, "precision_macro": acc - 1, "recall_macro": acc - 1.5,
                            "f1_macro": acc - 1.2}
                cost = {"params": 1000 + (50 if m != "frozen_ln" else 0), "flops_per_sample": 2.0e6,
                        "latency_ms_per_batch": 3.0 + 0.1 * s, "latency_batch_size": 256,
                        "train_wall_time_s": 60.0 + s, "device": "cpu"}
                _w(run / "metrics.json", {"dataset": d, "method": m, "seed": s, "task": info["task"],
                                          "family": info["family"], "standin": info["standin"],
                                          "status": "ok", "epochs": epochs, "test": test,
                                          "val": test, "cost": cost})
                ev = {"dataset": d, "method": m, "seed": s, "standin": info["standin"],
                      "task": info["task"], "test": test, "rotation": None, "corruptions": None,
                      "corruption_summary": None, "cost": cost, "corruption_generated": None}
                if info["family"] == "vision":
                    ev["rotation"] = {"accuracy": acc / 4}
                if d in ("cifar10", "smoke_shapes32"):
                    corr = {c: {str(k): acc - 3 * k - i * 0.5 for k in range(1, 6)}
                            for i, c in enumerate(CORRUPTIONS)}
                    s3 = {f"{c}_s3": corr[c]["3"] for c in ("gaussian_noise", "motion_blur", "brightness")}
                    s3["mean_s3"] = float(np.mean(list(s3.values())))
                    s3["mean_all"] = float(np.mean([v for c in corr.values() for v in c.values()]))
                    ev["corruptions"] = corr
                    ev["corruption_summary"] = s3
                    ev["corruption_generated"] = d != "cifar10"
                if not (d == "smoke_pos" and m == "autonorm" and s == 1):  # an ok run without eval
                    _w(root / "eval" / d / m / f"seed{s}.json", ev)
    return root


def run_aggregate(root: Path, datasets=tuple(DATASETS), methods=tuple(METHODS),
                  seeds=tuple(SEEDS)) -> dict[str, pd.DataFrame]:
    aggregate.main(["--results", str(root), "--datasets", *datasets, "--methods", *methods,
                    "--seeds", *map(str, seeds), "--out-dir", str(root / "tables")])
    return {n: pd.read_csv(root / "tables" / n) for n in aggregate.TABLE_NAMES}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = build_results(tmp_path_factory.mktemp("results"))
    return run_aggregate(root)


def _row(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (kw, sel)
    return sel.iloc[0]


def test_all_tables_written(tables):
    for name in aggregate.TABLE_NAMES:
        assert name in tables
    assert list(tables["summary.csv"].columns[:11]) == [
        "dataset", "method", "metric", "n", "mean", "std", "ci95_low", "ci95_high",
        "paper_mean", "paper_std", "standin"]
    assert list(tables["comparisons.csv"].columns[:14]) == [
        "dataset", "metric", "method_a", "method_b", "n", "mean_a", "mean_b", "mean_diff", "t",
        "p", "p_holm", "cohens_dz", "wilcoxon_p", "note"]


def test_runs_status(tables):
    runs = tables["runs.csv"]
    assert len(runs) == len(DATASETS) * len(METHODS) * len(SEEDS)
    assert _row(runs, dataset="mnist", method="frozen_ln", seed=2).status == "diverged"
    assert "NaN loss" in _row(runs, dataset="mnist", method="frozen_ln", seed=2).message
    assert not _row(runs, dataset="mnist", method="frozen_ln", seed=2).has_eval
    assert _row(runs, dataset="mnist", method="autonorm", seed=2).status == "missing"
    assert _row(runs, dataset="cifar10", method="autonorm_s", seed=1).status == "missing"
    assert _row(runs, dataset="mnist", method="autonorm_s", seed=0).status == "ok"
    no_eval = _row(runs, dataset="smoke_pos", method="autonorm", seed=1)
    assert no_eval.status == "ok" and not no_eval.has_eval


def test_summary_values_by_hand(tables):
    s = tables["summary.csv"]
    r = _row(s, dataset="mnist", method="autonorm_s", metric="accuracy")
    assert r.n == 3 and r["mean"] == pytest.approx(99.2) and r["std"] == pytest.approx(0.2)
    half = 4.302652729911275 * 0.2 / math.sqrt(3)  # t_{0.975,2} * sd / sqrt(n)
    assert r.ci95_low == pytest.approx(99.2 - half) and r.ci95_high == pytest.approx(99.2 + half)
    assert r.paper_mean == pytest.approx(99.18) and r.paper_std == pytest.approx(0.10)
    assert not r.standin
    # diverged seed 2 is NOT averaged in: mean of 98.0, 98.5 only
    f = _row(s, dataset="mnist", method="frozen_ln", metric="accuracy")
    assert f.n == 2 and f["mean"] == pytest.approx(98.25) and f.n_diverged == 1
    a = _row(s, dataset="mnist", method="autonorm", metric="accuracy")
    assert a.n == 2 and a.n_missing == 1 and math.isnan(a.paper_mean)
    rot = _row(s, dataset="mnist", method="autonorm_s", metric="rotation_accuracy")
    assert rot["mean"] == pytest.approx(99.2 / 4) and rot.paper_mean == pytest.approx(10.10)
    cost = _row(s, dataset="mnist", method="autonorm_s", metric="params")
    assert cost["mean"] == 1050 and cost.metric_family == "cost"


def test_standin_has_no_paper_values(tables):
    s = tables["summary.csv"]
    st = s[s.source_dataset.isin(["smoke_pos", "smoke_shapes32"])]
    assert len(st) and st.standin.all() and st.paper_mean.isna().all()
    assert "tag_perplexity" in set(s[s.dataset == "smoke_pos"].metric)


def test_corruption_summary_naming(tables):
    s = tables["summary.csv"]
    c = _row(s, dataset="cifar10c", method="autonorm_s", metric="mean_s3")
    assert c.source_dataset == "cifar10" and c.n == 1
    # cifar10's corruption set is marked real (corruption_generated False) -> paper value present
    assert c.paper_mean == pytest.approx(72.8)
    # the stand-in keeps its own name, never cifar10c, and gets no paper value
    st = _row(s, dataset="smoke_shapes32", method="autonorm_s", metric="gaussian_noise_s3")
    assert math.isnan(st.paper_mean) and st.standin
    corr = tables["corruptions.csv"]
    assert set(corr.dataset) == {"cifar10", "smoke_shapes32"}
    assert len(corr[(corr.dataset == "cifar10") & (corr.method == "autonorm_s")]) == 15 * 5
    one = _row(corr, dataset="cifar10", method="autonorm_s", seed=0, corruption="gaussian_noise",
               severity=3)
    assert one.accuracy == pytest.approx(_acc("cifar10", "autonorm_s", 0) - 9)


def test_comparisons(tables):
    c = tables["comparisons.csv"]
    r = _row(c, dataset="mnist", metric="accuracy", method_b="frozen_ln")
    # paired by seed: seeds 0 and 1 only (seed 2 diverged)
    assert r.n == 2 and r.mean_diff == pytest.approx(((99.0 - 98.0) + (99.2 - 98.5)) / 2)
    d = np.array([1.0, 0.7])
    t = d.mean() / (d.std(ddof=1) / math.sqrt(2))
    assert r.t == pytest.approx(t) and r.cohens_dz == pytest.approx(d.mean() / d.std(ddof=1))
    assert math.isnan(r.wilcoxon_p) and "Wilcoxon" in r.note
    # Holm family: mnist primary = accuracy vs frozen_ln, vs autonorm -> m = 2
    fam = c[(c.dataset == "mnist") & (c.holm_family == "primary")]
    assert set(fam.holm_m) == {2}
    assert r.p_holm >= r.p
    one = _row(c, dataset="cifar10", metric="accuracy", method_b="frozen_ln")
    assert one.n == 1 and math.isnan(one.p) and one.note == "n=1: no test"
    assert not (c.metric.isin(["params", "flops_per_sample"])).any()


def test_gates_history_freeze(tables):
    g = tables["gates.csv"]
    x = _row(g, dataset="smoke_pos", method="autonorm_s", seed=0, epoch=6, selector="block5.mlp")
    assert x.layer == 5 and x.sublayer == "mlp" and x.w_dyt == pytest.approx(0.9 + 0.005)
    assert not (g.method == "frozen_ln").any()
    h = tables["history.csv"]
    assert len(h[(h.dataset == "mnist") & (h.method == "autonorm_s")]) == 3 * 6
    f = tables["freeze.csv"]
    fr = _row(f, dataset="smoke_shapes32", method="autonorm_s", seed=1)
    assert bool(fr.froze) and fr.epoch == 3


def test_missing_results_folder(tmp_path):
    """Nothing at all on disk: every run is 'missing' and the tables are still written."""
    out = tmp_path / "tables"
    aggregate.main(["--results", str(tmp_path), "--datasets", "mnist", "--methods", "autonorm_s",
                    "frozen_ln", "--seeds", "0", "--out-dir", str(out)])
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs.status) == {"missing"}
    s = pd.read_csv(out / "summary.csv")
    # the paper's rows stay visible with n = 0, no number of ours
    r = _row(s, dataset="mnist", method="autonorm_s", metric="accuracy")
    assert r.n == 0 and math.isnan(r["mean"]) and r.paper_mean == pytest.approx(99.18)
    for name in aggregate.TABLE_NAMES:
        assert (out / name).is_file()


def test_io_utils_atomic_json_roundtrip(tmp_path):
    """write_json_atomic: numpy scalars serialise, NaN becomes null, no temp file is left behind."""
    from autonorm.io_utils import read_json, write_json_atomic, write_text_atomic

    p = tmp_path / "sub" / "x.json"
    write_json_atomic(p, {"a": np.float32(1.5), "b": np.int64(3), "c": float("nan"),
                          "d": [np.bool_(True)], "e": np.arange(2)})
    assert read_json(p) == {"a": 1.5, "b": 3, "c": None, "d": [True], "e": [0, 1]}
    write_text_atomic(p.with_suffix(".txt"), "hello")
    assert p.with_suffix(".txt").read_text() == "hello"
    assert sorted(f.name for f in p.parent.iterdir()) == ["x.json", "x.txt"]
    import os

    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would, not mkstemp's 0600


def test_eval_stub_alone_means_diverged(tmp_path):
    """Only the evaluator's diverged stub on disk (no failed.json, no metrics.json): diverged."""
    import json as _json

    p = tmp_path / "eval" / "mnist" / "dyt" / "seed0.json"
    p.parent.mkdir(parents=True)
    p.write_text(_json.dumps({"dataset": "mnist", "method": "dyt", "seed": 0, "status": "diverged",
                              "message": "NaN loss at step 3"}))
    t = aggregate.aggregate(tmp_path, ["mnist"], ["dyt"], [0], tmp_path / "tables")
    r = t["runs.csv"].iloc[0]
    assert r.status == "diverged" and "NaN loss at step 3" in r.message
    assert (t["summary.csv"]["n"] == 0).all()


# --------------------------------------------------------------------------- a paper-sized folder
#: the paper's nine datasets with a plausible level of our primary metric and its trivial baseline
PAPER9 = {
    "mnist": ("image_classification", "vision", "accuracy", 98.9, 11.35),
    "fashion_mnist": ("image_classification", "vision", "accuracy", 92.0, 10.0),
    "cifar10": ("image_classification", "vision", "accuracy", 84.0, 10.0),
    "cifar100": ("image_classification", "vision", "accuracy", 60.0, 1.0),
    "svhn": ("image_classification", "vision", "accuracy", 90.0, 19.6),
    "ptb_pos": ("token_classification", "nlp", "accuracy", 96.5, 13.0),
    "sst2": ("sequence_classification", "nlp", "accuracy", 82.0, 50.9),
    "energy_efficiency": ("regression", "tabular", "rmse", 1.2, 10.1),
    "california_housing": ("regression", "tabular", "rmse", 0.52, 1.15),
}
ALL_METHODS = ["frozen_ln", "dyt", "random", "autonorm", "autonorm_s", "adanorm", "film",
               "teacher_mlp"]
#: method -> offset of the primary metric (in "better" direction units)
OFFSET = {"autonorm_s": 0.4, "autonorm": 0.3, "frozen_ln": 0.0, "dyt": -0.3, "random": 0.1,
          "adanorm": 0.2, "film": -0.1, "teacher_mlp": -3.0}
VARIANTS = {  # name -> (base, axis, value, offset, datasets, same run as) (config.yaml's forms)
    "tau_0_25": ("autonorm_s", "tau", 0.25, -0.2, ("cifar10", "ptb_pos"), None),
    "tau_0_5": ("autonorm_s", "tau", 0.5, None, ("cifar10", "ptb_pos"), "autonorm_s"),
    "tau_1": ("autonorm_s", "tau", 1.0, -0.5, ("cifar10", "ptb_pos"), None),
    "selector_linear": ("autonorm_s", "selector", "linear", -1.0, ("ptb_pos",), None),
    "gate_2": ("autonorm", "gate3", 2, None, ("ptb_pos",), "autonorm"),
    "gate_3": ("autonorm3", "gate3", 3, 0.35, ("ptb_pos",), None),
}
STALE_RUN = ("mnist", "dyt", 1)


def _gate_history(family: str, epochs: int, blocks: int, seed: int, same_as_autonorm: bool,
                  method: str) -> list[dict]:
    """Per-epoch gate records of a 'blocks'-layer model: vision collapses to LN, NLP mixes."""
    hist = []
    for e in range(1, epochs + 1):
        ent, wd = {}, {}
        for b in range(blocks):
            for sub in ("attn", "mlp"):
                if family == "nlp":
                    target = 0.5 if b < blocks // 3 else (0.85 if b >= blocks - blocks // 3 else 0.6)
                    w = 0.5 + (target - 0.5) * e / epochs
                    h = 0.45 if e <= epochs // 2 else 0.25
                else:
                    w = max(0.04, 0.5 - 0.12 * e) + 0.002 * b
                    h = max(0.03, 0.62 - 0.12 * e)
                if method == "autonorm" and not same_as_autonorm and family != "nlp":
                    h, w = h + 0.05, w + 0.03
                wd[f"block{b}.{sub}"] = w + 0.003 * seed
                ent[f"block{b}.{sub}"] = h
        hist.append({"epoch": e, "train_loss": 1.0 / e, "val_loss": 1.2 / e,
                     "val_metric": 70 + 3 * e + (0.5 if method == "autonorm_s" else 0.0),
                     "val_metric_name": "accuracy", "lr": 1e-3, "epoch_time_s": 2.0,
                     "frozen": False,
                     "gates": {"entropy": ent, "w_dyt": wd,
                               "mean_entropy": float(np.mean(list(ent.values()))),
                               "mean_w_dyt": float(np.mean(list(wd.values())))}})
    return hist


def build_paper_results(root: Path, datasets=tuple(PAPER9), methods=tuple(ALL_METHODS),
                        seeds=(0, 1, 2), blocks: int = 12, epochs: int = 6,
                        variants: bool = True) -> Path:
    """A paper-shaped results folder: 9 real datasets, 8 methods, 12-layer gates, baselines,
    provenance, config hashes (one run stale), AutoNorm-S = AutoNorm on NLP, and variants."""
    root = Path(root)
    rng = np.random.default_rng(0)
    runs = [(d, m, s, None) for d in datasets for m in methods for s in seeds]
    if variants:
        runs += [(d, v, s, spec) for v, spec in VARIANTS.items() for d in spec[4] if d in datasets
                 for s in seeds]
    for d in datasets:
        task, fam, metric, level, base = PAPER9[d]
        n = {"train": 45000, "val": 5000, "test": 10000}
        _w(root / "data" / d / "meta.json", {
            "name": d, "task": task, "family": fam, "standin": False,
            "description": f"{d} (the real dataset)", "sizes": n,
            "split_note": "last 10% of the official train split is val",
            "trivial_baseline": {"name": "mean predictor" if fam == "tabular" else "majority class",
                                 "test": {metric: base}},
            "provenance": {"status": "verified", "note": "checksums as published",
                           "files": [{"path": f"{d}/train.bin", "sha256": "ab" * 32,
                                      "check": "sha256", "verified": True}]}})
    noise = {}
    for d, m, s, vspec in runs:
        task, fam, metric, level, base = PAPER9[d]
        same = fam == "nlp" and m == "autonorm_s"
        src = "autonorm" if same else m
        if vspec and vspec[5]:  # a default-valued variant: the same training as its base
            src = vspec[5]
            if fam == "nlp" and src == "autonorm_s":
                src = "autonorm"
        key = (d, src, s)
        if key not in noise:
            noise[key] = float(rng.normal(0, 0.15))
        off = vspec[3] if vspec and vspec[3] is not None else OFFSET.get(src, 0.0)
        if d == "sst2" and m == "teacher_mlp":
            off = 50.0 - level  # at the majority-class baseline: must be flagged
        sign = 1 if metric == "accuracy" else -0.05
        value = level + sign * off + noise[key] * (1 if metric == "accuracy" else 0.05)
        test = {metric: value}
        if metric == "accuracy":
            test.update(precision_macro=value - 1, recall_macro=value - 1.5, f1_macro=value - 1.2)
        else:
            test["mae"] = value * 0.7
        if task == "token_classification":
            test["tag_perplexity"] = 1.0 + (100 - value) / 25
        cfg = {"dataset": d, "method": m, "seed": s, "autonorm": {"tau": 0.5, "t_freeze": 10},
               "model": {"dim": 128, "depth": 8 if fam == "vision" else 12}}
        if vspec and vspec[1] == "tau":
            cfg["autonorm"]["tau"] = vspec[2]
        duplicate = same or bool(vspec and vspec[5])
        if duplicate:
            # trained once under the other name: no run folder, the eval file is a copy of
            # the other run's (its config hash included), marked same_run_as
            cfg = dict(cfg, method=src)
            cfg["autonorm"] = {"tau": 0.5, "t_freeze": 10}
        run = root / "runs" / d / (src if duplicate else m) / f"seed{s}"
        chash = aggregate.current_config_hash(cfg)
        if not duplicate:
            _w(run / "config.json", cfg)
        if (d, m, s) == STALE_RUN:
            # the folder was reconfigured after evaluation (lr changed, job failed, old eval kept)
            _w(run / "config.json", dict(cfg, lr=0.003))
        cost = {"params": 1_080_000 + (138_000 if "autonorm" in m else 0),
                "flops_per_sample": 5.0e7 * (1.0019 if "autonorm" in m else 1.0),
                "latency_ms_per_batch": 20.0 * (1 + len(m) % 5) + s, "train_wall_time_s": 600.0}
        if duplicate:
            pass  # nothing of its own on disk but the eval file
        else:
            _w(run / "metrics.json", {"dataset": d, "method": m, "seed": s, "task": task,
                                      "family": fam, "standin": False, "status": "ok",
                                      "epochs": epochs, "test": test, "cost": cost})
        if duplicate:
            pass
        elif m in ("autonorm", "autonorm_s") or (vspec and "autonorm" in vspec[0]):
            _w(run / "history.json", _gate_history(fam, epochs, blocks, s, same, src))
        else:
            _w(run / "history.json", [{"epoch": e, "train_loss": 1.0 / e, "val_loss": 1.2 / e,
                                       "val_metric": 70 + 3 * e, "val_metric_name": "accuracy",
                                       "lr": 1e-3, "epoch_time_s": 2.0, "frozen": False}
                                      for e in range(1, epochs + 1)])
        if m == "autonorm_s" and not duplicate:
            froze = fam == "vision" and s == 0
            _w(run / "freeze.json", {"enabled": fam == "vision", "t_freeze": 4, "eps_h": 0.1,
                                     "froze": froze, "epoch": 4 if froze else None,
                                     "entropy_at_decision": 0.15 if froze else 0.05})
        ev = {"dataset": d, "method": m, "seed": s, "standin": False, "task": task,
              "test": test, "cost": cost, "config_hash": chash}
        if same:
            ev["same_run_as"] = "autonorm"
        if vspec and vspec[5]:
            # the workflow's rule (autonorm.config.variants.same_runs): methods before variants, so
            # a default variant on NLP points at autonorm, not at autonorm_s
            ev["same_run_as"] = "autonorm" if fam == "nlp" else vspec[5]
        if vspec:
            ev["variant"] = {"name": m, "base": vspec[0], "axis": vspec[1], "value": vspec[2]}
        if fam == "vision":
            ev["rotation"] = {"accuracy": value / 3}
        if d == "cifar10" and not vspec:
            corr = {c: {str(k): value - 4 * k - i * 0.6 for k in range(1, 6)}
                    for i, c in enumerate(CORRUPTIONS)}
            s3 = {f"{c}_s3": corr[c]["3"] for c in ("gaussian_noise", "motion_blur", "brightness")}
            s3["mean_s3"] = float(np.mean(list(s3.values())))
            s3["mean_all"] = float(np.mean([v for c in corr.values() for v in c.values()]))
            ev.update(corruptions=corr, corruption_summary=s3, corruption_generated=False)
        _w(root / "eval" / d / m / f"seed{s}.json", ev)
    return root


def run_paper_aggregate(root: Path, datasets=tuple(PAPER9), methods=tuple(ALL_METHODS),
                        seeds=(0, 1, 2)) -> dict[str, pd.DataFrame]:
    return run_aggregate(root, datasets, methods, seeds)


@pytest.fixture(scope="module")
def paper_tables(tmp_path_factory):
    root = build_paper_results(tmp_path_factory.mktemp("paper"))
    return run_paper_aggregate(root)


def test_stale_run_excluded(paper_tables):
    """A run whose folder config changed after its evaluation is 'stale' and counts nowhere."""
    runs = paper_tables["runs.csv"]
    d, m, s = STALE_RUN
    r = _row(runs, dataset=d, method=m, seed=s)
    assert r.status == "stale" and r.config_state == "stale"
    assert r.config_hash_recorded != r.config_hash_current and "excluded" in r.message
    ok = _row(runs, dataset=d, method=m, seed=0)
    assert ok.status == "ok" and ok.config_state == "current"
    summ = _row(paper_tables["summary.csv"], dataset=d, method=m, metric="accuracy")
    assert summ.n == 2 and summ.n_stale == 1
    assert not ((paper_tables["gates.csv"].dataset == d) & (paper_tables["gates.csv"].method == m)
                & (paper_tables["gates.csv"].seed == s)).any()


def test_missing_config_hash_is_unknown_not_stale(tables):
    runs = tables["runs.csv"]
    ok = runs[runs.status == "ok"]
    assert len(ok) and set(ok.config_state) == {"unknown"}


def test_same_runs_not_tested(paper_tables):
    c = paper_tables["comparisons.csv"]
    r = _row(c, dataset="ptb_pos", metric="accuracy", method_b="autonorm")
    assert bool(r.same_runs) and math.isnan(r.p) and "same training runs" in r.note
    assert r.mean_diff == pytest.approx(0.0)
    # the same runs are left out of the Holm family: 6 other baselines on accuracy + perplexity
    fam = c[(c.dataset == "ptb_pos") & (c.holm_family == "primary")]
    assert set(fam.holm_m) == {2 * (len(ALL_METHODS) - 2)}
    vis = _row(c, dataset="cifar10", metric="accuracy", method_b="autonorm")
    assert not bool(vis.same_runs) and np.isfinite(vis.p)
    s = paper_tables["summary.csv"]
    dup = _row(s, dataset="sst2", method="autonorm_s", metric="accuracy")
    assert dup.same_run_as == "autonorm" and dup.n == 3  # no run folder of its own: not missing
    r = _row(paper_tables["runs.csv"], dataset="sst2", method="autonorm_s", seed=0)
    assert r.status == "ok" and r.config_state == "current"
    assert r.path.endswith("runs/sst2/autonorm/seed0")


def test_power_and_paper_difference(paper_tables):
    c = paper_tables["comparisons.csv"]
    r = _row(c, dataset="mnist", metric="accuracy", method_b="frozen_ln")
    assert r.n == 3
    from autonorm.analysis import stats as st

    assert r.mdd80 == pytest.approx(st.min_detectable_difference(3, r.sd_diff))
    assert r.paper_diff == pytest.approx(99.18 - 98.82)


def test_trivial_baseline_flag(paper_tables):
    s = paper_tables["summary.csv"]
    bad = _row(s, dataset="sst2", method="teacher_mlp", metric="accuracy")
    assert bad.baseline_value == pytest.approx(50.9) and bool(bad.at_or_below_baseline)
    good = _row(s, dataset="energy_efficiency", method="autonorm_s", metric="rmse")
    assert good.baseline_name == "mean predictor" and not bool(good.at_or_below_baseline)
    ds = paper_tables["datasets.csv"]
    m = _row(ds, dataset="mnist")
    assert m.provenance_status == "verified" and m.n_files_verified == 1 and m.n_test == 10000


def test_ablation_table(paper_tables):
    ab = paper_tables["ablations.csv"]
    # variants never enter the main tables
    assert not paper_tables["summary.csv"].method.isin(list(VARIANTS)).any()
    tau = ab[(ab.dataset == "cifar10") & (ab.axis == "tau") & (ab.metric == "accuracy")]
    assert list(tau.variant) == ["autonorm_s", "tau_0_25", "tau_0_5", "tau_1"]
    base = tau[tau.is_base].iloc[0]
    assert float(base.value) == 0.5  # read from the base run's config.json
    v = tau[tau.variant == "tau_1"].iloc[0]
    s = paper_tables["summary.csv"]
    ref = _row(s, dataset="cifar10", method="autonorm_s", metric="accuracy")
    assert base["mean"] == pytest.approx(ref["mean"])
    assert v.n == 3 and v.n_pairs == 3 and v.mean_diff_vs_base == pytest.approx(-0.9, abs=0.6)
    tested = tau[~tau.is_base & tau.p_vs_base.notna()]
    assert set(tested.holm_m) == {2} and (tested.p_vs_base_holm >= tested.p_vs_base).all()
    # the default value is the same training as the base: shown, not tested; on PTB the
    # link goes through autonorm (autonorm_s = autonorm there) and is still recognised
    for d in ("cifar10", "ptb_pos"):
        dflt = _row(ab, dataset=d, axis="tau", variant="tau_0_5", metric="accuracy")
        assert math.isnan(dflt.p_vs_base) and "same training runs" in dflt.note
    cap = ab[(ab.axis == "selector")]
    assert set(cap.dataset) == {"ptb_pos"} and "linear" in set(cap.value.astype(str))
    # 3-way gate: its base autonorm3 never ran, so it is tested against autonorm (= gate_2)
    g3 = _row(ab, dataset="ptb_pos", axis="gate3", variant="gate_3", metric="accuracy")
    assert g3.base == "autonorm" and "its own base autonorm3 has no run here" in g3.note
    assert g3.n_pairs == 3 and np.isfinite(g3.p_vs_base)
    g2 = _row(ab, dataset="ptb_pos", axis="gate3", variant="gate_2", metric="accuracy")
    assert "same training runs" in g2.note
    # the base's value on the axis, taken from the variant that is its own runs
    gb = _row(ab, dataset="ptb_pos", axis="gate3", variant="autonorm", metric="accuracy")
    assert bool(gb.is_base) and float(gb.value) == 2


def test_explicit_variant_list_overrides_discovery(tmp_path):
    """--variants names the ablations of this grid; left-over variant folders are not read."""
    root = build_paper_results(tmp_path, datasets=("ptb_pos",), methods=("autonorm", "autonorm_s"),
                               blocks=2)
    t = aggregate.aggregate(root, ["ptb_pos"], ["autonorm", "autonorm_s"], [0, 1, 2],
                            tmp_path / "t1", variants=["tau_1"])
    assert set(t["ablations.csv"].variant) == {"autonorm_s", "tau_1"}
    assert set(t["runs.csv"].method) == {"autonorm", "autonorm_s", "tau_1"}
    t = aggregate.aggregate(root, ["ptb_pos"], ["autonorm", "autonorm_s"], [0, 1, 2],
                            tmp_path / "t2", variants=[])
    assert t["ablations.csv"].empty and set(t["runs.csv"].method) == {"autonorm", "autonorm_s"}
