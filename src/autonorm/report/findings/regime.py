"""The regime rules (docs/method.md section 11): a study's runs may reproduce or contradict a claim only when
they train the setup the paper states and their LayerNorm reference reached the paper's; every arm of a
comparison is held to the same band, both ways; and the paper's own numbers (its means, its ± SDs) looked up."""
from __future__ import annotations

import math

import pandas as pd

from autonorm.analysis import stats
from autonorm.data import registry
from autonorm.report.context import column_where
from autonorm.report.findings.verdict_words import OUT_OF_REGIME, REGIME_UNKNOWN, RUNS_SAY, category
from autonorm.report.fmt import fmt, fnum, pretty

#: accuracy points of frozen_ln from the paper's FrozenLN within which a study is in regime
REGIME_ACCURACY_POINTS = 2.0
#: relative RMSE gap within which a study is in regime (an RMSE that means what it says)
REGIME_RMSE_RELATIVE = 0.10
#: share of the paper's margin over the trivial baseline a study's frozen_ln must reach
REGIME_MARGIN_SHARE = 0.5
#: the paper's backbone depth, per family: layer-wise gate claims are about these
PAPER_DEPTH = {"vision": 8, "nlp": 12, "tabular": 12}
#: the paper's backbone width (every family)
PAPER_WIDTH = 128
#: the patch size the paper states for its vision backbone (§3.6: "a patch size of $4 \times 4$")
PAPER_PATCH = 4


# --------------------------------------------------------------------------- regime
def summary_mean(summary: pd.DataFrame, d: str, method: str, metric: str) -> float:
    v = column_where(summary, "mean", dataset=d, method=method, metric=metric)
    return fnum(v[0]) if len(v) else math.nan


def trivial_value(summary: pd.DataFrame, d: str, metric: str) -> float:
    if "baseline_value" not in summary:
        return math.nan
    v = column_where(summary, "baseline_value", dataset=d, metric=metric)
    v = v[pd.notna(v)]
    return fnum(v[0]) if len(v) else math.nan


def paper_value(reference: pd.DataFrame, d: str, method: str, metric: str) -> float:
    """The paper's number for ``method`` on dataset ``d`` in ``metric``: CIFAR-10-C's are its corruption
    metrics (its clean accuracy is CIFAR-10's: :func:`trained_on`)."""
    v = column_where(reference, "mean", dataset=d, method=method, metric=metric)
    return float(v[0]) if len(v) else math.nan


def trained_on(d: str) -> str:
    """The dataset whose runs a study evaluates on ``d``: a corruption set's clean source (CIFAR-10 for
    CIFAR-10-C, registry.CORRUPTION_SETS), else ``d`` itself."""
    return registry.CORRUPTION_SETS.get(d, {}).get("source", d)


def judged_on(summary: pd.DataFrame, reference: pd.DataFrame, d: str, method: str) -> tuple[str, str] | None:
    """(dataset, metric) on which our run of ``method`` on ``d`` is set beside the paper's number for it, by
    the regime (frozen_ln) and the band of every other arm alike: the dataset's primary metric (accuracy, or
    an RMSE) where both ours and the paper's exist, on clean CIFAR-10 for CIFAR-10-C (its corrupted test sets
    evaluate the clean run); None where either is missing."""
    src = trained_on(d)
    for m in ("accuracy", "rmse"):
        if math.isfinite(summary_mean(summary, src, method, m)) and math.isfinite(paper_value(reference, src, method, m)):
            return src, m
    return None


def regime(summary: pd.DataFrame, reference: pd.DataFrame, d: str) -> tuple[bool | None, str]:
    """(in the paper's regime?, the numbers that decide it) for a study's dataset ``d``, judged on
    frozen_ln's primary metric (:func:`judged_on`). None when it cannot be judged (no frozen_ln run,
    or no paper FrozenLN number)."""
    on = judged_on(summary, reference, d, "frozen_ln")
    if on is None:
        return None, "no frozen_ln run, or no paper FrozenLN number, to judge the regime by"
    src, metric = on
    ours = summary_mean(summary, src, "frozen_ln", metric)
    paper = paper_value(reference, src, "frozen_ln", metric)
    trivial = trivial_value(summary, src, metric)
    higher = stats.higher_is_better(metric)
    side, gap = _within_band(ours, paper, higher, "frozen_ln")
    close = side == 0
    if math.isfinite(trivial):
        margin_paper = (paper - trivial) if higher else (trivial - paper)
        margin_ours = (ours - trivial) if higher else (trivial - ours)
        above = margin_ours >= REGIME_MARGIN_SHARE * margin_paper
        gap += (f"; trivial baseline {fmt(trivial)}: ours {margin_ours:+.3g} beyond it, the paper's "
                f"{margin_paper:+.3g} (at least half: {'yes' if above else 'no'})")
    else:
        above = True
    return bool(close and above), gap


def _within_band(ours: float, paper: float, higher: bool, who: str) -> tuple[int, str]:
    """(where our value lies against the band around the paper's: 0 within it, -1 worse than the band,
    +1 better than it; the sentence that says so). The band is 2 points of an accuracy or 10% of an
    RMSE, on either side: a model far better than the paper's is as far from its regime as one far worse."""
    if higher:
        dev = ours - paper
        side = 0 if abs(dev) <= REGIME_ACCURACY_POINTS else int(math.copysign(1, dev))
        band = f"within {REGIME_ACCURACY_POINTS:g} points"
    else:
        dev = ours / paper - 1
        side = 0 if abs(dev) <= REGIME_RMSE_RELATIVE else -int(math.copysign(1, dev))
        band = f"within {100 * REGIME_RMSE_RELATIVE:g}%"
    word = "yes" if side == 0 else ("no, worse" if side < 0 else "no, better")
    return side, f"{who} {fmt(ours)} vs the paper's {fmt(paper)} ({band}: {word})"


def arm_band(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str,
             method: str) -> tuple[int | None, str]:
    """Where our run of ``method`` (AutoNorm-S, or a baseline: AdaNorm, the Teacher MLP, ...) lies against
    the band frozen_ln must meet of the paper's number for it (:func:`_within_band`: 0 within, -1 worse,
    +1 better), and the sentence that says so; (None, "") where unknown (no paper number, no run). It is
    judged on the dataset's primary metric (:func:`judged_on`) whatever the row's ``metric`` (an MAE, an
    F1, rotated accuracy, a CIFAR-10-C corruption): it asks whether our run of the method is like the
    paper's, as the regime asks of frozen_ln, and every row that reads the run reads the same answer."""
    on = judged_on(summary, reference, d, method)
    if on is not None:
        src, m = on
        what = "RMSE" if m == "rmse" else "accuracy"
        what = f"clean {pretty(src)} {what}" if src != d else what
        who = f"our {method}" if m == metric and src == d else f"our {method}'s {what}"
        return _within_band(summary_mean(summary, src, method, m), paper_value(reference, src, method, m),
                            stats.higher_is_better(m), who)
    return None, ""


def both_arms(verdict: str, bands: dict[str, tuple[int | None, str]], a: str, b: str,
              ahead: float) -> tuple[str, str]:
    """The band rule for both arms of a comparison alike, both ways: (the verdict, a note naming every
    arm outside its band). ``bands`` gives each arm's :func:`arm_band`; ``ahead`` is how far ``a`` came
    out ahead of ``b`` beyond what the paper's numbers say (our difference minus the paper's, in the
    better direction; the paper's taken as 0 where it gives none). An arm outside its band decides
    nothing where its deviation points the way the result went: ``a`` behind what the paper says is what
    a's shortfall or b's excess would make, ``a`` ahead what a's excess or b's shortfall would make; so
    a decided verdict becomes inconclusive, with what the runs say. Where the deviation points the other
    way it cannot explain the result, and the verdict stands."""
    outside = {m: (side, gap) for m, (side, gap) in bands.items() if side}
    if not outside:
        return verdict, ""
    note = "; ".join(f"{gap}: outside the band frozen_ln meets" for _, gap in outside.values())
    way = 0 if not math.isfinite(ahead) or ahead == 0 else (1 if ahead > 0 else -1)
    explains = [m for m, (side, _) in outside.items() if way and side == (way if m == a else -way)]
    if explains and category(verdict) in ("reproduced", "contradicted", "depends on our choice"):
        m = explains[0]
        side, gap = outside[m]
        went = f"{a} {'better' if way > 0 else 'worse'} against {b} than the paper's numbers say"
        return (f"inconclusive: {m} is outside the band frozen_ln meets ({gap}), and its "
                f"{'excess' if side > 0 else 'shortfall'} points the way the result went ({went}), so it may be "
                f"the difference; the runs say: {verdict}"), note
    return verdict, note


def ahead_of_paper(a_ours: float, b_ours: float, a_paper: float, b_paper: float, higher_is_better: bool) -> float:
    """How far arm a came out ahead of arm b beyond what the paper's numbers say (our a - b minus the
    paper's, in the better direction; the paper's difference taken as 0 where it gives no number)."""
    paper = a_paper - b_paper if math.isfinite(a_paper) and math.isfinite(b_paper) else 0.0
    gap = (a_ours - b_ours) - paper
    return gap if higher_is_better else -gap


def departures(model: dict, family: str | None) -> list[str]:
    """The elements of the setup the paper states in which a run's model differs from it: the
    backbone's depth and width, and on vision the patch size."""
    out = []
    depth, dim = model.get("depth"), int(model.get("dim") or 0)
    if not (depth_ok(depth, family) and (dim == PAPER_WIDTH or family is None)):
        out.append(f"{depth} x {dim}, not the paper's {PAPER_DEPTH.get(family)} x {PAPER_WIDTH} backbone")
    patch = model.get("patch_size")
    if family == "vision" and patch and int(patch) != PAPER_PATCH:
        out.append(f"patch {int(patch)} x {int(patch)}, not the paper's {PAPER_PATCH} x {PAPER_PATCH}")
    return out


def study_regime(st, reference: pd.DataFrame, d: str, method: str = "autonorm_s") -> tuple[bool | None, str]:
    """The regime of a study (report.findings.studies.Study) on dataset ``d``: :func:`regime` of its
    frozen_ln, and the setup the paper states (:func:`departures`): the paper's claims are about its
    models, and a model that differs from them near the paper's accuracy is not one of them."""
    ok, why = regime(st.ctx.summary, reference, d)
    model = (st.run_config(d, method) or st.run_config(d, "frozen_ln")).get("model") or {}
    differs = departures(model, st.ctx.ds_family.get(d)) if model else []
    if differs:
        return False, "; ".join(differs) + "; " + why
    return ok, why


def out_of_regime(verdict: str, in_regime: bool | None, why: str) -> str:
    """A verdict as the regime rule allows it: reproduced or contradicted only in regime; an
    inconclusive row out of regime says so too (else it reads as a null result in the paper's
    regime)."""
    judged = category(verdict) in ("reproduced", "contradicted", "inconclusive", "depends on our choice")
    if in_regime is False and judged and not verdict.startswith(OUT_OF_REGIME):
        return f"{OUT_OF_REGIME} ({why}); {RUNS_SAY}{verdict}"
    if in_regime is None and judged and not verdict.startswith(REGIME_UNKNOWN):
        return f"{REGIME_UNKNOWN} ({why}); {RUNS_SAY}{verdict}"
    return verdict


#: the seeds behind each of the paper's ± SDs ("mean and standard deviation over 5 independent random seeds")
PAPER_SEEDS = 5


def paper_std(reference: pd.DataFrame, d: str, method: str, metric: str) -> float:
    """The paper's ± SD over its seeds for ``method`` on ``d`` in ``metric``; NaN where it gives none."""
    if "std" not in reference:
        return math.nan
    v = column_where(reference, "std", dataset=d, method=method, metric=metric)
    return float(v[0]) if len(v) and pd.notna(v[0]) else math.nan


def depth_ok(model_depth, family: str | None) -> bool:
    want = PAPER_DEPTH.get(str(family))
    return want is None or (model_depth is not None and int(model_depth) == want)
