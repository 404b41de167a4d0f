"""Statistics checked against numbers worked out by hand and against scipy/statsmodels.

Why: every p-value and interval in the report comes from autonorm.analysis.stats; a
wrong ddof, a one-sided p or a mis-ordered Holm step would silently change
the paper comparison.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from autonorm.analysis import stats


def test_describe_by_hand():
    d = stats.describe([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(((1.5 ** 2) * 2 + (0.5 ** 2) * 2) / 3)  # ddof = 1
    half = 3.182446305284263 * sd / 2.0  # t_{0.975, 3} * sd / sqrt(4)
    assert d["n"] == 4 and d["mean"] == pytest.approx(2.5) and d["std"] == pytest.approx(sd)
    assert d["ci95_low"] == pytest.approx(2.5 - half) and d["ci95_high"] == pytest.approx(2.5 + half)
    lo, hi = DescrStatsW(np.array([1.0, 2.0, 3.0, 4.0])).tconfint_mean(0.05)
    assert (d["ci95_low"], d["ci95_high"]) == pytest.approx((lo, hi))


def test_describe_drops_nan_and_single_value():
    d = stats.describe([5.0, None, float("nan")])
    assert d["n"] == 1 and d["mean"] == 5.0
    assert math.isnan(d["std"]) and math.isnan(d["ci95_low"]) and math.isnan(d["ci95_high"])
    e = stats.describe([])
    assert e["n"] == 0 and math.isnan(e["mean"])


def test_paired_t_by_hand():
    a, b = [2.0, 4.0, 6.0], [1.0, 2.0, 3.0]  # diffs [1, 2, 3]
    r = stats.paired_test(a, b)
    t = 2.0 / (1.0 / math.sqrt(3))  # mean 2, sd 1
    assert r["t"] == pytest.approx(3.4641, abs=1e-4) and r["t"] == pytest.approx(t)
    # df = 2: the t CDF has the closed form F(t) = 1/2 + t / (2 sqrt(2 + t^2))
    p = 1.0 - t / math.sqrt(2.0 + t * t)
    assert p == pytest.approx(0.0742, abs=1e-4)
    assert r["p"] == pytest.approx(p)
    assert r["p"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert r["cohens_dz"] == pytest.approx(2.0)
    assert r["mean_diff"] == pytest.approx(2.0) and r["n"] == 3
    assert math.isnan(r["wilcoxon_p"]) and "no Wilcoxon" in r["note"]


def test_paired_by_seed_only_common_seeds():
    a = {0: 10.0, 1: 11.0, 2: 12.0, 3: 13.0}
    b = {1: 10.0, 2: 10.5, 3: float("nan"), 4: 9.0}
    r = stats.paired_test(a, b)
    assert r["n"] == 2  # seeds 1 and 2; seed 3 is NaN in b
    assert r["mean_a"] == pytest.approx(11.5) and r["mean_b"] == pytest.approx(10.25)
    assert r["p"] == pytest.approx(sps.ttest_rel([11.0, 12.0], [10.0, 10.5]).pvalue)


def test_n1_no_test():
    r = stats.paired_test({0: 1.0}, {0: 0.5})
    assert r["n"] == 1 and math.isnan(r["p"]) and math.isnan(r["t"])
    assert r["note"] == "n=1: no test" and r["mean_diff"] == pytest.approx(0.5)
    r0 = stats.paired_test({0: 1.0}, {1: 0.5})
    assert r0["n"] == 0 and math.isnan(r0["p"]) and "n=0" in r0["note"]


def test_zero_variance_difference():
    r = stats.paired_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    assert math.isnan(r["p"]) and "zero variance" in r["note"]


def test_wilcoxon_with_enough_seeds():
    a = [1.0, 2.5, 3.1, 4.7, 5.2, 6.0]
    b = [0.5, 2.0, 3.5, 3.9, 4.0, 5.1]
    r = stats.paired_test(a, b)
    assert r["wilcoxon_p"] == pytest.approx(sps.wilcoxon(a, b).pvalue)
    assert r["p"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert r["note"] == ""


def test_holm_known_values():
    adj = stats.holm([0.01, 0.04, 0.03])
    # sorted 0.01*3 = 0.03; 0.03*2 = 0.06; max(0.06, 0.04*1) = 0.06
    assert adj == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm_by_hand([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    p = [0.2, 0.001, 0.04, 0.5, 0.011]
    assert stats.holm(p) == pytest.approx(multipletests(p, method="holm")[1])
    assert stats.holm_by_hand(p) == pytest.approx(multipletests(p, method="holm")[1])


def test_holm_ignores_nan():
    adj = stats.holm([0.01, float("nan"), 0.04, 0.03])
    assert math.isnan(adj[1])
    assert adj[[0, 2, 3]] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(stats.holm([float("nan")])).all()


def test_metric_families_and_direction():
    assert stats.metric_family("accuracy") == "primary"
    assert stats.metric_family("rmse") == "primary"
    assert stats.metric_family("f1_macro") == "secondary"
    assert stats.metric_family("gaussian_noise_s3") == "robustness"
    assert stats.metric_family("params") == "cost"
    assert stats.higher_is_better("accuracy") and not stats.higher_is_better("tag_perplexity")


def test_power_of_paired_test_by_hand():
    """Power from the definition: P(|T| > t_crit), T ~ noncentral t(n-1, d_z sqrt(n)) (scipy's
    noncentral t is exact here, at 4 degrees of freedom and a moderate noncentrality)."""
    n, dz = 5, 1.5
    crit = 2.7764451051977987  # t_{0.975, 4}
    nc = dz * math.sqrt(n)
    by_hand = sps.nct.sf(crit, 4, nc) + sps.nct.cdf(-crit, 4, nc)
    assert stats.power_of_paired_test(n, dz) == pytest.approx(by_hand)
    assert stats.power_of_paired_test(n, 0.0) == pytest.approx(0.05)  # size of the test


def test_min_detectable_difference():
    from statsmodels.stats.power import TTestPower

    # scales with the sd of the paired differences, and has exactly 80% power
    for n in (3, 5, 10):
        mdd = stats.min_detectable_difference(n, 0.4)
        assert stats.power_of_paired_test(n, mdd / 0.4) == pytest.approx(0.8, abs=1e-5)
        # at alpha 0.05, where statsmodels' root is right, the two agree
        assert mdd == pytest.approx(0.4 * TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8), rel=1e-4)
    # textbook value: n = 10 pairs detect d_z ~ 0.996 at 80% power (two-sided 5%)
    assert stats.min_detectable_difference(10, 1.0) == pytest.approx(0.996, abs=1e-3)
    # n = 2 is all but powerless: more than 11 sd of the differences
    assert stats.min_detectable_difference(2, 1.0) > 11
    assert math.isnan(stats.min_detectable_difference(1, 1.0))
    assert math.isnan(stats.min_detectable_difference(5, float("nan")))
    assert stats.min_detectable_difference(5, 0.0) == 0.0
    r = stats.paired_test([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])  # diffs 1, 2, 3: sd 1
    assert r["sd_diff"] == pytest.approx(1.0)
    assert r["mdd80"] == pytest.approx(stats.min_detectable_difference(3, 1.0))


def test_metric_range():
    assert stats.metric_range("accuracy") == (0.0, 100.0)
    assert stats.metric_range("mean_s3") == (0.0, 100.0)
    assert stats.metric_range("tag_perplexity") == (1.0, math.inf)
    assert stats.metric_range("rmse") == (0.0, math.inf)
    assert stats.metric_range("something_else") == (-math.inf, math.inf)


# d_z detected with 80% power by a two-sided paired t-test at alpha 0.05/k (Holm's smallest level
# with k tests), computed independently: the power as a double integral over (Z, V) by Monte
# Carlo below, and these values from numerical quadrature of the same definition, checked by
# 400,000-draw simulations (the n = 3 column is the ledger review's table: statsmodels gave
# 4.292 at k = 3 and 5.500 at k = 11)
DZ80 = {3: {1: 3.264, 2: 4.625, 3: 5.667, 4: 6.546, 6: 8.019, 11: 10.861},
        5: {1: 1.682, 2: 2.050, 3: 2.292, 4: 2.477, 6: 2.759, 11: 3.235}}


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("k", list(range(1, 12)))
def test_detectable_difference_right_at_every_holm_level(n, k):
    alpha = 0.05 / k
    dz = stats.min_detectable_difference(n, 1.0, alpha=alpha)
    if k in DZ80[n]:
        assert dz == pytest.approx(DZ80[n][k], abs=2e-3)
    # monotone: a stricter level needs a larger difference
    if k > 1:
        assert dz > stats.min_detectable_difference(n, 1.0, alpha=0.05 / (k - 1))
    # Monte Carlo: t-tests of n normal differences with mean dz reject in 80% of draws
    rng = np.random.default_rng(1000 * n + k)
    x = rng.normal(dz, 1.0, (40_000, n))
    t = x.mean(1) / (x.std(1, ddof=1) / math.sqrt(n))
    rejected = float((np.abs(t) > sps.t.ppf(1 - alpha / 2, n - 1)).mean())
    assert rejected == pytest.approx(0.8, abs=0.01)  # 4 sd of a 40,000-draw proportion


def test_welch_interval_by_hand():
    """a = (3.0, 3.1), b = (3.0, 3.1, 3.2): variances of the means 0.005/2 = 0.0025 and 0.01/3 = 0.003333,
    their sum 0.005833 (se 0.07638); Welch-Satterthwaite df = 0.005833^2 / (0.0025^2/1 + 0.003333^2/2)
    = 2.882; t(0.95, 2.882) = 2.393, so the 90% interval of b - a = 0.05 is 0.05 -+ 0.1828."""
    lo, hi = stats.welch_ci(3.05, math.sqrt(0.005), 2, 3.1, 0.1, 3, level=0.90)
    assert lo == pytest.approx(0.05 - 0.1828, abs=2e-4) and hi == pytest.approx(0.05 + 0.1828, abs=2e-4)
    # statsmodels' unequal-variance interval, computed from the samples themselves
    from statsmodels.stats.weightstats import CompareMeans
    ref = CompareMeans(DescrStatsW([3.0, 3.1, 3.2]), DescrStatsW([3.0, 3.1])).tconfint_diff(
        alpha=0.10, usevar="unequal")
    assert (lo, hi) == pytest.approx(ref, abs=1e-9)
    assert all(math.isnan(x) for x in stats.welch_ci(3.0, math.nan, 1, 3.1, 0.1, 3))
    assert stats.welch_ci(2.0, 0.0, 3, 2.5, 0.0, 3) == (0.5, 0.5)  # no spread: the difference itself
