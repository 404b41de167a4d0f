"""Mechanism checks: the paper's claims about the gates, each with its threshold, where the
threshold comes from, the measured value and a verdict (docs/method.md section 6)."""
from __future__ import annotations

import math

import numpy as np

from autonorm.methods import GATED_METHODS
from autonorm.report.context import ReportContext
from autonorm.report.fmt import fmt, fmt_diff, fmt_p, fnum, md_table, pretty
from autonorm.report.gate_checks import (NOT_APPLICABLE, final_gates, froze_seeds, mnist_checks,
                                         ptb_checks)
from autonorm.report.paper import CIFAR10_FREEZE_TEXT, PAPER_BACKBONE, STANDIN_FOR

def freeze_effect(ctx: ReportContext) -> list[str]:
    """CIFAR-10: AutoNorm-S minus unfrozen AutoNorm, beside the paper's +1.1 (its text; it gives no
    table row for unfrozen AutoNorm).

    Where no seed froze, the two methods trained identically: there is no freeze effect to
    measure, whatever the difference of their means, and the verdict says so."""
    s = ctx.summary
    lines, measured = [], []
    for d in ("cifar10",) + tuple(k for k, v in STANDIN_FOR.items() if v == "cifar10"):
        if s.empty or d not in set(s.dataset):
            continue
        standin = ctx.standin(d)
        acc = s[(s.dataset == d) & (s.metric == "accuracy")].set_index("method")
        if not {"autonorm_s", "autonorm"} <= set(acc.index):
            continue
        diff = fnum(acc.loc["autonorm_s", "mean"]) - fnum(acc.loc["autonorm", "mean"])
        froze, recorded = froze_seeds(ctx.freeze, d)
        nothing_froze = recorded > 0 and froze == 0
        if standin:
            verdict = NOT_APPLICABLE
        elif nothing_froze:
            verdict = (f"**nothing froze** (0 of {recorded} seeds: mean H stayed below eps_H at "
                       "T_freeze), so AutoNorm-S trained as AutoNorm: no freeze effect to compare")
        elif not math.isfinite(diff):
            verdict = "not measurable in this run"
        elif diff == 0:
            verdict = "**no difference** (the two means are equal)"
        else:
            verdict = "**same sign as the paper**" if diff > 0 else "**opposite sign to the paper**"
        test = ""
        comp = ctx.comparisons
        if not comp.empty:
            c = comp[(comp.dataset == d) & (comp.metric == "accuracy")
                     & (comp.method_b == "autonorm")]
            if len(c):
                c = c.iloc[0]
                n = int(fnum(c["n"]) or 0)
                if n < 3:
                    test = f"; {n} paired seed(s): no test has power"
                else:
                    test = (f"; paired over {n} seeds: p (Holm) {fmt_p(c['p_holm'])}, smallest "
                            f"difference detectable at 80% power at its Holm level "
                            f"{fmt(_mdd_holm(c), 2)} points")
        froze_s = f" {froze} of {recorded} AutoNorm-S seeds froze." if recorded else ""
        paper_s = ("" if standin else f" The paper says +{CIFAR10_FREEZE_TEXT} in its text (no table row "
                   "gives unfrozen AutoNorm).")
        measured.append(d)
        lines += [f"- {ctx.label(d)}, the freeze effect (autonorm_s − autonorm accuracy): "
                  f"measured {fmt_diff(diff, acc.loc['autonorm_s', 'mean'])} points{test}."
                  f"{froze_s}{paper_s} Verdict: {verdict}."]
    if not lines:
        return []
    # the paper states the freeze effect for CIFAR-10; the heading names what this run measured it on
    where = ", ".join(ctx.label(d) for d in measured)
    return [f"### Freeze effect (AutoNorm-S − AutoNorm) on {where}", ""] + lines + [""]


def _mdd_holm(c) -> float:
    v = fnum(c.get("mdd80_holm")) if hasattr(c, "get") else math.nan
    return v


def _scale_note(ctx: ReportContext) -> list[str]:
    """What differs from the paper: the backbones (when smaller) or only the training budget."""
    if ctx.preset == "paper":
        return []
    sizes = ctx.model_sizes()
    ours = "; ".join(f"{f}: {v}" for f, v in sizes.items()) or "see the config below"
    paper = "; ".join(f"{f}: {v}" for f, v in PAPER_BACKBONE.items())
    if sizes and all(PAPER_BACKBONE.get(f) == v for f, v in sizes.items()):
        return [f"Preset `{ctx.preset}` trains the paper's backbones ({ours}) with a smaller "
                "training budget (fewer epochs, and where the config says so a training subset; "
                "docs/method.md section 10), so a \"not reproduced\" here is a statement about "
                "this budget, not a refutation of the paper.", ""]
    return [f"Preset `{ctx.preset}` is not the paper's: these models are smaller ({ours}) than "
            f"the paper's ({paper}) and train for fewer epochs, so a \"not reproduced\" here is "
            "a statement about this configuration, not a refutation of the paper.", ""]


def mechanism_section(ctx: ReportContext) -> str:
    gates, history = ctx.gates, ctx.history
    lines = ["## Mechanism checks", "",
             "The paper's claims about what the gates learn (docs/method.md section 6). Each "
             "row gives the threshold and whether it is the paper's or our reading of a "
             "qualitative word, the measured value (seed means at each seed's last epoch "
             "unless stated) and a verdict. On stand-in data the values are shown but no "
             "verdict is drawn: the paper's claims are about its datasets.", ""]
    lines += _scale_note(ctx)
    if gates.empty or history.empty:
        lines += ["No gate records in this run (no gated method was trained).", ""]
        lines += freeze_effect(ctx)
        return "\n".join(lines)
    found = False
    for d in dict.fromkeys(gates["dataset"]):
        standin = ctx.standin(d)
        target = STANDIN_FOR.get(d, d) if standin else d
        blocks = []
        shown: list[str] = []
        for m in GATED_METHODS:
            g = gates[(gates.dataset == d) & (gates.method == m) & np.isfinite(gates.w_dyt)]
            h = history[(history.dataset == d) & (history.method == m)
                        & np.isfinite(history.mean_entropy)]
            other = gates[(gates.dataset == d) & (gates.method == m) & np.isfinite(gates.entropy)]
            if g.empty and len(other):
                # a gate whose choices are not the paper's DyT and LN (a new gated norm): its entropy
                # only, and none of the paper's LN/DyT claims judged on it
                found = True
                last = other[other.epoch == other.groupby("seed")["epoch"].transform("max")]
                blocks += [f"**{m}** ({len(set(other.seed))} seeds): its gates do not choose between the "
                           f"paper's DyT and LN, so none of the paper's gate claims is judged on them; final "
                           f"mean H = {fmt(float(last.entropy.mean()), 3)} at epoch {int(other.epoch.max())}.", ""]
                continue
            if g.empty:
                continue
            found = True
            seeds = sorted(set(g.seed))
            fin = final_gates(g)
            hf = h[h.epoch == h.groupby("seed")["epoch"].transform("max")]
            final_h = float(hf.mean_entropy.mean()) if len(hf) else math.nan
            last_ep = int(g.epoch.max())
            same = ctx.same_run_as(d, m)
            if same and same in shown:
                blocks += [f"**{m}**: the same runs as {same}, so the same values as above.", ""]
                continue
            shown.append(m)
            head = (f"**{m}** ({len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
                    + (f"; the same runs as {same}" if same else "") + "):")
            if target == "mnist":
                rows = mnist_checks(g, h, final_h, last_ep, standin, ctx.dataset_meta(d).get("n_train"))
            elif target == "ptb_pos":
                rows = ptb_checks(fin, h, final_h, last_ep, standin)
            else:
                # on a stand-in nothing is judged; on a paper dataset the paper states no gate claim
                said = ("Values only (stand-in data: nothing is judged)" if standin
                        else f"The paper states no gate claim for {pretty(d)}")
                blocks += [head, "",
                           f"{said}: final mean H = "
                           f"{fmt(final_h, 3)} at epoch {last_ep}; final w_DyT "
                           f"{fmt(fin.w_dyt.min(), 3)}-{fmt(fin.w_dyt.max(), 3)} (mean "
                           f"{fmt(fin.w_dyt.mean(), 3)}); {int((fin.w_dyt > 0.5).sum())} of "
                           f"{len(fin)} selectors prefer DyT (w_DyT > 0.5).", ""]
                continue
            blocks += [head, "", md_table(["claim", "threshold (source)", "measured", "verdict"],
                                          rows), ""]
        if blocks:
            lines += [f"### {ctx.label(d)}", ""] + blocks
    if not found:
        lines += ["No gated method has gate records in this run.", ""]
    lines += freeze_effect(ctx)
    return "\n".join(lines)
