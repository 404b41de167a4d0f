"""Aggregation of a paper-shaped results folder: what a real grid brings that a hand-written one
does not.

Why: a run reconfigured after its evaluation (stale) must count nowhere; AutoNorm-S on NLP is the
same training as AutoNorm and must be shown, not tested against it; a method at or below the
trivial baseline is flagged; an ablation variant is tested against its base (a default-valued one
is its base's runs) and never enters the main tables. The folder: tests/helpers/paper_results.py,
built once per session (``paper_results`` in tests/conftest.py).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from autonorm.analysis import aggregate
from helpers.paper_results import ALL_METHODS, STALE_RUN, VARIANTS, build_paper_results
from helpers.tables import one_row as _row


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
