"""The paper's claims about its gates, as checks on a study's gate records (docs/method.md
section 6): each check gives the claim, its threshold and where the threshold comes from, the
measured value and a verdict. One module, read by the per-study report's mechanism section and by
the findings page's ledger, so that the two cannot disagree.

A check reads the gate weights by the candidate names a gate records (``w_dyt``, ``w_ln``): a gate
that does not mix the paper's DyT and LN is never judged against the paper's LN claims."""
from __future__ import annotations

import math

import pandas as pd

from autonorm.report.fmt import fmt, fnum, truthy
from autonorm.report.paper import DYT_THRESHOLD, H_ZERO, LN_BY_EPOCH, LN_THRESHOLD, MIXED, PTB_H, PTB_H_TOL

NOT_APPLICABLE = "not applicable: stand-in data"


def final_gates(g: pd.DataFrame) -> pd.DataFrame:
    """Seed-mean w_DyT / w_LN / entropy per selector at each seed's last epoch."""
    last = g.groupby("seed")["epoch"].transform("max")
    cols = [c for c in ("w_dyt", "w_ln", "entropy") if c in g]
    return g[g.epoch == last].groupby(["selector", "layer"], dropna=False)[cols].mean().reset_index()


def check_verdict(ok: bool | None, standin: bool) -> str:
    if standin:
        return NOT_APPLICABLE
    if ok is None:
        return "not measurable in this run"
    return "**consistent**" if ok else "**not reproduced**"


def w_ln_of(g: pd.DataFrame) -> pd.Series:
    """w_LN as recorded (not 1 - w_DyT: a three-way gate has a third branch)."""
    return g["w_ln"] if "w_ln" in g else pd.Series(math.nan, index=g.index)


#: the paper's MNIST training images per epoch (60,000 less its 6,000 validation images)
PAPER_MNIST_TRAIN = 54_000


def images_matched_epoch(n_train) -> int | None:
    """The epoch at which a run of ``n_train`` images per epoch has seen the paper's 5 epochs of
    images; None where the two readings agree (the paper's training split) or it is unknown."""
    n = fnum(n_train)
    if not math.isfinite(n) or n <= 0 or int(n) == PAPER_MNIST_TRAIN:
        return None
    return math.ceil(LN_BY_EPOCH * PAPER_MNIST_TRAIN / n)


def images_matched(g, h, n_train, last_ep) -> str:
    """The MNIST claims read at the images-seen-matched epoch, for beside the epoch-matched verdict
    (docs/method.md section 6 decides by epoch 5)."""
    e = images_matched_epoch(n_train)
    if e is None:
        return ""
    seen = f"{LN_BY_EPOCH * PAPER_MNIST_TRAIN:,}"
    if e > last_ep:
        return (f"; images-matched reading (the paper's {seen} images = our epoch {e}): not reached, the run "
                f"has {last_ep} epochs")
    at = g[g.epoch == e].groupby("selector").w_ln.mean()
    h_e = h[h.epoch == e].mean_entropy
    return (f"; images-matched reading (the paper's {seen} images = our epoch {e}): min w_LN "
            f"{fmt(float(at.min()), 3) if len(at) else '–'}, mean H {fmt(float(h_e.mean()), 3) if len(h_e) else '–'}")


#: the sub-layers a selector can sit at, as recorded (analysis.collect.parse_selector), in words
SIDES = {"attn": "attention-side (block-input)", "mlp": "MLP-side", "block": "per-block"}


def sides_text(at: pd.DataFrame, g: pd.DataFrame) -> str:
    """Where a model has selectors on both sides of its blocks: each side's smallest seed-mean w_LN
    at the epoch read, and every selector's at the last epoch (the claim names epoch 5; the end of
    training shows where the gates went). Empty for one selector per block."""
    sides = [x for x in ("attn", "mlp") if (at.sublayer.astype(str) == x).any()] if "sublayer" in at else []
    if len(sides) < 2:
        return ""
    parts = [f"{SIDES[x]} selectors alone: min w_LN {fmt(float(at[at.sublayer == x].groupby('selector').w_ln.mean().min()), 3)}"
             for x in sides]
    last = g[g.epoch == g.epoch.max()]
    fin = last.groupby("selector").w_ln.mean()
    fin_mlp = last[last.sublayer == "mlp"].groupby("selector").w_ln.mean()
    parts.append(f"at the last epoch ({int(g.epoch.max())}) {int((fin > LN_THRESHOLD).sum())} of {len(fin)} "
                 f"selectors have w_LN > {LN_THRESHOLD}, and {int((fin_mlp > 0.5).sum())} of {len(fin_mlp)} "
                 "MLP-side ones lean to LN (w_LN > 0.5)")
    return "; " + "; ".join(parts)


def mnist_checks(g, h, final_h, last_ep, standin, n_train=None) -> list[list[str]]:
    """The paper: on MNIST every selector goes to LN (w_LN > 0.85) and H -> 0 within the first
    5 epochs. Both are read at epoch 5 (epoch-matched); where a run's epoch holds fewer images than
    the paper's, the images-matched reading is printed beside it. A run shorter than 5 epochs
    cannot test them."""
    g = g.assign(w_ln=w_ln_of(g))
    matched = images_matched(g, h, n_train, last_ep)
    at = g[g.epoch == LN_BY_EPOCH]
    have_ep = len(at) > 0
    short = f" (the run has only {last_ep} epochs)"
    if have_ep:
        per_sel = at.groupby("selector").w_ln.mean()  # seed mean per selector
        min_wln = float(per_sel.min()) if per_sel.notna().all() else math.nan
    else:
        min_wln = math.nan
    per_ep = g.groupby(["epoch", "selector"]).w_ln.mean().groupby("epoch").min()
    first = per_ep[per_ep > LN_THRESHOLD]
    first_s = (f"; first epoch with every seed-mean w_LN > {LN_THRESHOLD}: "
               f"{int(first.index.min())}" if len(first) else
               f"; seed-mean w_LN never above {LN_THRESHOLD} in every selector")
    if not have_ep:
        ln_measured, ln_ok = f"no epoch {LN_BY_EPOCH}{short}", None
    elif not math.isfinite(min_wln):
        ln_measured, ln_ok = "w_LN not recorded for every selector", None
    else:
        ln_measured, ln_ok = (f"min over selectors of the seed-mean w_LN = {fmt(min_wln, 3)} at "
                              f"epoch {LN_BY_EPOCH}{first_s}"), min_wln > LN_THRESHOLD
        ln_measured += sides_text(at, g)
    h5 = h[h.epoch == LN_BY_EPOCH].mean_entropy
    h_at = float(h5.mean()) if len(h5) else math.nan
    if math.isfinite(h_at):
        h_measured = (f"mean H = {fmt(h_at, 3)} at epoch {LN_BY_EPOCH} (seed mean); final "
                      f"{fmt(final_h, 3)} at epoch {last_ep}")
        h_ok = h_at < H_ZERO
    else:
        h_measured, h_ok = f"no epoch {LN_BY_EPOCH}{short}", None
    if have_ep:
        ln_measured += matched
    if math.isfinite(h_at):
        h_measured += matched
    ln_verdict = check_verdict(ln_ok, standin)
    return [
        [f"w_LN > {LN_THRESHOLD} in every selector within {LN_BY_EPOCH} epochs",
         f"w_LN > {LN_THRESHOLD} at epoch {LN_BY_EPOCH} (paper)", ln_measured, ln_verdict],
        [f"mean H -> 0 within {LN_BY_EPOCH} epochs",
         f"mean H < {H_ZERO} at epoch {LN_BY_EPOCH} (paper: epoch 5; ours: \"0\" read as below "
         f"eps_H = {H_ZERO})", h_measured, check_verdict(h_ok, standin)],
    ]


def ptb_layer_groups(n_layers: int) -> tuple[list[int], list[int]]:
    """0-based blocks of the paper's PTB claim: "layers 1-4 keep a DyT/LN balance, layers 8-12
    prefer DyT" of 12 layers, i.e. blocks 0-3 and 7-11; another depth is scaled to the same
    fractions (early: the first third; deep: from 8/12 of the depth on)."""
    n = int(n_layers)
    if n <= 0:
        return [], []
    early_end = max(1, round(n * 4 / 12))           # layers 1..early_end
    deep_start = max(early_end + 1, round(n * 8 / 12))  # layers deep_start..n
    early = list(range(0, early_end))
    deep = list(range(deep_start - 1, n)) if deep_start <= n else []
    return early, deep


def blocks_text(ix: list[int]) -> str:
    if not ix:
        return "none"
    return f"block {ix[0]}" if len(ix) == 1 else f"blocks {ix[0]}-{ix[-1]}"


def ptb_checks(fin, h, final_h, last_ep, standin) -> list[list[str]]:
    n_ep = int(h.epoch.max()) if len(h) else 0
    half = max(1, n_ep // 2)
    early_h = h[h.epoch <= half].groupby("epoch").mean_entropy.mean()
    eh = float(early_h.mean()) if len(early_h) else math.nan
    rows = [["H stays near 0.45 for longer", f"|mean H - {PTB_H}| <= {PTB_H_TOL} over the first "
             f"half of training (paper: 0.45; ours: the tolerance)",
             f"mean H over epochs 1-{half} = {fmt(eh, 3)}; final {fmt(final_h, 3)} at epoch "
             f"{last_ep}", check_verdict(abs(eh - PTB_H) <= PTB_H_TOL if math.isfinite(eh) else None,
                                    standin)]]
    layers = sorted(x for x in set(fin.layer.dropna()))
    if layers:
        n_l = int(max(layers)) + 1
        early_ix, deep_ix = ptb_layer_groups(n_l)
        scaled = "" if n_l == 12 else f"; the paper's 12 layers scaled to {n_l}"
        early = fin[fin.layer.isin(early_ix)]
        deep = fin[fin.layer.isin(deep_ix)]
        mixed = bool(((early.w_dyt >= MIXED[0]) & (early.w_dyt <= MIXED[1])).all())
        rows.append([f"early layers ({blocks_text(early_ix)}: paper layers 1-4) stay mixed",
                     f"{MIXED[0]:.2f} <= w_DyT <= {MIXED[1]:.2f} (ours; the paper says "
                     f"\"mixed\"{scaled})",
                     f"final w_DyT {fmt(early.w_dyt.min(), 3)}-{fmt(early.w_dyt.max(), 3)}",
                     check_verdict(mixed if len(early) else None, standin)])
        rows.append([f"deep layers ({blocks_text(deep_ix)}: paper layers 8-12) prefer DyT",
                     f"w_DyT > {DYT_THRESHOLD} in every selector (paper{scaled})",
                     (f"min w_DyT = {fmt(deep.w_dyt.min(), 3)}, mean {fmt(deep.w_dyt.mean(), 3)}"
                      if len(deep) else "no such block"),
                     check_verdict(bool((deep.w_dyt > DYT_THRESHOLD).all()) if len(deep) else None,
                              standin)])
    return rows


def froze_seeds(freeze: pd.DataFrame, d: str, method: str = "autonorm_s") -> tuple[int, int]:
    """(seeds whose selectors froze, seeds with a freeze record) of one dataset x method."""
    if freeze is None or freeze.empty:
        return 0, 0
    f = freeze[(freeze.dataset == d) & (freeze.method == method)]
    return int(sum(truthy(x) for x in f["froze"])), len(f)
