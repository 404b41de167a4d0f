"""The ledger's rows about freezing and random routing: the paper's CIFAR-10 freeze effect, what
AutoNorm-S's freeze rule did in each study, the rule against the paper's own design principle, and
the abstract's claim that random selectors outperform learned ones (sections 3.4, 4.1, 4.6, 4.7)."""
from __future__ import annotations

import math

import pandas as pd

from autonorm.analysis import stats, trainings
from autonorm.methods import AUTONORM
from autonorm.report.findings import rules
from autonorm.report.findings.commands import ABLATION_GPU_CMD, GPU_CMD, WHY_GPU, command_for
from autonorm.report.findings.gate_rows import PAPER_STATIONARY, STATIONARY_VISION
from autonorm.report.findings.rows import Row
from autonorm.report.findings.rules import Claim, Paired
from autonorm.report.findings.studies import Study, first_study
from autonorm.report.fmt import fmt, fnum, pretty, truthy
from autonorm.report.gate_checks import froze_seeds
from autonorm.report.paper import CIFAR10_FREEZE_TEXT, quote, section_of


def freeze_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    """CIFAR-10's freeze effect (the paper's claim), and what AutoNorm-S's freeze rule did in each
    study that ran it (an observation: T_freeze and eps_H are the paper's)."""
    rows = []
    claim = f"CIFAR-10: freezing the selectors after epoch 10 beats unfrozen AutoNorm; the paper: {quote('freeze_cifar10')}"
    st = first_study(studies, "cifar10", "autonorm_s", "autonorm")
    if st is None:
        rows.append(Row(claim, section_of("freeze_cifar10"), "–", "–", f"+{CIFAR10_FREEZE_TEXT}",
                        f"not testable here ({WHY_GPU['cifar10']}): `{GPU_CMD.format(d='cifar10')}`", key="freeze:cifar10"))
    else:
        comp = st.ctx.comparisons
        c = comp[(comp.dataset == "cifar10") & (comp.metric == "accuracy") & (comp.method_b == "autonorm")]
        froze, rec = froze_seeds(st.ctx.freeze, "cifar10")
        if rec and not froze:
            rows.append(Row(claim, section_of("freeze_cifar10"), st.where("cifar10"), f"0 of {rec} seeds froze",
                            f"+{CIFAR10_FREEZE_TEXT}", "not testable here: nothing froze, AutoNorm-S trained as AutoNorm",
                            key="freeze:cifar10"))
        elif len(c):
            p = Paired.of(c.iloc[0])
            m = rules.margin("accuracy", rules.paper_value(reference, "cifar10", "frozen_ln", "accuracy"))
            verdict = rules.judge(p, Claim(1, False, 1.1, ("autonorm_s", "autonorm"), ("the gain", "")), m)
            in_regime, why = rules.study_regime(st, reference, "cifar10")
            rows.append(Row(claim, section_of("freeze_cifar10"), st.where("cifar10", n=p.n),
                            f"Δ {p.text()}; {froze} of {rec} froze", f"+{CIFAR10_FREEZE_TEXT}",
                            rules.out_of_regime(verdict, in_regime, why), key="freeze:cifar10", in_regime=in_regime, n=p.n))
    for st in studies:
        rows += _freeze_observations(st)
    return rows


def _freeze_observations(st: Study) -> list[Row]:
    f = st.ctx.freeze
    rows = []
    if f.empty:
        return rows
    for d in dict.fromkeys(f.dataset):
        fd = f[(f.dataset == d) & (f.method == "autonorm_s") & f.enabled.map(truthy)]
        if fd.empty:
            continue
        froze = int(sum(truthy(x) for x in fd.froze))
        h = fnum(pd.to_numeric(fd.entropy_at_decision, errors="coerce").mean())
        comp = st.ctx.comparisons
        c = comp[(comp.dataset == d) & (comp.method_b == "autonorm") & (comp.holm_family == "primary")]
        eff = ""
        one, two = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
        if froze and len(c) and not one:
            p = Paired.of(c.iloc[0])
            eff = f"; AutoNorm-S − AutoNorm {c.iloc[0]['metric']}: Δ {p.text()}, {rules.difference_text(p)}"
        elif froze and len(c):
            # seeds whose AutoNorm-S is also their AutoNorm are one training: a difference of 0 by construction;
            # only the seeds trained twice measure the freeze
            eff = "; " + _freeze_effect(st, d, str(c.iloc[0]["metric"]), one, two)
        t_freeze = int(fd.t_freeze.iloc[0])
        rule = f"AutoNorm-S's freeze rule (T_freeze {t_freeze}, eps_H {fmt(fd.eps_h.iloc[0])})"
        if d != "mnist":
            claim = f"{pretty(d)}: {rule} in this study"
        elif t_freeze >= 5:
            claim = (f"MNIST: {rule}. If H -> 0 within 5 epochs (the paper), H is below eps_H at T_freeze and "
                     "AutoNorm-S never freezes on MNIST: its MNIST row is unfrozen AutoNorm")
        else:  # a decision before the paper's epoch 5: its "H -> 0 within 5 epochs" does not say how it goes
            claim = f"MNIST: {rule}, before the paper's epoch 5, so the paper's H -> 0 within 5 epochs does not decide it"
        rows.append(Row(claim, section_of("freeze_rule"), st.where(d, n=len(fd)),
                        f"{froze} of {len(fd)} seeds froze; mean H at the decision {fmt(h, 3)}{eff}", "–",
                        "observation", key=f"freeze_obs:{st.name}:{d}", observation=True))
    return rows


def _freeze_effect(st: Study, d: str, metric: str, one: list[int], two: list[int]) -> str:
    """AutoNorm-S − AutoNorm over the seeds trained as two runs only (analysis.trainings), per seed: the other
    seeds read AutoNorm-S's run as AutoNorm (its freeze did not fire), one training with nothing to compare."""
    v = (st.record or {}).get("values")
    per = {}
    if v is not None and not v.empty:
        x = v[(v.dataset == d) & (v.metric == metric) & v.method.isin(("autonorm_s", "autonorm"))]
        tab = x.pivot_table(index="seed", columns="method", values="value")
        per = {int(s): float(tab.loc[s, "autonorm_s"] - tab.loc[s, "autonorm"]) for s in two if s in tab.index}
    said = ", ".join(f"seed {s} {x:+.3g}" for s, x in per.items()) or "not in the record"
    return (f"AutoNorm-S − AutoNorm {metric} over the {len(two)} seed(s) trained as two runs: {said} (n={len(two)}; "
            f"seeds {', '.join(map(str, one))} did not freeze, so their AutoNorm-S run is also their AutoNorm: one "
            "training, nothing to compare)")


def freeze_principle_rows(studies: list[Study]) -> list[Row]:
    """The freeze rule against the design principle it implements: the rule fires where the entropy
    collapses slowly, which the paper's own definition calls non-stationary, while the principle
    asks to stabilise the gates where inputs are stationary. What our rule did, per dataset."""
    fired: dict[str, list[int]] = {}
    for st in studies:
        f = st.ctx.freeze
        if f.empty:
            continue
        for d in dict.fromkeys(f.dataset):
            fd = f[(f.dataset == d) & (f.method == "autonorm_s") & f.enabled.map(truthy)]
            if len(fd):
                tot = fired.setdefault(d, [0, 0, 0, 0])  # froze, seeds; the same at the paper's T_freeze
                at_paper = fd[pd.to_numeric(fd.t_freeze, errors="coerce") == AUTONORM.t_freeze]
                tot[0] += int(sum(truthy(x) for x in fd.froze))
                tot[1] += len(fd)
                tot[2] += int(sum(truthy(x) for x in at_paper.froze))
                tot[3] += len(at_paper)
    claim = (f"The freeze rule implements the design principle: the rule, {quote('freeze_rule')}; the principle, "
             f"{quote('principle')}; stationarity, {quote('stationary_def')}")
    if not fired:
        return [Row(claim, section_of("freeze_rule", "principle", "stationary_def"), "–", "–", "–",
                    f"not testable here: no study ran AutoNorm-S with its freeze rule; `{command_for('mnist')}`",
                    key="freeze_principle")]
    stationary = [d for d in fired if PAPER_STATIONARY.get(d) and d in STATIONARY_VISION]
    tabular = [d for d in fired if PAPER_STATIONARY.get(d) and d not in STATIONARY_VISION]
    measured = "; ".join(f"{pretty(d)} {a} of {b} seeds froze ({c} of {e} at T_freeze {AUTONORM.t_freeze})"
                         for d, (a, b, c, e) in fired.items())
    on = [sum(fired[d][i] for d in stationary) for i in range(4)]
    runs = ([f"it froze in {on[0]} of {on[1]} seeds on the paper's stationary vision datasets ({on[2]} of {on[3]} "
             f"at the paper's T_freeze {AUTONORM.t_freeze})"] if stationary else []) + \
        [f"{pretty(d)}, which the paper calls relatively stationary, {fired[d][0]} of {fired[d][1]}" for d in tabular]
    verdict = ("ill-defined: the paper gives slow collapse no measure. Read with the rule's own test (H still at "
               "or above eps_H at T_freeze), §3.1 calls every gate the rule freezes non-stationary, so the rule "
               "never constrains the stationary inputs the principle names; read as the abstract's gradient noise on "
               "stationary data (gates kept from converging by noise, not by the data), the rule freezes exactly "
               "those, and the two fit" + (f"; our runs: {'; '.join(runs)}" if runs else ""))
    return [Row(claim, section_of("freeze_rule", "principle", "stationary_def"), "every study with a freeze record",
                measured, "freezes where inputs are stationary", verdict, key="freeze_principle", in_regime=True)]


def learned_vs_random_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    """The abstract's claim, per study x stationary vision dataset x learned gate: learned minus
    random, paired by seed, expected negative; "outperform" is a difference the paper's words call
    meaningful, so the margin applies: excluding a random advantage of its size contradicts it. And
    its other half (section 1): on linguistic sequences the learned mechanism "worked effectively",
    read as learned above random (a direction of no stated size). One claim per dataset: a study's
    rows for its two learned gates (autonorm, autonorm_s) share a key, so the tally counts it once."""
    vision = (f"Random selectors outperform learned ones on stationary vision; the paper: "
              f"{quote('vision_bottleneck')}, {quote('random_abstract')}; {quote('random_intro')}")
    rows = _learned_minus_random(studies, reference, STATIONARY_VISION, vision,
                                 section_of("random_abstract", "random_intro"),
                                 lambda gate: Claim(-1, False, math.inf, (gate, "random"), ("random's advantage", "")),
                                 "below")
    rows += _cifar10_random_row(studies)
    # beyond the claim's scope: the paper's random-selector sentences are about vision; on tabular data, which it
    # calls relatively stationary, it says nothing of random gates, so our runs there are an observation
    tabular = (f"Beyond the paper's scope: learned against random gates on tabular data, which the paper calls "
               f"stationary ({quote('tabular_stationary')}) but of which its random-selector sentences say nothing")
    rows += _learned_minus_random(studies, reference, ("california_housing",), tabular,
                                  section_of("tabular_stationary"),
                                  lambda gate: Claim(+1, False, math.inf, (gate, "random"), ("random's advantage", ""),
                                                     higher_is_better=False), "learned worse", metric="rmse",
                                  observation=True)
    nlp = f"The learned gate works on linguistic sequences (above random); the paper: {quote('learned_linguistic')}"
    rows += _learned_minus_random(studies, reference, ("ptb_pos", "sst2"), nlp, section_of("learned_linguistic"),
                                  lambda gate: Claim(1, False, 0.0, (gate, "random"), ("the learned gate's advantage", "")),
                                  "above")
    return rows


def _learned_minus_random(studies, reference, datasets, claim, section, claim_for, paper_side,
                          metric: str = "accuracy", observation: bool = False) -> list[Row]:
    rows = []
    for st in studies:
        lr = st.ctx.learned_vs_random
        if lr.empty:
            continue
        lr = lr[lr.dataset.isin(datasets) & (lr.metric == metric)]
        twins = unfrozen_twins(st, lr)
        for r in lr.itertuples(index=False):
            c = r._asdict()
            if not fnum(c["n"]) or (r.dataset in twins and r.method_a == "autonorm"):
                continue  # random not finished (yet): nothing to read; or AutoNorm-S's twin, said once
            learned = "autonorm_s = autonorm (no seed froze: one training)" if (
                r.dataset in twins and r.method_a == "autonorm_s") else r.method_a
            p = Paired.of(c)
            m = rules.margin(metric, rules.paper_value(reference, r.dataset, "frozen_ln", metric))
            gate = "autonorm_s" if r.method_a == "autonorm_s" else "autonorm"
            verdict = rules.judge(p, claim_for(gate), m)
            # both arms by one band: the Random Selector has no paper number (no band, and no paper
            # difference: ours is read against 0), AutoNorm-S has one
            bands = {r.method_a: rules.arm_band(st.ctx.summary, reference, r.dataset, metric, r.method_a)}
            ahead = rules.ahead_of_paper(fnum(c.get("mean_a")), fnum(c.get("mean_b")), math.nan, math.nan,
                                         stats.higher_is_better(metric))
            verdict, band = rules.both_arms(verdict, bands, r.method_a, "random", ahead)
            in_regime, why = rules.study_regime(st, reference, r.dataset)
            verdict = rules.out_of_regime(verdict, in_regime, why)
            if observation:  # no claim of the paper: what the runs show, without a verdict word
                verdict = f"observation: {rules.difference_text(p)}; {pretty(r.dataset)}: {why}"
            rows.append(Row(f"{pretty(r.dataset)}: {claim}: {learned} − random", section,
                            st.where_gated(r.dataset, r.method_a, n=p.n),
                            f"Δ {p.text()}; over these seeds {r.method_a} {fmt(fnum(c.get('mean_a')))}, random "
                            f"{fmt(fnum(c.get('mean_b')))}" + (f" ({band})" if band else ""),
                            "no claim" if observation else f"{paper_side} (no {pretty(r.dataset)} number)",
                            verdict, key=f"random:{r.dataset}", in_regime=in_regime, n=p.n,
                            placement=st.placement(r.dataset, r.method_a), observation=observation))
    return rows


def _cifar10_random_row(studies) -> list[Row]:
    if first_study(studies, "cifar10", "random", "autonorm"):
        return []
    return [Row(f"CIFAR-10: unfrozen AutoNorm below the Random Selector; the paper: {quote('cifar10_random')}",
                section_of("cifar10_random"), "–", "–", "random 85.48 (text; no number for unfrozen AutoNorm)",
                f"not testable here ({WHY_GPU['cifar10']}): `{GPU_CMD.format(d='cifar10')}`", key="random:cifar10")]


def unfrozen_twins(st: Study, lr: pd.DataFrame) -> set[str]:
    """Datasets on which AutoNorm-S never froze and its paired differences against random equal
    unfrozen AutoNorm's: the same training (one run read under two names, analysis.trainings), or the same
    config trained twice to the same numbers (its freeze rule changes nothing when it does not fire), so the
    abstract's claim is one row there, not two that count twice."""
    f = st.ctx.freeze
    same = set()
    for d in dict.fromkeys(lr.dataset):
        rows = {r.method_a: r for r in lr[lr.dataset == d].itertuples(index=False)}
        a, b = rows.get("autonorm_s"), rows.get("autonorm")
        fd = f[(f.dataset == d) & (f.method == "autonorm_s")] if not f.empty else f
        if a is None or b is None or fd.empty or any(truthy(x) for x in fd.froze):
            continue
        one, two = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
        if (one and not two) or all(fnum(getattr(a, k)) == fnum(getattr(b, k)) for k in ("n", "mean_diff", "sd_diff")):
            same.add(d)
    return same


def twin_noise_rows(studies: list[Study]) -> list[Row]:
    """An observation per study where AutoNorm-S never froze and unfrozen AutoNorm was trained as a run of
    its own: the same config trained twice, so their per-seed difference is the noise floor of a paired Δ
    from the machine alone (the same numbers on one machine; apart where the two ran on different
    machines, as the record's provenance says). Only seeds trained as two runs (analysis.trainings): where
    AutoNorm-S is AutoNorm's run read under two names, or its freeze is disabled, there is one training."""
    rows = []
    for st in studies:
        rec = st.record
        if rec is None or rec["values"].empty:
            continue
        f, v, prov = st.ctx.freeze, rec["values"], rec["provenance"]
        for d in dict.fromkeys(v.dataset):
            fd = f[(f.dataset == d) & (f.method == "autonorm_s")] if not f.empty else f
            if fd.empty or any(truthy(x) for x in fd.froze) or not any(truthy(x) for x in fd.enabled):
                continue  # a freeze that fired changes the training; a disabled one makes AutoNorm-S AutoNorm
            acc = v[(v.dataset == d) & (v.metric == "accuracy") & v.method.isin(("autonorm_s", "autonorm"))]
            per = acc.pivot_table(index="seed", columns="method", values="value").dropna()
            if per.empty or not {"autonorm_s", "autonorm"} <= set(per.columns):
                continue
            _, twice = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
            per = per.loc[[s for s in per.index if int(s) in twice]]  # one training read twice measures nothing
            if per.empty:
                continue
            where = {(m, int(s)): (str(p) if isinstance(p, str) else "?") + (f", {c}" if isinstance(c, str) else "")
                     for m, s, p, c in zip(prov.method, prov.seed, prov.platform, prov.cpu)}
            diffs = per["autonorm_s"] - per["autonorm"]
            same = [s for s in per.index if where.get(("autonorm_s", s)) == where.get(("autonorm", s))]
            apart = [s for s in per.index if s not in same]
            apart_s = (f"on different machines (seeds {', '.join(map(str, apart))}): up to "
                       f"{diffs[apart].abs().max():.2f} points" if apart else "no seed ran on two machines")
            same_s = (f"on one machine (seeds {', '.join(map(str, same))}): up to {diffs[same].abs().max():.2f}"
                      if same else "no seed ran twice on one machine")
            rows.append(Row(f"{pretty(d)}: the same config trained twice (AutoNorm-S, whose freeze never fired, and "
                            "unfrozen AutoNorm): the noise floor of a paired Δ from the machine alone",
                            "ours", st.where(d, n=len(per)),
                            "AutoNorm-S − AutoNorm test accuracy per seed: "
                            + ", ".join(f"{x:+.2f}" for x in diffs) + f"; {same_s}; {apart_s}", "–",
                            f"observation: identical where the two ran on one machine; {apart_s} (the record's "
                            "platform and CPU per run): a paired difference this small is within what the machine "
                            "alone moves", key=f"twin_noise:{st.name}:{d}", observation=True))
    return rows


def not_tuned_rows(studies: list[Study]) -> list[Row]:
    """§3.4: T_freeze 10 and eps_H 0.1 are one setting for every vision dataset, "not tuned per dataset", and
    the freeze experiment "validates this choice": a claim about the freeze schedule's variants."""
    ran = [st for st in studies if not st.ctx.ablations.empty
           and st.ctx.ablations.axis.astype(str).isin(("t_freeze", "eps_h")).any()]
    claim = (f"One freeze setting for every vision dataset, validated by the freeze experiment; the paper: "
             f"{quote('not_tuned')}; {quote('freeze_validates')}")
    if ran:
        return [Row(claim, section_of("not_tuned", "freeze_validates"), ", ".join(st.name for st in ran),
                    "the freeze-schedule variants are in the ablation rows", "–",
                    "inconclusive: the paper's validation is its CIFAR-10 freeze gain (a GPU dataset); the variants "
                    "we ran are in the ablation rows", key="freeze:not_tuned")]
    return [Row(claim, section_of("not_tuned", "freeze_validates"), "–", "–", "T_freeze 10, eps_H 0.1",
                f"not testable here: no study ran the freeze-schedule variants (t_freeze_5/20, eps_h_0_05/0_2) on the "
                f"paper's vision datasets; `{ABLATION_GPU_CMD}`", key="freeze:not_tuned")]
