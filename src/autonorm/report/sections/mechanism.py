"""Mechanism checks: the paper's claims about the gates, each with its threshold, where the
threshold comes from, the measured value and a verdict (docs/method.md section 6)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from autonorm.report.context import ReportContext
from autonorm.report.fmt import fmt, fmt_diff, fmt_p, fnum, md_table, pretty
from autonorm.report.paper import (CIFAR10_FREEZE, CIFAR10_FREEZE_TEXT, DYT_THRESHOLD, H_ZERO,
                                   LN_BY_EPOCH, LN_THRESHOLD, MIXED, PAPER_BACKBONE, PTB_H,
                                   PTB_H_TOL, STANDIN_FOR)

GATED_METHODS = ("autonorm_s", "autonorm", "autonorm3")
NOT_APPLICABLE = "not applicable: stand-in data"


def _final_gates(g: pd.DataFrame) -> pd.DataFrame:
    """Seed-mean w_DyT / entropy per selector at each seed's last epoch."""
    last = g.groupby("seed")["epoch"].transform("max")
    return g[g.epoch == last].groupby(["selector", "layer"], dropna=False)[
        ["w_dyt", "entropy"]].mean().reset_index()


def _verdict(ok: bool | None, standin: bool) -> str:
    if standin:
        return NOT_APPLICABLE
    if ok is None:
        return "not measurable in this run"
    return "**consistent**" if ok else "**not reproduced**"


def _mnist_checks(g, h, final_h, last_ep, standin) -> list[list[str]]:
    ep = LN_BY_EPOCH if (g.epoch == LN_BY_EPOCH).any() else last_ep
    at = g[g.epoch == ep]
    min_wln = float((1 - at.w_dyt).min())
    per_ep = (1 - g.groupby(["epoch", "selector"]).w_dyt.mean()).groupby("epoch").min()
    first = per_ep[per_ep > LN_THRESHOLD]
    first_s = (f"; first epoch with every seed-mean w_LN > {LN_THRESHOLD}: "
               f"{int(first.index.min())}" if len(first) else
               f"; seed-mean w_LN never above {LN_THRESHOLD} in every selector")
    short = "" if ep == LN_BY_EPOCH else f" (run has only {last_ep} epochs)"
    ok = (min_wln > LN_THRESHOLD) if ep == LN_BY_EPOCH else (None if min_wln <= LN_THRESHOLD
                                                            else True)
    return [
        [f"w_LN > {LN_THRESHOLD} in every selector by epoch {LN_BY_EPOCH}",
         f"w_LN > {LN_THRESHOLD} at epoch {LN_BY_EPOCH} (paper)",
         f"min w_LN = {fmt(min_wln, 3)} at epoch {ep}{short}{first_s}", _verdict(ok, standin)],
        ["mean H -> 0", f"final mean H < {H_ZERO} (ours: eps_H)",
         f"final mean H = {fmt(final_h, 3)} at epoch {last_ep}",
         _verdict(final_h < H_ZERO if math.isfinite(final_h) else None, standin)],
    ]


def _ptb_checks(fin, h, final_h, last_ep, standin) -> list[list[str]]:
    n_ep = int(h.epoch.max()) if len(h) else 0
    half = max(1, n_ep // 2)
    early_h = h[h.epoch <= half].groupby("epoch").mean_entropy.mean()
    eh = float(early_h.mean()) if len(early_h) else math.nan
    rows = [["H stays near 0.45 for longer", f"|mean H - {PTB_H}| <= {PTB_H_TOL} over the first "
             f"half of training (paper: 0.45; ours: the tolerance)",
             f"mean H over epochs 1-{half} = {fmt(eh, 3)}; final {fmt(final_h, 3)} at epoch "
             f"{last_ep}", _verdict(abs(eh - PTB_H) <= PTB_H_TOL if math.isfinite(eh) else None,
                                    standin)]]
    layers = sorted(x for x in set(fin.layer.dropna()))
    if layers:
        n_l = int(max(layers)) + 1
        k = max(1, n_l // 3)
        early = fin[fin.layer < k]
        deep = fin[fin.layer >= n_l - k]
        mixed = bool(((early.w_dyt >= MIXED[0]) & (early.w_dyt <= MIXED[1])).all())
        early_s = "block 0" if k == 1 else f"blocks 0-{k - 1}"
        deep_s = f"block {n_l - 1}" if k == 1 else f"blocks {n_l - k}-{n_l - 1}"
        rows.append([f"early layers ({early_s}) stay mixed",
                     f"{MIXED[0]:.2f} <= w_DyT <= {MIXED[1]:.2f} (ours; the paper says "
                     "\"mixed\")",
                     f"final w_DyT {fmt(early.w_dyt.min(), 3)}-{fmt(early.w_dyt.max(), 3)}",
                     _verdict(mixed, standin)])
        rows.append([f"deep layers ({deep_s}) prefer DyT",
                     f"w_DyT > {DYT_THRESHOLD} (paper)",
                     f"min w_DyT = {fmt(deep.w_dyt.min(), 3)}, mean {fmt(deep.w_dyt.mean(), 3)}",
                     _verdict(bool((deep.w_dyt > DYT_THRESHOLD).all()), standin)])
    return rows


def freeze_effect(ctx: ReportContext) -> list[str]:
    """CIFAR-10: AutoNorm-S minus unfrozen AutoNorm, beside the paper's +2.0 (table) / +1.1 (text)."""
    s = ctx.summary
    lines = []
    for d in ("cifar10",) + tuple(k for k, v in STANDIN_FOR.items() if v == "cifar10"):
        if s.empty or d not in set(s.dataset):
            continue
        standin = ctx.standin(d)
        acc = s[(s.dataset == d) & (s.metric == "accuracy")].set_index("method")
        if not {"autonorm_s", "autonorm"} <= set(acc.index):
            continue
        diff = fnum(acc.loc["autonorm_s", "mean"]) - fnum(acc.loc["autonorm", "mean"])
        table = CIFAR10_FREEZE[0] - CIFAR10_FREEZE[1]
        if standin:
            verdict = NOT_APPLICABLE
        elif not math.isfinite(diff):
            verdict = "not measurable in this run"
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
                            f"difference detectable at 80% power {fmt(c['mdd80'], 2)} points")
        lines += [f"- {ctx.label(d)}, the freeze effect (autonorm_s − autonorm accuracy): "
                  f"measured {fmt_diff(diff, acc.loc['autonorm_s', 'mean'])} points{test}. The "
                  f"paper says +{CIFAR10_FREEZE_TEXT} in its text and +{table:.1f} in its table "
                  f"({CIFAR10_FREEZE[0]} vs {CIFAR10_FREEZE[1]}). Verdict: {verdict}."]
    return (["### Freeze effect (CIFAR-10)", ""] + lines + [""]) if lines else []


def _scale_note(ctx: ReportContext) -> list[str]:
    if ctx.preset == "paper":
        return []
    sizes = ctx.model_sizes()
    ours = "; ".join(f"{f}: {v}" for f, v in sizes.items()) or "see the config below"
    paper = "; ".join(f"{f}: {v}" for f, v in PAPER_BACKBONE.items())
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
            if g.empty:
                continue
            found = True
            seeds = sorted(set(g.seed))
            fin = _final_gates(g)
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
                rows = _mnist_checks(g, h, final_h, last_ep, standin)
            elif target == "ptb_pos":
                rows = _ptb_checks(fin, h, final_h, last_ep, standin)
            else:
                blocks += [head, "",
                           f"No paper claim for {pretty(target)}: final mean H = "
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
