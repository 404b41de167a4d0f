"""Statistics over seeds: descriptive summaries, paired tests, Holm correction.

Why this module exists: docs/method.md section 5 asks for mean, std, a 95% confidence
interval over seeds and paired t-tests of AutoNorm-S against every baseline
with a multiple-comparison correction.  The functions are small and pure so
that the tests can check them against numbers computed by hand and against
scipy/statsmodels.

Choices (documented here because the paper is silent on them):

* ``std`` uses ddof=1 (sample standard deviation), the usual "mean +- std over
  seeds" convention.
* The 95% CI is the two-sided Student-t interval ``mean +- t_{0.975, n-1} *
  std / sqrt(n)``; with n < 2 there is no interval (NaN).
* Paired tests pair seed i of method A with seed i of method B (same data
  order) and only use seeds present (finite) in both.  Differences are
  ``a - b`` with A = autonorm_s.
* Cohen's d_z = mean(diff) / sd(diff, ddof=1).
* The Wilcoxon signed-rank test is only a robustness check and is computed
  only with n >= 6 pairs: its smallest attainable exact two-sided p is 2 / 2^n,
  0.0625 with 5 pairs and 0.03125 with 6, so with 5 or fewer it can never
  reject at 5%; otherwise NaN with a reason.
* Power (:func:`min_detectable_difference`): the smallest true mean paired
  difference a two-sided paired t-test at alpha = 0.05 (uncorrected) detects
  with 80% probability, given n pairs and the observed sd of the paired
  differences (the power equation integrated numerically, its root bracketed:
  :func:`power_of_paired_test`).  It is what "no
  significant difference" can and cannot rule out.
* Holm's step-down correction is applied per *family* (see
  :func:`metric_family` and ``summaries.compare_methods``): all (method,
  metric) comparisons of one dataset whose metrics belong to the same family.
  NaN p-values (tests that could not be run) are left out of the family and
  stay NaN.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

#: metrics for which lower is better (everything else: higher is better)
LOWER_IS_BETTER = frozenset({
    "rmse", "mae", "tag_perplexity", "loss", "val_loss", "train_loss", "epochs_to_99pct",
    "params", "flops_per_sample", "latency_ms_per_batch", "train_wall_time_s",
})

#: the paper's headline metrics; one Holm family per dataset
PRIMARY_METRICS = ("accuracy", "tag_perplexity", "rmse")
#: other test-split metrics; their own Holm family per dataset
SECONDARY_METRICS = ("precision_macro", "recall_macro", "f1_macro", "mae")
#: robustness metrics (rotation, CIFAR-10-C summary); their own Holm family
ROBUSTNESS_METRICS = ("rotation_accuracy", "gaussian_noise_s3", "motion_blur_s3",
                      "brightness_s3", "mean_s3", "mean_all")
#: robustness summaries computed from the per-corruption cells (means of them): tested and
#: shown with a raw p-value, but not counted as extra tests in the Holm family
DERIVED_METRICS = ("mean_s3", "mean_all")
#: per-run cost figures: summarised, never tested (params/FLOPs are constant
#: over seeds, wall times depend on the machine, not the method's quality)
COST_METRICS = ("params", "flops_per_sample", "latency_ms_per_batch", "train_wall_time_s")

MIN_N_WILCOXON = 6  # the first n whose smallest exact two-sided p (2 / 2**n) is below 0.05
#: below this many pairs we say plainly that no test has power (with n = 2 a
#: paired t-test has one degree of freedom: it detects only differences ~9x
#: the sd of the differences at 80% power)
MIN_N_POWER = 3


def higher_is_better(metric: str) -> bool:
    """True when a larger value of ``metric`` is better."""
    return metric not in LOWER_IS_BETTER


#: metrics in percent (accuracy-like): valid range [0, 100]
PERCENT_METRICS = frozenset({"accuracy", "precision_macro", "recall_macro", "f1_macro",
                             "rotation_accuracy", "gaussian_noise_s3", "motion_blur_s3",
                             "brightness_s3", "mean_s3", "mean_all"})


def metric_range(metric: str) -> tuple[float, float]:
    """The values a metric can take: [0, 100] for percentages, [1, inf) for a
    perplexity, [0, inf) for errors and costs, (-inf, inf) otherwise.

    Why: a t-interval of n = 2 seeds can reach past 100% accuracy; figures and
    tables clip intervals to this range (and say so).
    """
    if metric in PERCENT_METRICS or metric.endswith("_s3"):
        return (0.0, 100.0)
    if metric == "tag_perplexity":
        return (1.0, math.inf)
    if metric in LOWER_IS_BETTER:
        return (0.0, math.inf)
    return (-math.inf, math.inf)


#: speed of convergence, from the learning curve (:func:`epochs_to_fraction`); tested in the
#: ablations whose claim is about convergence, its own Holm family
CONVERGENCE_METRICS = ("epochs_to_99pct", "val_curve_mean")


def curve_mean(curve: Sequence[tuple[int, float]], higher: bool) -> float:
    """The mean of a validation curve over its epochs (the area under it per epoch): a run that gets
    there sooner has the larger mean, so it resolves "converges slower" where whole epochs to a share of
    the final value tie (docs/method.md section 7). A lower-is-better curve (an RMSE) is negated first, so
    that on every metric a larger value is the sooner run; NaN for an empty curve."""
    vals = [float(v) for _, v in sorted(curve) if v is not None and np.isfinite(float(v))]
    return (1.0 if higher else -1.0) * float(np.mean(vals)) if vals else math.nan


def epochs_to_fraction(curve: Sequence[tuple[int, float]], higher: bool,
                       fraction: float = 0.99) -> float:
    """The first epoch at which a validation curve reaches ``fraction`` of its final value.

    ``curve``: (epoch, value) pairs. Higher-is-better: the first epoch with value >=
    fraction * final; lower-is-better (an error): value <= final / fraction. This is how the
    claim "converges significantly slower" is measured per seed (docs/method.md section 7): on
    the learning curve, not on the final metric. NaN for an empty or non-finite curve.
    """
    pts = sorted((int(e), float(v)) for e, v in curve if v is not None and np.isfinite(float(v)))
    if not pts:
        return math.nan
    final = pts[-1][1]
    for e, v in pts:
        if (v >= fraction * final) if higher else (v <= final / fraction):
            return float(e)
    return float(pts[-1][0])


def metric_family(metric: str) -> str:
    """Holm family of a metric: primary | secondary | robustness | convergence | cost."""
    if metric in PRIMARY_METRICS:
        return "primary"
    if metric in CONVERGENCE_METRICS:
        return "convergence"
    if metric in ROBUSTNESS_METRICS or metric.endswith("_s3"):
        return "robustness"
    if metric in COST_METRICS:
        return "cost"
    return "secondary"


def _finite(values: Iterable) -> np.ndarray:
    arr = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return arr[np.isfinite(arr)]


def t_ci(mean: float, sd: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Two-sided Student-t confidence interval for a mean (NaN when n < 2)."""
    if n < 2 or not np.isfinite(sd):
        return (math.nan, math.nan)
    half = sps.t.ppf(0.5 + level / 2.0, df=n - 1) * sd / math.sqrt(n)
    return (mean - half, mean + half)


def welch_df(var_mean_a: float, n_a: int, var_mean_b: float, n_b: int) -> float:
    """Welch-Satterthwaite degrees of freedom from the two squared standard errors (sd^2 / n)."""
    return (var_mean_a + var_mean_b) ** 2 / (var_mean_a ** 2 / (n_a - 1) + var_mean_b ** 2 / (n_b - 1))


def welch_ci(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int,
             level: float = 0.90) -> tuple[float, float]:
    """Two-sided Welch interval for ``mean_b - mean_a`` from two unpaired samples (Welch-Satterthwaite
    degrees of freedom); NaN when either sample has fewer than 2 values."""
    if min(n_a, n_b) < 2 or not (np.isfinite(sd_a) and np.isfinite(sd_b)):
        return (math.nan, math.nan)
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    diff = mean_b - mean_a
    if va + vb == 0:
        return (diff, diff)
    half = float(sps.t.ppf(0.5 + level / 2.0, welch_df(va, n_a, vb, n_b))) * math.sqrt(va + vb)
    return (diff - half, diff + half)


def tost(n: int, mean_diff: float, sd_diff: float, margin: float, alpha: float = 0.05) -> dict:
    """Two one-sided paired t-tests of |true difference| < ``margin`` (equivalence): ``p`` is the
    larger of the two one-sided p-values, so equivalence holds at ``alpha`` exactly when the
    (1 - 2 alpha) t-interval ``ci90`` lies inside (-margin, +margin). NaN without two pairs."""
    if n < 2 or not (math.isfinite(mean_diff) and math.isfinite(sd_diff)) or margin <= 0:
        return {"p": math.nan, "ci90": (math.nan, math.nan)}
    se = sd_diff / math.sqrt(n)
    df = n - 1
    if se == 0:
        p = 0.0 if abs(mean_diff) < margin else 1.0
        return {"p": p, "ci90": (mean_diff, mean_diff)}
    p_low = float(sps.t.sf((mean_diff + margin) / se, df))   # H0: diff <= -margin
    p_high = float(sps.t.cdf((mean_diff - margin) / se, df))  # H0: diff >= +margin
    half = float(sps.t.ppf(1 - alpha, df)) * se
    return {"p": max(p_low, p_high), "ci90": (mean_diff - half, mean_diff + half)}


def one_sided_p(n: int, mean_diff: float, sd_diff: float, sign: int) -> float:
    """p of the one-sided paired t-test of H0: sign * true difference <= 0 (``sign`` +1: the
    alternative is a positive difference, -1 a negative one). NaN without two pairs."""
    if n < 2 or not (math.isfinite(mean_diff) and math.isfinite(sd_diff)):
        return math.nan
    if sd_diff == 0:
        return 0.0 if sign * mean_diff > 0 else 1.0
    return float(sps.t.sf(sign * mean_diff / (sd_diff / math.sqrt(n)), n - 1))


def describe(values: Iterable, level: float = 0.95) -> dict:
    """n, mean, std (ddof=1), and the t-interval of the finite values.

    Non-finite values (NaN/None) are dropped: a run that produced no number
    does not count towards n.
    """
    x = _finite(values)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": math.nan, "std": math.nan,
                "ci95_low": math.nan, "ci95_high": math.nan}
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n >= 2 else math.nan
    lo, hi = t_ci(mean, sd, n, level)
    return {"n": n, "mean": mean, "std": sd, "ci95_low": float(lo), "ci95_high": float(hi)}


def paired_test(a: Mapping | Sequence, b: Mapping | Sequence) -> dict:
    """Paired comparison of A against B.

    ``a`` and ``b`` are either dicts ``seed -> value`` (paired by key; only
    keys finite in both are used) or equal-length sequences (paired by
    position).  Returns n, mean_a, mean_b, mean_diff (a - b), t, p (two-sided
    paired t-test), cohens_dz, wilcoxon_p, sd_diff (sd of the paired
    differences, ddof=1), mdd80 (:func:`min_detectable_difference` for this n
    and sd_diff) and a human note explaining any NaN.
    """
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = sorted(set(a) & set(b), key=lambda k: (str(type(k)), k))
        pairs = [(a[k], b[k]) for k in keys]
    else:
        if len(a) != len(b):
            raise ValueError("paired sequences must have the same length")
        pairs = list(zip(a, b))
    pairs = [(float(x), float(y)) for x, y in pairs
             if x is not None and y is not None
             and np.isfinite(float(x)) and np.isfinite(float(y))]
    n = len(pairs)
    out = {"n": n, "mean_a": math.nan, "mean_b": math.nan, "mean_diff": math.nan,
           "t": math.nan, "p": math.nan, "cohens_dz": math.nan,
           "wilcoxon_p": math.nan, "sd_diff": math.nan, "mdd80": math.nan, "note": ""}
    notes: list[str] = []
    if n == 0:
        out["note"] = "n=0: no paired seeds"
        return out
    xa = np.array([p[0] for p in pairs])
    xb = np.array([p[1] for p in pairs])
    d = xa - xb
    out.update(mean_a=float(xa.mean()), mean_b=float(xb.mean()), mean_diff=float(d.mean()))
    if n < 2:
        out["note"] = "n=1: no test"
        return out
    sd = float(d.std(ddof=1))
    out["sd_diff"] = sd
    out["mdd80"] = min_detectable_difference(n, sd)
    # floating-point noise (e.g. 99.2-99.0 vs 99.0-98.8) must not pass as a real
    # variance and produce an absurd t: treat sd below 1e-9 of the data scale as 0
    scale = max(1.0, float(np.max(np.abs(np.concatenate([xa, xb])))))
    if not np.isfinite(sd) or sd <= 1e-9 * scale:
        notes.append("zero variance of paired differences: no t-test")
    else:
        t = float(d.mean() / (sd / math.sqrt(n)))
        p = float(2.0 * sps.t.sf(abs(t), df=n - 1))
        out.update(t=t, p=p, cohens_dz=float(d.mean() / sd))
    if n >= MIN_N_WILCOXON:
        if np.all(d == 0):
            notes.append("all paired differences zero: no Wilcoxon")
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out["wilcoxon_p"] = float(sps.wilcoxon(xa, xb).pvalue)
                except ValueError as exc:  # pragma: no cover - defensive
                    notes.append(f"Wilcoxon failed: {exc}")
    else:
        notes.append(f"n={n}<{MIN_N_WILCOXON}: no Wilcoxon")
    out["note"] = "; ".join(notes)
    return out


def min_detectable_difference(n: int, sd_diff: float, alpha: float = 0.05,
                              power: float = 0.8) -> float:
    """Smallest |mean paired difference| detected with ``power`` by a two-sided
    paired t-test at level ``alpha`` with ``n`` pairs whose differences have
    standard deviation ``sd_diff``.

    Solves the power equation (:func:`power_of_paired_test`) for the standardised effect d_z
    and returns ``d_z * sd_diff``
    in the metric's units.  NaN when n < 2 or sd_diff is not finite; 0 when
    sd_diff is 0 (every nonzero difference is then "detected").
    """
    if n is None or n < 2 or sd_diff is None or not np.isfinite(sd_diff):
        return math.nan
    if sd_diff == 0:
        return 0.0
    dz = _detectable_dz(int(n), float(alpha), float(power))
    return dz * float(sd_diff) if np.isfinite(dz) else math.nan


@functools.lru_cache(maxsize=256)
def _detectable_dz(n: int, alpha: float, power: float) -> float:
    """d_z a two-sided paired t-test with n pairs detects with ``power`` (depends on n only): the
    root of :func:`power_of_paired_test` - power, bracketed (the power rises with d_z) and found by
    Brent's method. statsmodels' ``TTestPower.solve_power`` is not used: at n = 3 and small alpha
    its noncentral-t tail is NaN and it returns roots that are not roots (d_z 4.29 at alpha 0.05/3,
    where the power equation gives 5.67)."""
    from scipy import optimize

    if not 0 < alpha < 1 or not alpha < power < 1:
        return math.nan
    hi = 1.0
    while power_of_paired_test(n, hi, alpha) < power:
        hi *= 2.0
        if hi > 1e6:
            return math.nan
    return float(optimize.brentq(lambda dz: power_of_paired_test(n, dz, alpha) - power, 0.0, hi,
                                 xtol=1e-10, rtol=1e-12))


def power_of_paired_test(n: int, dz: float, alpha: float = 0.05) -> float:
    """Power of a two-sided paired t-test with n pairs at a true standardised difference d_z:
    P(|T| > t_crit) with T = (Z + d_z sqrt(n)) / sqrt(V / (n-1)), Z standard normal, V chi-square
    with n-1 degrees of freedom. Computed as the expectation over V of two normal tails, by
    quadrature (scipy's noncentral t is NaN far in its tail at 2 degrees of freedom)."""
    from scipy import integrate, special

    if n < 2:
        return math.nan
    df = n - 1
    crit = sps.t.ppf(1 - alpha / 2, df)
    nc = abs(dz) * math.sqrt(n)
    half = df / 2.0
    log_norm = half * math.log(2.0) + math.lgamma(half)

    # the chi-square density and the normal cdf written with scipy.special's scalar ufuncs: the same
    # functions as sps.chi2.pdf and sps.norm.cdf without their per-call argument checks (about 50x faster,
    # benchmarks/ledger_stats.py; the ledger's page calls the integrand some 80,000 times)
    def integrand(v: float) -> float:
        s = crit * math.sqrt(v / df)
        density = math.exp(special.xlogy(half - 1.0, v) - v / 2.0 - log_norm)
        return density * (special.ndtr(nc - s) + special.ndtr(-nc - s))

    value, _ = integrate.quad(integrand, 0.0, math.inf, limit=200)
    return float(min(max(value, 0.0), 1.0))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries are ignored and stay NaN.

    Computed on the finite entries only (so the family size m counts only
    the tests that were actually run); the tests check it against
    statsmodels' ``multipletests(method="holm")``, which is not called here
    because it runs a full garbage collection on every call (~0.3 s).
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = holm_by_hand(p[ok])
    return out


def holm_levels(pvalues: Sequence[float], alpha: float = 0.05) -> np.ndarray:
    """The level each test faces in Holm's step-down procedure: the test with the r-th smallest
    of the m finite p-values (r = 1, 2, ...) is compared with ``alpha / (m - r + 1)``; NaN
    p-values (tests not run) get NaN. A detectable difference shown beside a Holm-adjusted
    p-value is computed at this level (:func:`min_detectable_difference`), not at ``alpha``."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    for rank, i in enumerate(ok[np.argsort(p[ok], kind="stable")]):
        out[i] = alpha / (m - rank)
    return out


def holm_by_hand(pvalues: Sequence[float]) -> np.ndarray:
    """Reference Holm implementation (used to cross-check statsmodels in tests)."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adj[idx] = running
    return adj


__all__ = [
    "LOWER_IS_BETTER", "PRIMARY_METRICS", "SECONDARY_METRICS", "ROBUSTNESS_METRICS",
    "COST_METRICS", "DERIVED_METRICS", "CONVERGENCE_METRICS", "epochs_to_fraction", "curve_mean", "MIN_N_WILCOXON",
    "higher_is_better", "metric_family", "t_ci",
    "describe", "paired_test", "holm", "holm_levels", "holm_by_hand", "min_detectable_difference",
    "power_of_paired_test", "MIN_N_POWER", "metric_range", "PERCENT_METRICS", "tost", "one_sided_p",
]
