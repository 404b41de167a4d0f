"""The AutoNorm-S freeze record (with the rule in words) and the list of runs."""
from __future__ import annotations

from autonorm.report.context import ReportContext
from autonorm.report.fmt import fmt, fnum, md_table, text, truthy

RUN_STATES = ("ok", "diverged", "missing", "stale")


def freeze_section(ctx: ReportContext) -> str:
    ref = ctx.reference_method
    freeze = ctx.freeze
    lines = [f"## Freeze record ({ref})", ""]
    fz = freeze[freeze.method == ref] if not freeze.empty else freeze
    if fz.empty:
        return "\n".join(lines + [f"No freeze.json found for {ref}.", ""])
    t_f = fnum(fz["t_freeze"].dropna().iloc[0]) if fz["t_freeze"].notna().any() else float("nan")
    eps = fnum(fz["eps_h"].dropna().iloc[0]) if fz["eps_h"].notna().any() else float("nan")
    lines += [f"The rule (docs/method.md section 1): at the end of epoch T_freeze "
              f"(here {fmt(t_f, 0)}), if the mean gate entropy H on the validation set is "
              f"**not below** eps_H (here {fmt(eps)}), every selector's parameters are frozen "
              "for the rest of training (the backbone keeps training). So \"froze: yes\" means "
              "H was still at or above eps_H at epoch T_freeze (the gates had not decided); "
              "\"no\" means H had already fallen below eps_H, or freezing is disabled for the "
              "family (`autonorm.freeze.<family>`; NLP by default, as in the paper: there AutoNorm-S "
              "is AutoNorm).", ""]
    rows = []
    for d in dict.fromkeys(fz["dataset"]):
        fd = fz[fz.dataset == d]
        n_froze = int(fd.froze.map(truthy).sum())
        for r in fd.itertuples(index=False):
            froze = truthy(r.froze)
            enabled = truthy(r.enabled)
            h = fnum(r.entropy_at_decision)
            above = h >= fnum(r.eps_h)
            if not enabled:
                why = "freezing disabled"
            elif froze and above:
                why = f"H = {fmt(h, 3)} ≥ eps_H {fmt(r.eps_h)} at epoch {fmt(r.t_freeze, 0)}"
            elif not froze and h < fnum(r.eps_h):
                why = f"H = {fmt(h, 3)} < eps_H {fmt(r.eps_h)}: gates already decided"
            else:
                why = (f"**recorded decision disagrees with the rule** (H = {fmt(h, 3)}, "
                       f"eps_H = {fmt(r.eps_h)}, froze = {'yes' if froze else 'no'})")
            rows.append([ctx.label(d), r.seed, "yes" if enabled else "no",
                         "yes" if froze else "no", fmt(r.epoch, 0) if froze else "–",
                         fmt(h, 3), fmt(r.t_freeze, 0), fmt(r.eps_h), why])
        lines.append(f"- {ctx.label(d)}: froze in {n_froze} of {len(fd)} seeds")
    runs = ctx.runs
    if not runs.empty and "same_run_as" in runs:
        dup = runs[(runs.method == ref) & runs.same_run_as.map(lambda v: bool(text(v)))]
        for d in dict.fromkeys(dup["dataset"]):
            if d not in set(fz["dataset"]):
                other = text(dup.loc[dup.dataset == d, "same_run_as"].iloc[0])
                lines.append(f"- {ctx.label(d)}: no freeze record: {ref} is the same training "
                             f"as {other} here (nothing freezes on this family)")
    lines += ["", md_table(["dataset", "seed", "freeze enabled", "froze", "epoch",
                            "H at decision", "T_freeze", "eps_H", "why"], rows), ""]
    return "\n".join(lines)


def runs_section(ctx: ReportContext) -> str:
    runs = ctx.runs
    lines = ["## Runs", ""]
    if runs.empty:
        return "\n".join(lines + ["runs.csv is empty: no run was expected.", ""])
    counts = runs.groupby(["dataset", "method"]).status.value_counts().unstack(fill_value=0)
    for c in RUN_STATES:
        if c not in counts:
            counts[c] = 0
    summary = ", ".join(f"{int((runs.status == c).sum())} {c}" for c in RUN_STATES)
    same = runs.same_run_as.map(lambda v: bool(text(v))) if "same_run_as" in runs else runs.status != runs.status
    n_same = int(same.sum())
    copies = (f" {n_same} of them are the same training as another row (e.g. AutoNorm-S on a family "
              f"that never freezes is AutoNorm): {len(runs) - n_same} trainings, which the provenance "
              "below counts." if n_same else "")
    lines += [f"{len(runs)} expected runs: {summary}.{copies} Diverged, missing and stale runs "
              "contribute no number to any table (n counts ok runs only).", ""]
    # per dataset x method only where something is not ok (a full grid is long and all "ok")
    rows = [[d, m, *(int(r[c]) for c in RUN_STATES)] for (d, m), r in counts.iterrows()
            if sum(int(r[c]) for c in RUN_STATES if c != "ok")]
    if rows:
        lines += ["Dataset x method with a run that is not ok:", "",
                  md_table(["dataset", "method", *RUN_STATES], rows), ""]
    bad = runs[runs.status != "ok"]
    if bad.empty:
        lines += ["No missing, diverged or stale runs.", ""]
    else:
        lines += ["Missing, diverged or stale runs:", "",
                  md_table(["dataset", "method", "seed", "status", "detail", "path"],
                           [[r.dataset, r.method, r.seed, f"**{r.status}**", text(r.message),
                             r.path] for r in bad.itertuples(index=False)]), ""]
    noeval = runs[(runs.status == "ok") & ~runs.has_eval.map(truthy)]
    if len(noeval):
        lines += [f"{len(noeval)} ok run(s) had no eval json; their test metrics and cost come "
                  "from metrics.json (no rotation / corruption numbers).", ""]
    if "config_state" in runs:
        unknown = runs[(runs.status == "ok") & (runs.config_state.map(text) == "unknown")]
        if len(unknown):
            lines += [f"{len(unknown)} ok run(s) record no config hash (older format): they "
                      "are used, but could not be checked against their folder's config.", ""]
    return "\n".join(lines)
