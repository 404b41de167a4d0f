"""Aggregation of a hand-written results folder (run folders + eval jsons per the contract).

Why: the tables are the source of every number in the report, so they are
checked against values chosen by hand: means/stds of known seeds, that a
diverged or missing run is reported and never averaged in, that paper values
sit only beside paper datasets, and that the CIFAR-10-C summary is filed
under ``cifar10c`` for cifar10 only. The folder: tests/helpers/hand_results.py;
the paper-shaped folder's tables (stale and same runs, baselines, ablations):
tests/test_aggregate_paper_grid.py.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from autonorm.analysis import aggregate
from autonorm.output_names import TABLE_NAMES
from helpers.hand_results import DATASETS, METHODS, SEEDS, build_results, run_aggregate
from helpers.hand_results import accuracy as _acc
from helpers.tables import one_row as _row


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = build_results(tmp_path_factory.mktemp("results"))
    return run_aggregate(root)


def test_all_tables_written(tables):
    for name in TABLE_NAMES:
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
    for name in TABLE_NAMES:
        assert (out / name).is_file()


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


def test_missing_config_hash_is_unknown_not_stale(tables):
    runs = tables["runs.csv"]
    ok = runs[runs.status == "ok"]
    assert len(ok) and set(ok.config_state) == {"unknown"}

