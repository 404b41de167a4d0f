"""The ledger's verdict rules (report.findings.rules, docs/method.md section 11), each on a hand-made
table: the regime rule (with the paper's backbone), the claim as the paper states it (every part of
it), one margin applied both ways, what a directional claim's data exclude, the tally, and the
categories. Where the rule changed a verdict, the test says what the code before it printed."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from autonorm.analysis import stats
from autonorm.report.findings import rules
from autonorm.report.findings.rows import Row, counted_rows, tally
from autonorm.report.findings.rules import Claim, Paired

REFERENCE = pd.DataFrame([
    {"dataset": "mnist", "method": "frozen_ln", "metric": "accuracy", "mean": 98.82, "std": 0.13},
    {"dataset": "mnist", "method": "autonorm_s", "metric": "accuracy", "mean": 99.18, "std": 0.10},
    {"dataset": "mnist", "method": "adanorm", "metric": "accuracy", "mean": 98.95, "std": 0.12},
    {"dataset": "ptb_pos", "method": "frozen_ln", "metric": "accuracy", "mean": 96.80, "std": 0.15},
    {"dataset": "california_housing", "method": "frozen_ln", "metric": "rmse", "mean": 0.4905, "std": 0.0},
])
MNIST_MARGIN = 0.004 * 98.82


def _summary(d: str, metric: str, frozen_ln: float, trivial: float) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": d, "method": "frozen_ln", "metric": metric, "mean": frozen_ln,
                          "baseline_value": trivial}])


def _paired(per_seed, p_holm=math.nan) -> Paired:
    d = np.asarray(per_seed, dtype=float)
    return Paired(len(d), float(d.mean()), float(d.std(ddof=1)), p_holm)


LEAD_WITHIN_CI = Claim(+1, True, 0.36, ("AutoNorm-S", "frozen_ln"), ("the lead", "\"within the 95% CI\""))


@pytest.mark.parametrize("d, metric, ours, trivial, expected", [
    ("mnist", "accuracy", 88.14, 11.35, False),     # 10.7 points below the paper
    ("mnist", "accuracy", 97.50, 11.35, True),      # 1.3 below
    ("mnist", "accuracy", 96.82, 11.35, True),      # exactly 2 points below: in
    ("mnist", "accuracy", 96.81, 11.35, False),
    ("ptb_pos", "accuracy", 89.26, 89.06, False),   # at the most-frequent-tag baseline
    ("ptb_pos", "accuracy", 95.00, 93.50, False),   # within 2 points, but 1.5 of the paper's 3.3 margin
    ("ptb_pos", "accuracy", 95.00, 89.06, True),    # within 2 points, 5.9 of the paper's 7.7 margin
    ("california_housing", "rmse", 0.5033, 1.15, True),   # +2.6%
    ("california_housing", "rmse", 0.55, 1.15, False),    # +12%
])
def test_regime_rule(d, metric, ours, trivial, expected):
    ok, why = rules.regime(_summary(d, metric, ours, trivial), REFERENCE, d)
    assert ok is expected, why
    assert f"{ours:g}"[:4] in why and "the paper's" in why


def test_regime_needs_the_papers_backbone():
    """A 3 x 64 ViT whose LayerNorm is 1.3 points below the paper's was in regime by accuracy alone;
    the paper's claims are about its 8 x 128 ViT-Lite, so the study is out (before: in, and its
    MNIST rows read "reproduced")."""
    def study(model):
        return SimpleNamespace(ctx=SimpleNamespace(summary=_summary("mnist", "accuracy", 97.50, 11.35),
                                                   ds_family={"mnist": "vision"}),
                               run_config=lambda d, m="autonorm_s": {"model": model})
    ok, why = rules.study_regime(study({"depth": 3, "dim": 64}), REFERENCE, "mnist")
    assert ok is False and why.startswith("3 x 64, not the paper's 8 x 128 backbone")
    assert rules.study_regime(study({"depth": 8, "dim": 128}), REFERENCE, "mnist")[0] is True


def test_out_of_regime_is_symmetric():
    for v in ("reproduced: the lead holds", "contradicted (the lead): the lead is reversed",
              "depends on our choice (margin): ..."):
        out = rules.out_of_regime(v, False, "frozen_ln 88.1 vs the paper's 98.8")
        assert out.startswith("inconclusive: out of the paper's regime (frozen_ln 88.1")
    assert rules.out_of_regime("reproduced", True, "x") == "reproduced"
    assert rules.out_of_regime("inconclusive: n", False, "x") == \
        "inconclusive: out of the paper's regime (x); the runs say: inconclusive: n"
    assert rules.out_of_regime("cannot be what it says: x", False, "y") == "cannot be what it says: x"
    # a study whose regime cannot be judged (no frozen_ln run, no paper FrozenLN number) decides nothing
    assert rules.out_of_regime("reproduced", None, "no frozen_ln run") == \
        "inconclusive: the regime cannot be judged (no frozen_ln run); the runs say: reproduced"


def test_tost_by_hand():
    # n = 3, mean diff 0.1, sd 0.2, margin 1: se = 0.11547, df 2
    se = 0.2 / math.sqrt(3)
    t = stats.tost(3, 0.1, 0.2, 1.0)
    assert t["p"] == pytest.approx(max(sps.t.sf((0.1 + 1) / se, 2), sps.t.cdf((0.1 - 1) / se, 2)))
    assert t["ci90"] == pytest.approx((0.1 - 2.919985580355516 * se, 0.1 + 2.919985580355516 * se))
    for diff, sd in ((0.1, 0.2), (0.5, 0.3), (-0.8, 0.1), (0.0, 1.0)):
        t = stats.tost(3, diff, sd, 1.0)
        assert (t["p"] < 0.05) == (-1.0 < t["ci90"][0] and t["ci90"][1] < 1.0)
    # one-sided: learned - random +0.14 / +0.22 / +0.09 (mean 0.15, sd 0.0656): t = 3.96, df 2
    p = stats.one_sided_p(3, 0.15, float(np.std([0.14, 0.22, 0.09], ddof=1)), +1)
    assert p == pytest.approx(sps.t.sf(0.15 / (np.std([0.14, 0.22, 0.09], ddof=1) / math.sqrt(3)), 2))
    assert p == pytest.approx(0.029, abs=0.001)


def test_the_margin_is_the_papers_smallest_improvement_by_hand():
    # 0.4% of the paper's FrozenLN value: MNIST 98.82 -> 0.395 points, California 0.4905 -> 0.00196
    assert rules.margin("accuracy", 98.82) == pytest.approx(0.39528)
    assert rules.margin("rmse", 0.4905) == pytest.approx(0.001962)
    # the paper's own "within the CI" (0.36), "highly competitive" (0.17) and "not significant"
    # (0.0013 RMSE) are inside it; its smallest "improvement" (0.4) is at its edge
    assert 0.36 < rules.margin("accuracy", 98.82) and 0.17 < rules.margin("accuracy", 93.12)
    assert 0.0013 < rules.margin("rmse", 0.4905)
    assert math.isnan(rules.margin("rotation_accuracy", 8.13))  # no margin: the paper disowns rotation


def test_a_significant_deficit_against_a_stated_lead_is_contradicted():
    """mnist_regime, AutoNorm-S - frozen_ln per seed -0.51 / -0.44 / -0.56, Holm p 0.024. The paper:
    "leads by 0.36% ... within the 95% CI". Before: "reproduced: equivalent within ±1" (the
    equivalence alone, at a margin of our own)."""
    v = rules.judge(_paired([-0.51, -0.44, -0.56], 0.024), LEAD_WITHIN_CI, MNIST_MARGIN)
    assert v.startswith("contradicted (the lead): the lead is reversed (the opposite sign, p (Holm) = 0.024)")
    assert "\"within the 95% CI\" is not shown within ±0.395" in v
    assert "AutoNorm-S better at all is excluded" in v
    assert v.endswith("the verdict holds at every margin")


def test_every_part_must_hold_for_reproduced():
    """A tight -0.02 (laptop MNIST): equivalent within the margin, but no lead. Before:
    "reproduced: equivalent within ±1"; now the lead is one part of the claim, not shown."""
    v = rules.judge(Paired(3, -0.02, 0.03, 1.0), LEAD_WITHIN_CI, MNIST_MARGIN)
    assert v.startswith("inconclusive: the lead is not shown (p (Holm) = 1)")
    assert "\"within the 95% CI\" holds within ±0.395 (TOST p = 0.0011" in v
    both = rules.judge(Paired(3, 0.1, 0.03, 0.01), LEAD_WITHIN_CI, MNIST_MARGIN)
    assert both.startswith("reproduced: the lead holds (the paper's sign, p (Holm) = 0.01)")
    # a lead stated "within the CI" is one the paper calls no meaningful difference: excluding a lead
    # of its size (0.36) contradicts nothing, whatever the margin
    assert "depends" not in rules.judge(Paired(3, -0.02, 0.03, 1.0), LEAD_WITHIN_CI, MNIST_MARGIN / 2)


def test_the_margin_applies_against_the_paper_too():
    """Learned minus random on mnist_regime, +0.14 / +0.22 / +0.09, Holm p 0.058: the abstract says
    random selectors outperform learned ones. A random advantage of the margin (0.395) is excluded,
    indeed any (one-sided 95% bound +0.039). Before: "inconclusive (p (Holm) = 0.058)"."""
    claim = Claim(-1, False, math.inf, ("autonorm", "random"), ("random's advantage", ""))
    v = rules.judge(_paired([0.14, 0.22, 0.09], 0.058), claim, MNIST_MARGIN)
    assert v.startswith("contradicted (random's advantage): random's advantage of ±0.395 or more is excluded")
    assert "random better at all is excluded (one-sided 95%: autonorm at least 0.039 better)" in v
    # by hand: the one-sided 95% lower bound is mean - t_{0.95, 2} sd / sqrt(3)
    sd = float(np.std([0.14, 0.22, 0.09], ddof=1))
    assert 0.15 - 2.919985580355516 * sd / math.sqrt(3) == pytest.approx(0.0394, abs=5e-4)


def test_excluded_range_in_words():
    claim = Claim(-1, False, math.inf, ("autonorm_s", "random"), ("random's advantage", ""))
    p = Paired(3, 0.12, 0.11, 0.19)
    lo = 0.12 - 2.919985580355516 * 0.11 / math.sqrt(3)   # -0.0654
    assert rules.exclusion(p, claim) == f"random better by more than {abs(lo):.2g} is excluded (one-sided 95%)"


def test_excluded_range_names_the_better_side_where_lower_is_better():
    """An RMSE: the paper's AutoNorm-S - frozen_ln < 0 says AutoNorm-S is the better one. Ours
    +0.00894 with sd 0.00494 over 3 seeds: the one-sided 95% lower bound 0.00894 - 2.920 x 0.00494 /
    sqrt(3) = +0.00061 > 0, so AutoNorm-S is *worse* by at least that, and the words must say so
    (not "frozen_ln better at all is excluded", the reading of an accuracy)."""
    claim = Claim(-1, True, 0.0013, ("AutoNorm-S", "frozen_ln"), ("the lead", ""), higher_is_better=False)
    p = Paired(3, 0.00894, 0.00494, 0.36)
    lo = 0.00894 - 2.919985580355516 * 0.00494 / math.sqrt(3)
    assert lo == pytest.approx(0.00061, abs=1e-5)
    assert rules.exclusion(p, claim) == (
        f"AutoNorm-S better at all is excluded (one-sided 95%: frozen_ln at least {lo:.2g} better)")
    # the same numbers for an accuracy: a negative paper sign now favours frozen_ln
    acc = Claim(-1, True, 0.17, ("AutoNorm-S", "frozen_ln"), ("FrozenLN's lead", ""))
    assert rules.exclusion(p, acc) == (
        f"frozen_ln better at all is excluded (one-sided 95%: AutoNorm-S at least {lo:.2g} better)")
    # an epoch count (more epochs: slower), the paper's "hard Gumbel converges slower" (+1)
    slow = Claim(1, False, 0.0, ("gumbel_hard", "autonorm_s"), ("the stated effect", ""), False, "faster")
    hi = -0.333 + 2.919985580355516 * 0.85 / math.sqrt(3)
    assert rules.exclusion(Paired(3, -0.333, 0.85, 0.42), slow) == (
        f"autonorm_s faster by more than {hi:.2g} is excluded (one-sided 95%)")


def test_a_verdict_that_flips_within_half_to_twice_the_margin_depends_on_it():
    """A table's +0.40 lead (MNIST precision) against -0.1 / +0.05 / -0.2: at half the margin and at the
    margin a lead of 0.40 is one the paper calls an improvement, and the data exclude it; at twice the
    margin (0.79) 0.40 is below what the paper calls an improvement, and nothing is decided."""
    claim = Claim(+1, False, 0.40, ("AutoNorm-S", "frozen_ln"), ("the table's difference", ""))
    v = rules.judge(_paired([-0.1, 0.05, -0.2], 0.5), claim, MNIST_MARGIN)
    assert v.startswith("depends on our choice (margin): contradicted at ±0.198, contradicted at ±0.395, "
                        "inconclusive at ±0.791")
    assert rules.category(v) == "depends on our choice"


def test_margin_range_by_hand():
    """Equivalence holds exactly for margins beyond the 90% CI's farther end."""
    p = Paired(3, -0.02, 0.03, 1.0)
    claim = Claim(0, True, 0.0)
    lo, hi = rules.margin_range(p, claim, MNIST_MARGIN)
    far = 0.02 + 2.919985580355516 * 0.03 / math.sqrt(3)   # |90% CI low| = 0.0706
    assert hi == math.inf and lo == pytest.approx(far, rel=0.03)


def test_reference_method_outside_the_band_is_printed():
    s = pd.DataFrame([{"dataset": "mnist", "method": "autonorm_s", "metric": "accuracy", "mean": 97.05}])
    assert rules.reference_method_band(s, REFERENCE, "mnist", "accuracy") == (
        "our autonorm_s 97.05 vs the paper's 99.18 (within 2 points: no): outside the band frozen_ln meets")
    s.loc[0, "mean"] = 97.5
    assert rules.reference_method_band(s, REFERENCE, "mnist", "accuracy") == ""


def test_tally_counts_every_row_once_with_zeros_and_observations_apart():
    rows = [Row("a", "§", "laptop", "", "", "reproduced", key="a", in_regime=False, n=3),
            Row("a", "§", "regime", "", "", "contradicted (the lead): x", key="a", in_regime=True, n=3),
            Row("b", "§", "x", "", "", "inconclusive: out of the paper's regime (y)", key="b", in_regime=False),
            Row("c", "§", "x", "", "", "observation: ours", observation=True)]
    counted = counted_rows(rows)
    assert [r.supporting for r in counted] == [True, False, False, False]
    line = tally(counted)
    assert line.startswith("2 claims of the paper: 0 reproduced, 1 contradicted, 1 inconclusive, 0 depends on our choice")
    assert "0 not met on this CPU" in line and "0 ill-defined" in line
    assert line.endswith("besides them 1 observations of our own and 1 supporting rows (the same claims in "
                         "other studies, or of the other learned gate): 4 rows")


def test_cost_rows_not_met_when_every_seed_exceeds_consistently():
    from autonorm.report.findings.cost_rows import _cost_verdict

    depth_ptb = pd.Series([0.153, 0.152, 0.154])
    assert _cost_verdict(depth_ptb, 0.001).startswith("not met on this CPU: every seed exceeds 0.1%")
    shared = pd.Series([-0.011, 0.276, 0.05])
    assert _cost_verdict(shared, 0.001).startswith("inconclusive")


def test_welch_from_the_papers_own_numbers_by_hand():
    from autonorm.report.findings.paper_rows import welch_from_summary

    t, df, p = welch_from_summary(99.18, 0.10, 98.82, 0.13)
    se = math.sqrt(0.10 ** 2 / 5 + 0.13 ** 2 / 5)
    assert t == pytest.approx(0.36 / se) and t == pytest.approx(4.908, abs=1e-3)
    assert df == pytest.approx(se ** 4 / ((0.10 ** 2 / 5) ** 2 / 4 + (0.13 ** 2 / 5) ** 2 / 4))
    assert p == pytest.approx(0.0014, abs=1e-4)


def test_selector_width_for_the_papers_one_percent_by_hand():
    from autonorm.layers.selector_layout import widest_selector_for_share

    # ViT-Lite 8 x 128 (1,072,138 parameters): a selector Linear(128, h)-GELU-Linear(h, 2) has
    # 131 h + 2 parameters; 16 of them (one per sub-layer) stay under 1% for h <= 5, 8 (one per
    # block) for h <= 10
    assert widest_selector_for_share(1_072_138, 16, 128) == 5
    assert widest_selector_for_share(1_072_138, 8, 128) == 10
    assert 16 * (131 * 5 + 2) < 0.01 * 1_072_138 < 16 * (131 * 6 + 2)
    assert widest_selector_for_share(1_595_393, 24, 128) == 5   # 12 x 128 tabular


def test_epoch_count_differences_all_zero_are_not_testable_at_this_resolution():
    from autonorm.report.findings.ablation_rows import coarse_resolution

    row = {"metric": "epochs_to_99pct", "sd_diff": 0.0, "n_pairs": 3, "mean_diff_vs_base": 0.0}
    assert coarse_resolution(row)
    assert not coarse_resolution(dict(row, sd_diff=0.5))
    assert not coarse_resolution(dict(row, metric="accuracy"))


def test_a_comparable_ablation_is_an_equivalence_at_the_margin():
    """The 3-way gate's "comparable gains": TOST at the margin 0.4% of 96.80 = 0.387 (before: ±1)."""
    from autonorm.report.findings.ablation_rows import ABLATION_TESTS, ablation_verdict

    gate3 = next(t for t in ABLATION_TESTS if t.axis == "gate3")
    row = {"dataset": "ptb_pos", "metric": "accuracy", "n_pairs": 3, "mean_diff_vs_base": -0.05, "sd_diff": 0.05,
           "p_vs_base_holm": 0.4, "mdd80_holm": 0.3, "variant": "gate_3", "base": "autonorm_s"}
    _, expected, verdict = ablation_verdict(row, gate3, REFERENCE)
    assert expected == "equivalent within ±0.387"
    assert verdict.startswith("reproduced: \"comparable\" holds within ±0.387 (TOST p = ")
    far = ablation_verdict(dict(row, mean_diff_vs_base=-1.5, p_vs_base_holm=0.001), gate3, REFERENCE)[2]
    assert far.startswith("contradicted (\"comparable\"): \"comparable\" fails: a difference beyond ±0.387")
    width = next(t for t in ABLATION_TESTS if t.axis == "selector_width")
    assert width.ours  # a check of our own choice: an observation, never a reproduced claim of the paper
    # ... and never worded with a word the paper did not say about it
    mine = ablation_verdict(dict(row, variant="selector_width_5"), width, REFERENCE)[2]
    assert "\"comparable\"" not in mine and "the equivalence holds within ±0.387" in mine


def test_placement_verdict_when_both_placements_disagree_in_regime():
    from autonorm.report.findings.rows import placement_rows

    rows = [Row("w_LN", "§4.5", "mnist_regime: MNIST, n=5, one selector per sub-layer", "", "", "contradicted: x",
                key="gates:mnist:w_ln", in_regime=True, n=5, placement="per_sublayer"),
            Row("w_LN", "§4.5", "mnist_per_block: MNIST, n=5, one selector per block", "", "", "reproduced",
                key="gates:mnist:w_ln", in_regime=True, n=5, placement="per_block")]
    (row,) = placement_rows(rows)
    assert row.verdict.startswith("depends on our choice (placement: \"a lightweight two-layer MLP per block\"")
    assert row.verdict.endswith("reproduced with one selector per block (n=5), contradicted with one per sub-layer (n=5)")
    assert counted_rows(rows + [row])[-1].supporting is False  # the combined row is the one counted
    assert all(r.supporting for r in counted_rows(rows + [row])[:2])
    same = [rows[0], Row(**{**rows[1].__dict__, "verdict": "contradicted: y"})]
    assert placement_rows(same) == []
    # a main-table claim alike: AutoNorm-S vs LN, reversed with one placement, not shown with the other
    main = [Row("acc", "§4.1", "a", "", "", "contradicted (the lead): reversed", key="main:mnist:accuracy:frozen_ln",
                in_regime=True, n=5, placement="per_sublayer"),
            Row("acc", "§4.1", "b", "", "", "inconclusive: the lead is not shown", key="main:mnist:accuracy:frozen_ln",
                in_regime=True, n=5, placement="per_block"),
            # out of the regime: speaks for neither placement
            Row("acc", "§4.1", "c", "", "", "reproduced", key="main:mnist:accuracy:frozen_ln", in_regime=False, n=9,
                placement="per_block")]
    (row,) = placement_rows(main)
    assert row.verdict.endswith("inconclusive with one selector per block (n=5), contradicted with one per sub-layer (n=5)")
    # several in-regime studies of one placement: the one with the most seeds speaks for it
    more = main[:2] + [Row("acc", "§4.1", "d", "", "", "contradicted (the lead): reversed",
                           key="main:mnist:accuracy:frozen_ln", in_regime=True, n=3, placement="per_block")]
    assert "inconclusive with one selector per block (n=5)" in placement_rows(more)[0].verdict
    # rows without a placement (no selector) never make one
    assert placement_rows([Row(**{**r.__dict__, "placement": ""}) for r in main]) == []


def test_the_largest_vision_margin_by_the_papers_own_table():
    from autonorm.report.findings.paper_rows import largest_vision_margin_row

    ref = pd.DataFrame([{"dataset": d, "method": m, "metric": "accuracy", "mean": v} for d, m, v in (
        ("cifar10", "autonorm_s", 86.35), ("cifar10", "frozen_ln", 82.97), ("cifar100", "autonorm_s", 67.15),
        ("cifar100", "frozen_ln", 64.82), ("mnist", "autonorm_s", 99.18), ("mnist", "frozen_ln", 98.82),
        ("fashion_mnist", "autonorm_s", 92.95), ("fashion_mnist", "frozen_ln", 93.12),
        ("svhn", "autonorm_s", 89.38), ("svhn", "frozen_ln", 90.37), ("cifar10", "adanorm", 84.20),
        ("cifar10", "random", 85.48), ("mnist", "adanorm", 98.95), ("svhn", "adanorm", 91.10))])
    row = largest_vision_margin_row(ref)
    # over FrozenLN: 86.35 - 82.97 = 3.38 on CIFAR-10 against 67.15 - 64.82 = 2.33 on CIFAR-100; over the
    # strongest other method: CIFAR-10 86.35 - 85.48 (Random) = 0.87, CIFAR-100 still 2.33, MNIST 0.23,
    # Fashion-MNIST -0.17, SVHN 89.38 - 91.10 = -1.72: the sentence is true of one reading only
    assert row.verdict.startswith("ill-defined: true of one reading of \"margin\" and not of the other: "
                                  "over FrozenLN the largest is cifar10's (+3.38); over the strongest other "
                                  "method in the paper's numbers it is cifar100's (+2.33; ")
    assert "cifar10 +0.87" in row.verdict and "svhn -1.72" in row.verdict
    # without the baselines beside FrozenLN both readings agree, and the sentence is false
    only_ln = ref[ref.method.isin(("autonorm_s", "frozen_ln"))]
    assert largest_vision_margin_row(only_ln).verdict.startswith("cannot be what it says: over FrozenLN")


def test_latency_negligible_is_judged_both_ways_from_the_welch_interval():
    """"Negligible" (ours: within 1%) from the 90% Welch interval of the relative latency difference:
    clearly above 1% is not met; inside +-1% holds; clearly *below* -1% (the gated model computes more,
    yet timed faster) is the clock's noise, not evidence for the paper."""
    from autonorm.report.findings.cost_rows import latency_verdict

    # 100 vs 110 ms, sd 1 over 5 runs each: se sqrt(0.2 + 0.2) = 0.632, df 8, t(0.95, 8) = 1.860:
    # +10% with [+8.8%, +11.2%]
    assert latency_verdict(100, 1, 5, 110, 1, 5) == (
        "not met on this CPU: +10.0% (90% CI [+8.8%, +11.2%]: more than 1% at one-sided 95%); "
        "the paper's device is not stated")
    # 100 vs 100.2, sd 0.5: se 0.316, half 0.588: [-0.4%, +0.8%] inside +-1%
    assert latency_verdict(100, 0.5, 5, 100.2, 0.5, 5).startswith(
        "reproduced: +0.2%, 90% CI [-0.4%, +0.8%] within ±1%")
    # mnist_regime's kind of numbers: the gated model 17.7% faster, every bound below -1%
    assert latency_verdict(954.1, 60, 5, 785.0, 60, 5).startswith(
        "inconclusive: AutoNorm-S, which computes more, timed 17.7% faster")
    assert latency_verdict(100, 5, 3, 101, 5, 3).startswith("inconclusive: +1.0%, 90% CI [")
    assert latency_verdict(100, math.nan, 1, 120, 5, 3).startswith("inconclusive: one timing per method (+20.0%)")


def test_a_baseline_far_below_the_papers_number_for_it_decides_nothing():
    """mnist_regime's Teacher MLP, trained with the transformers' MixUp/CutMix recipe, reaches 95.41
    against the paper's 97.98: 2.57 points below, outside the 2-point band, so AutoNorm-S's win over it
    is about our recipe; AdaNorm at 97.64 against 98.95 (1.31 below) is inside and stays judged."""
    reference = pd.DataFrame({"dataset": ["mnist", "mnist"], "method": ["teacher_mlp", "adanorm"],
                              "metric": ["accuracy", "accuracy"], "mean": [97.98, 98.95]})
    summary = pd.DataFrame({"dataset": ["mnist", "mnist"], "method": ["teacher_mlp", "adanorm"],
                            "metric": ["accuracy", "accuracy"], "mean": [95.41, 97.64]})
    within, gap = rules.baseline_band(summary, reference, "mnist", "accuracy", "teacher_mlp")
    assert within is False and gap == "our teacher_mlp 95.41 vs the paper's 97.98 (within 2 points: no)"
    verdict = rules.weakened_baseline("reproduced: the table's difference holds", within, gap)
    assert verdict.startswith("inconclusive: the baseline is outside the band frozen_ln meets (our teacher_mlp")
    assert verdict.endswith("the runs say: reproduced: the table's difference holds")
    ok, gap = rules.baseline_band(summary, reference, "mnist", "accuracy", "adanorm")
    assert ok is True and rules.weakened_baseline("contradicted (the lead): x", ok, gap) == "contradicted (the lead): x"
    # an inconclusive verdict is left as it is; a metric without a band is never judged by one
    assert rules.weakened_baseline("inconclusive: x", False, gap) == "inconclusive: x"
    assert rules.baseline_band(summary, reference, "mnist", "rotation_accuracy", "teacher_mlp") == (None, "")


def test_the_fig4_caption_needs_both_of_its_parts():
    """"sustains a high-entropy exploration phase before ... surpassing the RandomSelector": H above
    ln(2)/2 = 0.3466 at epoch 1, and learned - random <= 0 at some epoch, > 0 at the last."""
    from autonorm.report.findings.gate_rows import fig4_verdict

    assert fig4_verdict(0.50, pd.Series([-0.4, 0.0, 0.3])) == "reproduced: both"
    # depth PTB: H 0.507 but above random from the first epoch
    assert fig4_verdict(0.507, pd.Series([2.31, 1.9, 1.71])) == (
        "contradicted: the learned gate does not go from at or below random to above it")
    assert fig4_verdict(0.34, pd.Series([-1.0, 0.5])) == "contradicted: no high-entropy phase (H 0.340 <= 0.347)"
    # ends below random: the surpassing fails too
    assert fig4_verdict(0.6, pd.Series([-1.0, 0.5, -0.1])).endswith("does not go from at or below random to above it")
