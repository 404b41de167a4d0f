"""The markdown report: our numbers beside the paper's, tests, mechanism checks.

Why: the report is the reproduction's single human-readable result.  It is
built only from the aggregate CSVs (so every number can be traced to a row)
plus, for provenance, the runs' ``env.json`` files.  Stand-in datasets are
labelled as such everywhere, never get a paper number beside them, and any
stand-in triggers a banner at the top.

Sections: banner, per dataset family (vision, nlp, tabular) tables of
mean +- std, 95% CI and n beside the paper, Holm-adjusted p-values of
autonorm_s against every method, CIFAR-10-C and rotation tables, the
mechanism checks of SPEC section 6 stated as measured, the AutoNorm-S freeze
record, a "Runs" section (missing / diverged runs), the figures (relative
links) and provenance (config hash, package versions, devices, date).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import math
import os
import platform
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from autonorm import stats
from autonorm.io_utils import read_json, read_table, write_text_atomic

BANNER = "SMOKE / stand-in data: these numbers are not comparable to the paper"
FAMILIES = ("vision", "nlp", "tabular")
DEFAULT_REFERENCE_METHOD = "autonorm_s"
REFERENCE_METHOD = DEFAULT_REFERENCE_METHOD
GATED_METHODS = ("autonorm_s", "autonorm", "autonorm3")
#: which paper dataset a stand-in takes the place of (mechanism checks follow it)
STANDIN_FOR = {"smoke_digits": "mnist", "smoke_shapes32": "cifar10", "smoke_pos": "ptb_pos",
               "smoke_sentiment": "sst2", "smoke_diabetes": "california_housing"}
PRETTY = {"mnist": "MNIST", "fashion_mnist": "Fashion-MNIST", "cifar10": "CIFAR-10",
          "cifar100": "CIFAR-100", "svhn": "SVHN", "ptb_pos": "PTB", "sst2": "SST-2",
          "energy_efficiency": "Energy Efficiency", "california_housing": "California Housing",
          "cifar10c": "CIFAR-10-C"}
CORRUPTION_KEYS = ("gaussian_noise_s3", "motion_blur_s3", "brightness_s3", "mean_s3", "mean_all")

# thresholds of the mechanism checks (SPEC section 6); "(ours)" where the paper gives none
LN_THRESHOLD = 0.85          # MNIST: w_LN > 0.85 in every layer ...
LN_BY_EPOCH = 5              # ... within 5 epochs
H_ZERO = 0.1                 # "H -> 0": final mean H below eps_H = 0.1 (ours)
PTB_H = 0.45                 # PTB: H stays near 0.45 ...
PTB_H_TOL = 0.1              # ... "near" = within +-0.1 (ours)
DYT_THRESHOLD = 0.72         # PTB: deep layers w_DyT > 0.72
MIXED = (1 - DYT_THRESHOLD, DYT_THRESHOLD)  # "mixed": 0.28 <= w_DyT <= 0.72 (ours)


# --------------------------------------------------------------------------- formatting
def fmt(v, digits: int | None = None) -> str:
    """Compact number formatting: ints with separators, small numbers with 4 sig. figs."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(v):
        return "–"
    if digits is not None:
        return f"{v:.{digits}f}"
    a = abs(v)
    if a >= 1e5:
        return f"{v:.3g}" if a >= 1e9 else f"{v:,.0f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 1:
        return f"{v:.3f}"
    if a == 0:
        return "0"
    return f"{v:.4g}"


def _decimals(v: float) -> int:
    """Decimals that show ~4 significant figures of ``v`` (2 for values >= 10)."""
    a = abs(v)
    if a >= 10:
        return 2
    if a >= 1:
        return 3
    if a == 0:
        return 4
    return max(0, 3 - int(math.floor(math.log10(a))))


def fmt_ms(mean, sd) -> str:
    """'mean ± std' with the std printed to the same decimals as the mean."""
    mean, sd = float(mean), float(sd)
    if not math.isfinite(mean):
        return "–"
    if abs(mean) >= 1e5:
        return fmt(mean) + (f" ± {fmt(sd)}" if math.isfinite(sd) else "")
    dec = _decimals(mean)
    out = f"{mean:.{dec}f}"
    if math.isfinite(sd):
        out += f" ± {sd:.{dec}f}"
    return out


def fmt_cost(metric: str, v) -> str:
    v = float(v)
    if not math.isfinite(v):
        return "–"
    if metric in ("params", "flops_per_sample"):
        return f"{v:,.0f}" if abs(v) < 1e12 else f"{v:.3g}"
    return fmt(v)


def _short_note(note) -> str:
    if not isinstance(note, str) or not note:
        return "–"
    first = note.split(";")[0].strip()
    return first if first.startswith("n=") else "no test (see note)"


def fmt_p(p) -> str:
    try:
        p = float(p)
    except (TypeError, ValueError):
        return "–"
    if not math.isfinite(p):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def md_table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    rows = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def pretty(d: str) -> str:
    return PRETTY.get(d, d)


def _truthy(v) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    try:
        return bool(v) and not (isinstance(v, float) and math.isnan(v))
    except (TypeError, ValueError):
        return False


def _dataset_label(d: str, standin: bool) -> str:
    if standin:
        tgt = STANDIN_FOR.get(d)
        return f"{d} (stand-in{' for ' + pretty(tgt) if tgt else ''}; no paper numbers)"
    return pretty(d)


# --------------------------------------------------------------------------- sections
def _ours(r) -> str:
    if not r["n"] or int(r["n"]) == 0:
        return "no result"
    return fmt_ms(r["mean"], r["std"])


def _paper(r) -> str:
    pm = float(r["paper_mean"]) if "paper_mean" in r else math.nan
    if not math.isfinite(pm):
        return "–"
    return fmt_ms(pm, r["paper_std"])


def _ci(r) -> str:
    lo, hi = float(r["ci95_low"]), float(r["ci95_high"])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "–"
    dec = _decimals(float(r["mean"])) if math.isfinite(float(r["mean"])) else 3
    return f"[{lo:.{dec}f}, {hi:.{dec}f}]"


def _n(r) -> str:
    n = int(r["n"]) if r["n"] == r["n"] else 0
    extra = []
    if int(r.get("n_diverged", 0) or 0):
        extra.append(f"{int(r['n_diverged'])} diverged")
    if int(r.get("n_missing", 0) or 0):
        extra.append(f"{int(r['n_missing'])} missing")
    return f"{n}" + (f" ({', '.join(extra)})" if extra else "")


def dataset_section(d: str, summary: pd.DataFrame, comparisons: pd.DataFrame) -> str:
    sd = summary[summary.dataset == d]
    standin = bool(sd["standin"].map(_truthy).any())
    lines = [f"### {_dataset_label(d, standin)}", ""]
    prim = sd[sd.metric_family == "primary"]
    if prim.empty:
        lines.append("No primary metric was measured for this dataset.")
        return "\n".join(lines)
    cmp_d = comparisons[comparisons.dataset == d] if not comparisons.empty else comparisons
    rows = []
    for _, r in prim.iterrows():
        p_h, dz = "–", "–"
        if r["method"] == REFERENCE_METHOD:
            p_h = "(reference)"
        elif not cmp_d.empty:
            c = cmp_d[(cmp_d.metric == r["metric"]) & (cmp_d.method_b == r["method"])]
            if len(c):
                c = c.iloc[0]
                p_h = (fmt_p(c["p_holm"]) if math.isfinite(float(c["p_holm"]))
                       else _short_note(c["note"]))
                dz = fmt(c["cohens_dz"], 2)
        arrow = "↑" if _truthy(r["higher_is_better"]) else "↓"
        row = [r["method"], f"{r['metric']} {arrow}", _ours(r), _ci(r), _n(r)]
        if not standin:
            row.append(_paper(r))
        row += [p_h, dz]
        rows.append(row)
    headers = ["method", "metric", "ours (mean ± std)", "95% CI", "n"]
    if not standin:
        headers.append("paper (mean ± std)")
    headers += [f"p (Holm) vs {REFERENCE_METHOD}", "d_z"]
    lines.append(md_table(headers, rows))
    lines.append("")
    # secondary metrics, compact
    sec = sd[sd.metric_family == "secondary"]
    if not sec.empty:
        mets = list(dict.fromkeys(sec["metric"]))
        rows = []
        for m in dict.fromkeys(sec["method"]):
            sm = sec[sec.method == m].set_index("metric")
            rows.append([m] + [_ours(sm.loc[x]) if x in sm.index else "–" for x in mets])
        lines += ["Other test metrics (mean ± std over seeds):", "",
                  md_table(["method"] + mets, rows), ""]
    cost = sd[sd.metric_family == "cost"]
    if not cost.empty:
        mets = [m for m in stats.COST_METRICS if m in set(cost["metric"])]
        rows = []
        for m in dict.fromkeys(cost["method"]):
            sm = cost[cost.method == m].set_index("metric")
            rows.append([m] + [fmt_cost(x, sm.loc[x, "mean"]) if x in sm.index else "–"
                               for x in mets])
        lines += ["Cost (mean over seeds):", "", md_table(["method"] + mets, rows), ""]
    # full paired tests of the primary family
    if not cmp_d.empty:
        cp = cmp_d[cmp_d.holm_family == "primary"]
        if not cp.empty:
            rows = [[c.metric, f"{c.method_a} − {c.method_b}", int(c.n),
                     f"{c.mean_diff:.{_decimals(c.mean_a) if math.isfinite(c.mean_a) else 3}f}"
                     if math.isfinite(c.mean_diff) else "–",
                     fmt(c.t, 3), fmt_p(c.p), fmt_p(c.p_holm), fmt(c.cohens_dz, 2),
                     fmt_p(c.wilcoxon_p), c.note if isinstance(c.note, str) else ""]
                    for c in cp.itertuples(index=False)]
            m_holm = int(cp.holm_m.max())
            head = (f"Holm over the {m_holm} primary-metric comparisons of this dataset" if m_holm
                    else "no test could be run, see the notes")
            lines += [f"Paired tests ({REFERENCE_METHOD} − other, paired by seed; {head}):", "",
                      md_table(["metric", "difference", "n", "mean diff", "t", "p", "p (Holm)",
                                "d_z", "Wilcoxon p", "note"], rows), ""]
    return "\n".join(lines)


def robustness_section(summary: pd.DataFrame, comparisons: pd.DataFrame) -> str:
    lines = ["## Robustness", ""]
    corr = summary[summary.metric.isin(CORRUPTION_KEYS)]
    lines += ["### Corruptions (CIFAR-10-C, severity 3)", ""]
    if corr.empty:
        lines += ["No corruption set was evaluated in this run.", ""]
    for d in dict.fromkeys(corr["dataset"]):
        cd = corr[corr.dataset == d]
        standin = bool(cd["standin"].map(_truthy).any())
        src = cd["source_dataset"].iloc[0]
        label = (f"{d}: CIFAR-10-C, from {src}" if d == "cifar10c" else f"{d}: corruption set of {src}")
        if standin:
            label += " (stand-in or generated corruptions; no paper numbers)"
        mets = [m for m in CORRUPTION_KEYS if m in set(cd["metric"])]
        rows = []
        for m in dict.fromkeys(cd["method"]):
            sm = cd[cd.method == m].set_index("metric")
            row = [m]
            for x in mets:
                if x not in sm.index:
                    row.append("–")
                    continue
                cell = _ours(sm.loc[x])
                if not standin and math.isfinite(float(sm.loc[x, "paper_mean"])):
                    cell += f" (paper {fmt(sm.loc[x, 'paper_mean'])})"
                if m != REFERENCE_METHOD and not comparisons.empty:
                    c = comparisons[(comparisons.dataset == d) & (comparisons.metric == x)
                                    & (comparisons.method_b == m)]
                    if len(c) and math.isfinite(float(c.iloc[0]["p_holm"])):
                        cell += f", p_Holm {fmt_p(c.iloc[0]['p_holm'])}"
                row.append(cell)
            rows.append(row)
        lines += [f"**{label}**", "", md_table(["method"] + mets, rows), ""]
    rot = summary[summary.metric == "rotation_accuracy"]
    lines += ["### Rotation (test images rotated 90°, accuracy %)", ""]
    if rot.empty:
        lines += ["No rotation evaluation in this run.", ""]
    else:
        rows = []
        for _, r in rot.iterrows():
            standin = _truthy(r["standin"])
            rows.append([_dataset_label(r["dataset"], standin), r["method"], _ours(r), _ci(r),
                         _n(r), "–" if standin else _paper(r)])
        lines += [md_table(["dataset", "method", "ours (mean ± std)", "95% CI", "n", "paper"],
                           rows), ""]
    return "\n".join(lines)


def _final_gates(g: pd.DataFrame) -> pd.DataFrame:
    """Seed-mean w_DyT / entropy per selector at each seed's last epoch."""
    last = g.groupby("seed")["epoch"].transform("max")
    return g[g.epoch == last].groupby(["selector", "layer"], dropna=False)[
        ["w_dyt", "entropy"]].mean().reset_index()


def mechanism_checks(gates: pd.DataFrame, history: pd.DataFrame,
                     ds_standin: dict) -> str:
    """SPEC section 6's mechanism claims, stated as measured (yes/no + the numbers)."""
    lines = ["## Mechanism checks (SPEC section 6)", "",
             f"Thresholds: MNIST claim = every selector has w_LN > {LN_THRESHOLD} by epoch "
             f"{LN_BY_EPOCH} (checked at epoch {LN_BY_EPOCH}, minimum over selectors and seeds) "
             f"and H -> 0 (final seed-mean H < {H_ZERO}, ours); PTB claim = H stays near "
             f"{PTB_H} (mean H over the first half of training within ±{PTB_H_TOL}, ours), "
             f"early layers (first third of blocks) stay mixed ({MIXED[0]:.2f} <= w_DyT <= "
             f"{MIXED[1]:.2f}, ours) and deep layers (last third) prefer DyT "
             f"(w_DyT > {DYT_THRESHOLD}); values are seed means at each seed's last epoch unless "
             f"stated.", ""]
    if gates.empty or history.empty:
        lines += ["No gate records in this run (no gated method was trained).", ""]
        return "\n".join(lines)
    found = False
    for d in dict.fromkeys(gates["dataset"]):
        standin = bool(ds_standin.get(d, False))
        target = STANDIN_FOR.get(d, d) if standin else d
        label = (f"{d} (stand-in for {pretty(target)})" if standin and target != d
                 else (f"{d} (stand-in)" if standin else pretty(d)))
        if (gates.dataset == d).any():
            lines += [f"### {label}" + (" — stand-in data, no paper number" if standin else ""),
                      ""]
        for m in GATED_METHODS:
            g = gates[(gates.dataset == d) & (gates.method == m) & np.isfinite(gates.w_dyt)]
            h = history[(history.dataset == d) & (history.method == m)
                        & np.isfinite(history.mean_entropy)]
            if g.empty:
                continue
            found = True
            seeds = sorted(set(g.seed))
            items: list[str] = []
            fin = _final_gates(g)
            hf = h[h.epoch == h.groupby("seed")["epoch"].transform("max")]
            final_h = float(hf.mean_entropy.mean()) if len(hf) else math.nan
            last_ep = int(g.epoch.max())
            if target == "mnist":
                ep = LN_BY_EPOCH if (g.epoch == LN_BY_EPOCH).any() else last_ep
                at = g[g.epoch == ep]
                min_wln = float((1 - at.w_dyt).min())
                ok = min_wln > LN_THRESHOLD and ep <= LN_BY_EPOCH
                note = "" if ep == LN_BY_EPOCH else f" (run has only {last_ep} epochs)"
                per_ep = (1 - g.groupby(["epoch", "selector"]).w_dyt.mean()).groupby("epoch").min()
                first = per_ep[per_ep > LN_THRESHOLD]
                first_s = (f"first epoch with every seed-mean w_LN > {LN_THRESHOLD}: "
                           f"{int(first.index.min())}" if len(first) else
                           f"seed-mean w_LN never above {LN_THRESHOLD} in every selector")
                items.append(f"{label}: w_LN > {LN_THRESHOLD} in every layer by epoch "
                             f"{LN_BY_EPOCH}: **{'yes' if ok else 'no'}** (measured min w_LN = "
                             f"{fmt(min_wln, 3)} at epoch {ep}{note}; {first_s})")
                items.append(f"{label}: mean H -> 0: **{'yes' if final_h < H_ZERO else 'no'}** "
                             f"(final mean H = {fmt(final_h, 3)} at epoch {last_ep})")
            elif target == "ptb_pos":
                n_ep = int(h.epoch.max()) if len(h) else 0
                early_h = h[h.epoch <= max(1, n_ep // 2)].groupby("epoch").mean_entropy.mean()
                eh = float(early_h.mean()) if len(early_h) else math.nan
                ok = math.isfinite(eh) and abs(eh - PTB_H) <= PTB_H_TOL
                items.append(f"{label}: H stays near {PTB_H}: **{'yes' if ok else 'no'}** "
                             f"(mean H over epochs 1-{max(1, n_ep // 2)} = {fmt(eh, 3)}; "
                             f"final mean H = {fmt(final_h, 3)} at epoch {last_ep})")
                layers = sorted(x for x in set(fin.layer.dropna()))
                if layers:
                    n_l = int(max(layers)) + 1
                    k = max(1, n_l // 3)
                    early = fin[fin.layer < k]
                    deep = fin[fin.layer >= n_l - k]
                    mixed = bool(((early.w_dyt >= MIXED[0]) & (early.w_dyt <= MIXED[1])).all())
                    items.append(
                        f"{label}: early layers (blocks 0-{k - 1}) stay mixed: "
                        f"**{'yes' if mixed else 'no'}** (final w_DyT range "
                        f"{fmt(early.w_dyt.min(), 3)}-{fmt(early.w_dyt.max(), 3)})")
                    dyt = bool((deep.w_dyt > DYT_THRESHOLD).all())
                    items.append(
                        f"{label}: deep layers prefer DyT (w_DyT > {DYT_THRESHOLD}, blocks "
                        f"{n_l - k}-{n_l - 1}): **{'yes' if dyt else 'no'}** (measured min "
                        f"w_DyT = {fmt(deep.w_dyt.min(), 3)}, mean = {fmt(deep.w_dyt.mean(), 3)})")
            else:
                items.append(f"{label}: final mean H = {fmt(final_h, 3)} at epoch {last_ep}; "
                             f"final w_DyT range {fmt(fin.w_dyt.min(), 3)}-"
                             f"{fmt(fin.w_dyt.max(), 3)} (mean {fmt(fin.w_dyt.mean(), 3)}); "
                             f"selectors preferring DyT (w_DyT > 0.5): "
                             f"{int((fin.w_dyt > 0.5).sum())} of {len(fin)} (no paper claim)")
            lines.append(f"**{m}** ({len(seeds)} seed{'s' if len(seeds) != 1 else ''}):")
            lines.append("")
            lines += [f"- {it}" for it in items]
            lines.append("")
    if not found:
        lines += ["No gated method has gate records in this run.", ""]
    return "\n".join(lines)


def freeze_section(freeze: pd.DataFrame, ds_standin: dict) -> str:
    lines = [f"## Freeze record ({REFERENCE_METHOD})", ""]
    fz = freeze[freeze.method == REFERENCE_METHOD] if not freeze.empty else freeze
    if fz.empty:
        lines += [f"No freeze.json found for {REFERENCE_METHOD}.", ""]
        return "\n".join(lines)
    rows = []
    for d in dict.fromkeys(fz["dataset"]):
        fd = fz[fz.dataset == d]
        n_froze = int(fd.froze.map(_truthy).sum())
        for r in fd.itertuples(index=False):
            rows.append([d + (" (stand-in)" if ds_standin.get(d) else ""), r.seed,
                         "yes" if _truthy(r.enabled) else "no",
                         "yes" if _truthy(r.froze) else "no",
                         fmt(r.epoch, 0) if _truthy(r.froze) else "–",
                         fmt(r.entropy_at_decision, 3), fmt(r.t_freeze, 0), fmt(r.eps_h)])
        lines.append(f"- {d}: froze in {n_froze} of {len(fd)} seeds")
    lines += ["", md_table(["dataset", "seed", "freeze enabled", "froze", "epoch",
                            "H at decision", "T_freeze", "eps_H"], rows), ""]
    return "\n".join(lines)


def runs_section(runs: pd.DataFrame) -> str:
    lines = ["## Runs", ""]
    if runs.empty:
        lines += ["runs.csv is empty: no run was expected.", ""]
        return "\n".join(lines)
    n = len(runs)
    counts = runs.groupby(["dataset", "method"]).status.value_counts().unstack(fill_value=0)
    for c in ("ok", "diverged", "missing"):
        if c not in counts:
            counts[c] = 0
    bad = runs[runs.status != "ok"]
    lines.append(f"{n} expected runs: {int((runs.status == 'ok').sum())} ok, "
                 f"{int((runs.status == 'diverged').sum())} diverged, "
                 f"{int((runs.status == 'missing').sum())} missing. Diverged and missing runs "
                 f"contribute no number to any table (n counts ok runs only).")
    lines.append("")
    rows = [[d, m, int(r["ok"]), int(r["diverged"]), int(r["missing"])]
            for (d, m), r in counts.iterrows()]
    lines += [md_table(["dataset", "method", "ok", "diverged", "missing"], rows), ""]
    if bad.empty:
        lines += ["No missing or diverged runs.", ""]
    else:
        lines += ["Missing or diverged runs:", ""]
        lines += [md_table(["dataset", "method", "seed", "status", "detail", "path"],
                           [[r.dataset, r.method, r.seed, f"**{r.status}**",
                             r.message if isinstance(r.message, str) else "", r.path]
                            for r in bad.itertuples(index=False)]), ""]
    noeval = runs[(runs.status == "ok") & ~runs.has_eval.map(_truthy)]
    if len(noeval):
        lines += [f"{len(noeval)} ok run(s) had no eval json; their test metrics and cost come "
                  f"from metrics.json (no rotation / corruption numbers).", ""]
    return "\n".join(lines)


def figures_section(figures_dir: Path | None, out: Path) -> str:
    lines = ["## Figures", ""]
    if figures_dir is None:
        return "\n".join(lines + ["No figures folder given.", ""])
    from autonorm.figures import FIGURE_STEMS

    captions = {
        "method_comparison": "Primary metric per method (mean, 95% CI); x = paper value.",
        "gate_entropy": "Mean gate entropy over epochs (seed band), eps_H and freeze epoch.",
        "wdyt_heatmap": "Mean w_DyT per selector and dataset at the end of training "
                        "(autonorm_s).",
        "metric_vs_entropy": "Validation metric against mean gate entropy.",
        "corruptions": "Accuracy per corruption at severity 3 and against severity.",
    }
    rel = os.path.relpath(Path(figures_dir).resolve(), out.resolve().parent)
    for stem in FIGURE_STEMS:
        png = Path(figures_dir) / f"{stem}.png"
        link = Path(rel, f"{stem}.png").as_posix()
        lines.append(f"### {stem}")
        lines.append("")
        lines.append(captions.get(stem, ""))
        lines.append("")
        if png.is_file():
            lines.append(f"![{stem}]({link})  ([PDF]({Path(rel, stem + '.pdf').as_posix()}))")
        else:
            lines.append(f"(figure file {link} not found)")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- provenance
def config_hash(config_json: str | None) -> str | None:
    """sha256 of the config json in canonical form: ``json.dumps(cfg, sort_keys=True)``.

    Canonical so that the same config passed with different whitespace or key
    order gets the same hash; it is the form autonorm.provenance.config_hash
    hashes, so its 16-character run hash is a prefix of this one.  An
    unparsable string is hashed as given.
    """
    if config_json is None:
        return None
    try:
        canon = json.dumps(json.loads(config_json), sort_keys=True)
    except ValueError:
        canon = config_json
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _flatten(d, prefix: str = "") -> dict:
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif isinstance(d, list):
        out[prefix[:-1]] = ", ".join(map(str, d))
    else:
        out[prefix[:-1]] = d
    return out


def collect_env(runs_dir: str | Path | None) -> dict[str, dict[str, int]]:
    """Distinct values of version / device fields over all runs' env.json.

    env.json's exact keys are the trainer's business, so this is tolerant:
    any (nested) key whose name mentions a version, a package, python, torch,
    cuda, a device, a GPU/CPU or threads is kept; host names and times are not.
    """
    found: dict[str, dict[str, int]] = {}
    if runs_dir is None or not Path(runs_dir).is_dir():
        return found
    wanted = ("version", "versions", "packages", "python", "torch", "numpy", "cuda", "cudnn",
              "device", "gpu", "cpu", "threads", "platform", "git_commit")
    for p in sorted(Path(runs_dir).rglob("env.json")):
        try:
            env = read_json(p)
        except (OSError, ValueError):
            continue
        for k, v in _flatten(env).items():
            kl = k.lower()
            if any(w in kl for w in ("host", "time", "date", "pid", "user", "path", "cwd",
                                     "slurm")):
                continue
            if any(w in kl for w in wanted):
                found.setdefault(k, {})
                found[k][str(v)] = found[k].get(str(v), 0) + 1
    return found


def _local_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "seaborn"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            out[mod] = "not installed"
    return out


def _now() -> str:
    sde = os.environ.get("SOURCE_DATE_EPOCH")
    if sde and sde.isdigit():
        t = _dt.datetime.fromtimestamp(int(sde), tz=_dt.timezone.utc)
    else:
        t = _dt.datetime.now(tz=_dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


def provenance_section(config_json: str | None, runs_dir: str | Path | None) -> str:
    lines = ["## Provenance", "", f"- Report generated: {_now()}"]
    h = config_hash(config_json)
    lines.append(f"- Config hash (sha256 of the config json, keys sorted): "
                 f"{'`' + h + '` (runs record its first 16 characters)' if h else 'not given (--config-json absent)'}")
    lv = _local_versions()
    lines.append("- Report environment: " + ", ".join(f"{k} {v}" for k, v in lv.items()))
    env = collect_env(runs_dir)
    if runs_dir is None:
        lines.append("- Run environments: not collected (--provenance-from absent)")
    elif not env:
        lines.append(f"- Run environments: no env.json with version/device fields under "
                     f"{runs_dir}")
    else:
        lines += ["- Run environments (distinct values over all runs' env.json; count of runs):",
                  "", md_table(["field", "values"],
                               [[k, "; ".join(f"{val} ({c})" for val, c in vs.items())]
                                for k, vs in sorted(env.items())]), ""]
    if config_json:
        try:
            pretty_cfg = json.dumps(json.loads(config_json), indent=2, sort_keys=True)
        except ValueError:
            pretty_cfg = config_json
        lines += ["", "<details><summary>Config</summary>", "", "```json", pretty_cfg, "```", "",
                  "</details>"]
    lines.append("")
    return "\n".join(lines)


def stats_notes() -> str:
    return "\n".join([
        "## Statistical methods", "",
        "- Over seeds: mean, sample std (ddof = 1), two-sided 95% Student-t interval "
        "(mean ± t(0.975, n−1)·std/√n); n counts finished (ok) runs only.",
        f"- {REFERENCE_METHOD} is compared with every other method by a paired t-test over the "
        "seeds present in both (seed i against seed i, same data order); d_z = mean difference "
        "/ sd of the differences; difference = "
        f"{REFERENCE_METHOD} − other (for ↓ metrics a negative difference favours "
        f"{REFERENCE_METHOD}).",
        "- Holm correction per dataset and metric family: one family for the primary metrics "
        "(accuracy, tag perplexity, RMSE: every baseline × metric of that dataset), one for the "
        "secondary metrics (macro precision/recall/F1, MAE) and one for robustness "
        "(rotation, corruption summaries). Tests that could not be run are left out of the "
        "family. Cost figures are not tested.",
        "- Wilcoxon signed-rank p as a check only with n ≥ 5 pairs; with n = 1 no test is run "
        "(\"n=1: no test\").",
        "- Source tables: `summary.csv`, `comparisons.csv`, `runs.csv`, `gates.csv`, "
        "`history.csv`, `freeze.csv`, `corruptions.csv`.", ""])


# --------------------------------------------------------------------------- driver
def build_report(tables: str | Path, figures_dir: str | Path | None, out: str | Path,
                 config_json: str | None = None,
                 provenance_from: str | Path | None = None) -> str:
    tables, out = Path(tables), Path(out)
    summary = read_table(tables, "summary.csv")
    comparisons = read_table(tables, "comparisons.csv")
    runs = read_table(tables, "runs.csv")
    gates = read_table(tables, "gates.csv")
    history = read_table(tables, "history.csv")
    freeze = read_table(tables, "freeze.csv")
    # the compared-against method is whatever autonorm-aggregate used (--reference-method);
    # module-level so the section helpers share it; reset on every call
    global REFERENCE_METHOD
    REFERENCE_METHOD = DEFAULT_REFERENCE_METHOD
    if not comparisons.empty and "method_a" in comparisons:
        REFERENCE_METHOD = str(comparisons["method_a"].iloc[0])

    ds_standin: dict[str, bool] = {}
    ds_family: dict[str, str] = {}
    for df in (runs, summary):
        if df.empty:
            continue
        # keyed by the reported dataset name: a generated CIFAR-10-C marks 'cifar10c'
        # as a stand-in, not cifar10 itself
        for r in df[["dataset", "standin", "family"]].itertuples(index=False):
            ds_standin[r[0]] = ds_standin.get(r[0], False) or _truthy(r[1])
            if isinstance(r[2], str):
                ds_family.setdefault(r[0], r[2])
    standins = sorted(d for d, s in ds_standin.items() if s)

    parts = ["# AutoNorm reproduction: results report", ""]
    if standins:
        parts += [f"> **{BANNER}.** Stand-in datasets in this run: {', '.join(standins)}. "
                  "They are labelled as stand-ins below and no paper number is set beside them.",
                  ""]
    parts += ["Our results (mean ± std over seeds, 95% CI, n) beside the paper's "
              "(AutoNorm, 2026; `paper_reference.csv`), with paired tests of AutoNorm-S "
              "(`autonorm_s`) against every other method. ↑ / ↓: higher / lower is better.", ""]
    if summary.empty:
        parts += ["**No results: summary.csv is empty.**", ""]
    else:
        main_ds = [d for d in dict.fromkeys(summary["dataset"])
                   if not (summary[summary.dataset == d].metric_family == "robustness").all()]
        def family_of(d: str) -> str:
            f = ds_family.get(d) or summary.loc[summary.dataset == d, "family"].iloc[0]
            return f if f in FAMILIES else "other"

        for fam in FAMILIES + ("other",):
            ds = [d for d in main_ds if family_of(d) == fam]
            if not ds:
                continue
            parts += [f"## {fam.capitalize() if fam != 'nlp' else 'NLP'}", ""]
            for d in ds:
                parts += [dataset_section(d, summary, comparisons), ""]
        parts += [robustness_section(summary, comparisons), ""]
    parts += [mechanism_checks(gates, history, ds_standin), ""]
    parts += [freeze_section(freeze, ds_standin), ""]
    parts += [runs_section(runs), ""]
    parts += [figures_section(Path(figures_dir) if figures_dir else None, out), ""]
    parts += [stats_notes(), ""]
    parts += [provenance_section(config_json, provenance_from)]
    text = "\n".join(parts).rstrip() + "\n"
    write_text_atomic(out, text)
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-report", description="Write the markdown report.")
    p.add_argument("--tables", required=True, help="folder with the csvs of autonorm-aggregate")
    p.add_argument("--figures-dir", default=None, help="folder with the figures (linked relatively)")
    p.add_argument("--out", required=True, help="report path, e.g. results/report.md")
    p.add_argument("--config-json", default=None, help="the pipeline config as a json string")
    p.add_argument("--provenance-from", default=None,
                   help="runs folder whose env.json files give versions and devices")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    build_report(args.tables, args.figures_dir, args.out, args.config_json, args.provenance_from)
    print(f"autonorm-report: wrote {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
