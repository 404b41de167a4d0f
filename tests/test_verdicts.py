"""Verdicts say what the paper said: each check reads the epoch, the layers, the branch and the
test level that the paper's sentence names (docs/method.md sections 6-7).

Why: a verdict that looks at the wrong epoch or the wrong layers turns a measurement into a
wrong claim about the paper. Each test builds a small hand-made table on which the earlier
reading gave the opposite verdict.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autonorm.analysis import ablations, collect, stats, summaries
from autonorm.report.context import ReportContext
from autonorm.report import gate_checks
from autonorm.report.sections import mechanism


def _gates(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "seed", "epoch", "selector", "layer",
                                       "sublayer", "entropy", "w_dyt", "w_ln"])


def _history(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "seed", "epoch", "mean_entropy"])


def test_mnist_entropy_is_read_at_epoch_5_not_at_the_end():
    # H falls below 0.1 only at epoch 12: the paper's "within 5 epochs" does not hold
    g = _gates([("mnist", "autonorm_s", s, e, "block0.attn", 0, "attn", 0.0, 0.05, 0.95)
                for s in (0, 1) for e in range(1, 13)])
    h = _history([("mnist", "autonorm_s", s, e, 0.3 if e <= 10 else 0.02)
                  for s in (0, 1) for e in range(1, 13)])
    rows = gate_checks.mnist_checks(g, h, 0.02, 12, False)
    h_row = rows[1]
    assert "mean H = 0.300 at epoch 5" in h_row[2] and "final 0.020 at epoch 12" in h_row[2]
    assert h_row[3] == "**not reproduced**"


def test_mnist_checks_need_epoch_5():
    g = _gates([("mnist", "autonorm_s", 0, e, "block0.attn", 0, "attn", 0.0, 0.05, 0.95)
                for e in range(1, 4)])
    h = _history([("mnist", "autonorm_s", 0, e, 0.01) for e in range(1, 4)])
    rows = gate_checks.mnist_checks(g, h, 0.01, 3, False)
    assert all(r[3] == "not measurable in this run" for r in rows)
    assert "no epoch 5 (the run has only 3 epochs)" in rows[0][2]


def test_three_way_gate_w_ln_is_not_one_minus_w_dyt():
    # AutoNorm-3: DyT 0.05, LN 0.50, RMSNorm 0.45 -> w_LN = 0.50, not 1 - 0.05 = 0.95
    g = _gates([("mnist", "autonorm3", 0, e, f"block{b}.attn", b, "attn", 0.0, 0.05, 0.50)
                for e in range(1, 7) for b in range(2)])
    h = _history([("mnist", "autonorm3", 0, e, 0.01) for e in range(1, 7)])
    row = gate_checks.mnist_checks(g, h, 0.01, 6, False)[0]
    assert "w_LN = 0.500 at epoch 5" in row[2] and row[3] == "**not reproduced**"


def test_aggregate_keeps_w_ln_of_three_way_gates(tmp_path):
    hist = [{"epoch": 1, "val_metric": 1.0, "gates": {"entropy": {"block0.attn": 0.9},
                                                      "w_dyt": {"block0.attn": 0.2},
                                                      "w_ln": {"block0.attn": 0.3}}}]
    gates, rows = [], []
    collect.collect_history(gates, rows, "ptb_pos", "autonorm3", 0, hist, choices=3)
    assert gates[0]["w_ln"] == pytest.approx(0.3)
    # an older history without w_ln: 1 - w_DyT only where it holds (two branches)
    del hist[0]["gates"]["w_ln"]
    gates = []
    collect.collect_history(gates, rows, "ptb_pos", "autonorm3", 0, hist, choices=3)
    assert math.isnan(gates[0]["w_ln"])
    gates = []
    collect.collect_history(gates, rows, "ptb_pos", "autonorm", 0, hist, choices=2)
    assert gates[0]["w_ln"] == pytest.approx(0.8)
    assert collect.gate_choices({"method": "autonorm_s", "norm_options": {"gates": 3}}) == 3
    assert collect.gate_choices({"method": "autonorm3"}) == 3
    assert collect.gate_choices({"method": "autonorm_s", "norm_options": {}}) == 2


def test_ptb_layers_8_to_12_are_blocks_7_to_11():
    assert gate_checks.ptb_layer_groups(12) == ([0, 1, 2, 3], [7, 8, 9, 10, 11])
    # block 7 (the paper's layer 8) is LN-leaning; blocks 8-11 prefer DyT
    fin = pd.DataFrame({"selector": [f"block{b}.attn" for b in range(12)],
                        "layer": list(range(12)),
                        "w_dyt": [0.5] * 7 + [0.6] + [0.9] * 4, "entropy": [0.3] * 12})
    h = _history([("ptb_pos", "autonorm", 0, e, 0.45) for e in range(1, 5)])
    rows = gate_checks.ptb_checks(fin, h, 0.45, 4, False)
    deep = rows[2]
    assert deep[0].startswith("deep layers (blocks 7-11: paper layers 8-12)")
    assert "min w_DyT = 0.600" in deep[2] and deep[3] == "**not reproduced**"
    early = rows[1]
    assert early[0].startswith("early layers (blocks 0-3: paper layers 1-4)")


def _ctx(summary, freeze, comparisons=None, standin=False):
    t = {name: pd.DataFrame() for name in ("summary", "comparisons", "runs", "gates", "history",
                                           "freeze", "corruptions", "datasets", "baselines",
                                           "ablations")}
    t["summary"], t["freeze"] = summary, freeze
    if comparisons is not None:
        t["comparisons"] = comparisons
    ctx = ReportContext(t=t, out=Path("report.md"))
    ctx.ds_standin = {d: standin for d in summary.dataset}
    return ctx


def _acc(d, a_s, a):
    return pd.DataFrame({"dataset": [d, d], "method": ["autonorm_s", "autonorm"],
                         "metric": ["accuracy"] * 2, "mean": [a_s, a]})


def test_freeze_effect_says_nothing_froze():
    freeze = pd.DataFrame({"dataset": ["cifar10"] * 3, "method": ["autonorm_s"] * 3,
                           "seed": [0, 1, 2], "froze": [False] * 3})
    line = "\n".join(mechanism.freeze_effect(_ctx(_acc("cifar10", 84.0, 84.3), freeze)))
    assert "**nothing froze** (0 of 3 seeds" in line and "opposite sign" not in line
    froze = freeze.assign(froze=[True, True, False])
    line = "\n".join(mechanism.freeze_effect(_ctx(_acc("cifar10", 84.0, 84.3), froze)))
    assert "2 of 3 AutoNorm-S seeds froze" in line and "**opposite sign to the paper**" in line


def test_freeze_effect_on_a_standin_quotes_no_paper_number():
    freeze = pd.DataFrame({"dataset": ["smoke_shapes32"] * 2, "method": ["autonorm_s"] * 2,
                           "seed": [0, 1], "froze": [True, True]})
    line = "\n".join(mechanism.freeze_effect(_ctx(_acc("smoke_shapes32", 80.0, 79.0), freeze,
                                                  standin=True)))
    assert "+1.1" not in line and "+2.0" not in line and "86.35" not in line


def _values(rows):
    return pd.DataFrame(rows, columns=["dataset", "source_dataset", "method", "seed", "metric",
                                       "value", "standin"])


def test_detectable_difference_at_the_holm_level():
    # three baselines on one primary metric; differences with sd 1, 0.5 and 0.2 over 4 seeds
    diffs = {"dyt": [1.0, 2.0, 3.0, 2.5], "random": [0.1, 0.9, 0.4, 0.6],
             "frozen_ln": [0.5, 0.7, 0.6, 0.4]}
    rows = []
    for s in range(4):
        rows.append(("mnist", "mnist", "autonorm_s", s, "accuracy", 90.0, False))
        for m, d in diffs.items():
            rows.append(("mnist", "mnist", m, s, "accuracy", 90.0 - d[s], False))
    comp = summaries.compare_methods(_values(rows), ["autonorm_s", "dyt", "random", "frozen_ln"],
                                     {"mnist": {"family": "vision"}}).set_index("method_b")
    assert stats.holm_levels([0.01, 0.04, 0.02]) == pytest.approx([0.05 / 3, 0.05 / 1, 0.05 / 2])
    order = comp["p"].sort_values().index
    for rank, m in enumerate(order):
        alpha = 0.05 / (3 - rank)
        assert comp.loc[m, "holm_alpha"] == pytest.approx(alpha)
        want = stats.min_detectable_difference(4, float(np.std(diffs[m], ddof=1)), alpha=alpha)
        assert comp.loc[m, "mdd80_holm"] == pytest.approx(want)
    # the smallest p faces alpha / 3: its detectable difference is larger than at alpha
    first = order[0]
    assert comp.loc[first, "mdd80_holm"] > comp.loc[first, "mdd80"]


def test_derived_corruption_means_are_not_extra_holm_tests():
    rows = []
    for s in range(3):
        for metric, (a, b) in {"gaussian_noise_s3": (60.0, 58.0 - s), "motion_blur_s3": (70.0, 69.0 + 0.3 * s),
                               "brightness_s3": (80.0, 79.0 - 0.2 * s), "mean_s3": (70.0, 68.6 - 0.4 * s),
                               "mean_all": (66.0, 65.0 - 0.1 * s)}.items():
            rows.append(("cifar10c", "cifar10", "autonorm_s", s, metric, a, False))
            rows.append(("cifar10c", "cifar10", "frozen_ln", s, metric, b, False))
    comp = summaries.compare_methods(_values(rows), ["autonorm_s", "frozen_ln"],
                                     {"cifar10": {"family": "vision"}}).set_index("metric")
    assert (comp.loc[["gaussian_noise_s3", "motion_blur_s3", "brightness_s3"], "holm_m"] == 3).all()
    for derived in ("mean_s3", "mean_all"):
        assert math.isfinite(comp.loc[derived, "p"]) and math.isnan(comp.loc[derived, "p_holm"])
        assert "not counted in Holm" in comp.loc[derived, "note"]


def test_epochs_to_99pct_of_the_final_value():
    assert stats.epochs_to_fraction([(1, 50.0), (2, 90.0), (3, 99.5), (4, 100.0)], True) == 3.0
    # an error: within final / 0.99 of the final RMSE (0.5 / 0.99 = 0.50505)
    assert stats.epochs_to_fraction([(1, 2.0), (2, 0.505), (3, 0.5)], False) == 2.0
    assert stats.epochs_to_fraction([(1, 2.0), (2, 0.506), (3, 0.5)], False) == 3.0
    assert math.isnan(stats.epochs_to_fraction([], True))


def test_hard_gumbel_convergence_is_tested_on_learning_curves():
    # soft reaches 99% of its final accuracy at epoch 2, hard at epoch 4 (seeds 0-2); the final
    # accuracies are equal, so a test on the final metric alone sees no difference
    hist = []
    for s in range(3):
        for e in range(1, 6):
            hist.append(("mnist", "gumbel_soft", s, e, 97.0 if e >= 2 else 50.0))
            hist.append(("mnist", "gumbel_hard", s, e, 97.0 if e >= 4 + (s == 2) else 60.0))
    history = pd.DataFrame(hist, columns=["dataset", "method", "seed", "epoch", "val_metric"])
    history["val_metric_name"] = "accuracy"
    values = _values([("mnist", "mnist", m, s, "accuracy", 97.0 + 0.1 * s, False)
                      for m in ("autonorm_s", "gumbel_soft", "gumbel_hard") for s in range(3)])
    runs = pd.DataFrame({"dataset": [], "method": [], "seed": [], "status": [], "same_run_as": []})
    variants = {"gumbel_soft": {"base": "autonorm_s", "axis": "gumbel", "value": "soft"},
                "gumbel_hard": {"base": "autonorm_s", "axis": "gumbel", "value": "hard"}}
    ab = ablations.ablation_table(values, runs, variants, history=history)
    conv = ab[(ab.metric == "epochs_to_99pct") & ~ab.is_base.astype(bool)].set_index("variant")
    assert conv.loc["gumbel_soft", "mean"] == pytest.approx(2.0)
    assert conv.loc["gumbel_hard", "mean"] == pytest.approx((4 + 4 + 5) / 3)
    assert not conv.loc["gumbel_hard", "higher_is_better"]
    # the final accuracy shows no difference between the two
    fin = ab[(ab.metric == "accuracy") & ~ab.is_base.astype(bool)].set_index("variant")
    assert fin.loc["gumbel_hard", "mean"] == pytest.approx(fin.loc["gumbel_soft", "mean"])


def test_wilcoxon_threshold_is_the_first_n_that_can_reject():
    # the exact two-sided signed-rank test's smallest p with n pairs is 2 / 2**n
    from scipy import stats as sps
    smallest = {n: sps.wilcoxon(np.arange(1, n + 1) * 1.0).pvalue for n in range(3, 8)}
    can_reject = [n for n, p in smallest.items() if p < 0.05]
    assert stats.MIN_N_WILCOXON == min(can_reject) == 6
    assert smallest[5] == pytest.approx(0.0625)
