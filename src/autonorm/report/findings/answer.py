"""The answer, first: what the paper's design gave here, in plain sentences (the README's findings block and
the head of docs/findings.md), and the scorecard of each study in the paper's regime (report.scorecard).

The block is written from the records, never cut: it says, in at most :data:`MAX_LINES` lines and
:data:`MAX_CHARS` characters, what was trained where; AutoNorm-S against LayerNorm per dataset in the
paper's regime; learned gates against random ones; where the gates go; what could not be tested; and the
counts, last, with the link to the page. Each finding gives our number with its interval first and the
paper's beside it. A block that would pass its limits is an error (:class:`BlockTooLong`), not a cut.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from autonorm.report import scorecard
from autonorm.report.context import rows_where
from autonorm.report.findings import rules
from autonorm.report.findings.rows import Row, counted_claims
from autonorm.report.findings.rules import Paired
from autonorm.report.findings.studies import Study
from autonorm.report.fmt import fmt, fnum, pretty

#: the block's limits: a reader takes it in within a minute
MAX_LINES, MAX_CHARS = 6, 1600
#: how much a line says: every number beside the paper's (FULL), ours with the verdict word (SHORT), counts only
FULL, SHORT, COUNTS = 2, 1, 0
#: words the block may not use: each needs the page's glossary (a test reads the block for them)
JARGON = ("H ", "H=", "w_LN", "w_DyT", "TOST", "Holm", " of 5)", "n=", "eps_H", "T_freeze", "frozen_ln")


class BlockTooLong(ValueError):
    """The answer block would pass its limits: choose what to say; a cut sentence is never written."""


@dataclass(frozen=True)
class InRegime:
    """One study's dataset in the paper's regime, with the numbers the answer reads."""
    study: Study
    dataset: str
    metric: str


def in_regime(studies: list[Study], reference: pd.DataFrame) -> list[InRegime]:
    """Every (study, dataset) in the paper's regime (rules.study_regime), on its card's metric, in the
    order of the paper's tables."""
    order = {d: i for i, d in enumerate(dict.fromkeys(reference.dataset))}
    best: dict[str, tuple[int, InRegime]] = {}
    for st in studies:
        s = st.ctx.summary
        for d in dict.fromkeys(s.dataset) if not s.empty else []:
            ok, _ = rules.study_regime(st, reference, d)
            c = scorecard.card(s, d)
            if not ok or c is None or len(c.lines) < 2:
                continue  # a pilot's one method compares nothing
            # one study a dataset: the one with the most paired seeds of AutoNorm-S and frozen_ln
            p = _paired(st, st.ctx.comparisons, d, c.metric, "autonorm_s", "frozen_ln")
            n = p.n if p is not None else 0
            if d not in best or n > best[d][0]:
                best[d] = (n, InRegime(st, d, c.metric))
    return sorted((r for _, r in best.values()), key=lambda r: order.get(r.dataset, len(order)))


def design(st: Study, d: str) -> str:
    """'8 x 128, patch 4' from the study's run config."""
    model = (st.run_config(d, "autonorm_s") or st.run_config(d, "frozen_ln")).get("model") or {}
    size = f"{model.get('depth', '?')} x {model.get('dim', '?')}"
    return size + (", 4 x 4 patches" if int(model.get("patch_size") or 0) == 4 else
                   (f", patch {model['patch_size']}" if model.get("patch_size") else ""))


def cards(studies: list[Study], reference: pd.DataFrame) -> list[scorecard.Card]:
    """The scorecard of each study's dataset in the paper's regime, titled with the study and its design."""
    out = []
    for r in in_regime(studies, reference):
        c = scorecard.card(r.study.ctx.summary, r.dataset, title=f"{r.study.name}: {design(r.study, r.dataset)}")
        if c is not None:
            out.append(c)
    return out


def _paired(st: Study, table: pd.DataFrame, d: str, metric: str, a: str, b: str) -> Paired | None:
    if table.empty:
        return None
    c = rows_where(table, dataset=d, metric=metric, method_a=a, method_b=b)
    return Paired.of(c.iloc[0]) if len(c) else None


def _tested(regime: list[InRegime], table: str, other: str):
    """(each dataset in the regime, AutoNorm-S against ``other`` there) from the study's ``table`` (comparisons,
    learned_vs_random), where a paired test has the seeds."""
    for r in regime:
        p = _paired(r.study, getattr(r.study.ctx, table), r.dataset, r.metric, "autonorm_s", other)
        if p is not None and p.testable:
            yield r, p


def _ci(p: Paired, digits: str = ".2g") -> str:
    lo, hi = p.ci()
    return f"{p.diff:+{digits}} (95% CI {lo:+{digits}} to {hi:+{digits}})"


def _cpus(studies: list[InRegime]) -> str:
    """'2-core Intel Xeon CPUs', from the records' provenance (the CPU names without their marks)."""
    names = set()
    for r in studies:
        prov = (r.study.record or {}).get("provenance")
        if prov is not None and "cpu" in prov:
            for c in prov["cpu"].dropna().astype(str):
                names.add(" ".join(re.sub(r"\(R\)|\(TM\)|Processor|@.*|,.*", "", c).split()))
    names.discard("")
    return (" and ".join(sorted(names)) + " CPUs") if names else "CPUs"


def what_was_trained(regime: list[InRegime], detail: int = FULL) -> str:
    if not regime:
        return "No study here has reached the paper's design yet: every row is out of its regime."
    seeds = sorted({max(r.study.planned_seeds, int(fnum(r.study.ctx.summary["n"].max()) or 0)) for r in regime})
    parts = [f"{pretty(r.dataset)}" + (f" ({design(r.study, r.dataset)})" if detail == FULL else "") for r in regime]
    return (f"We trained the paper's own design, one gate per block, on {_and(parts)}, "
            f"{'/'.join(map(str, seeds))} seeds a method, on {_cpus(regime)} (no GPU).")

#: how a counted verdict reads after the paper's number, in the block
SAYS = {"reproduced": "which our runs reproduce", "contradicted": "which our runs contradict"}
WHAT_AUTONORM_S = "AutoNorm-S, the paper's learned gate between LayerNorm and DyT (a tanh norm),"


def versus_layernorm(regime: list[InRegime], reference: pd.DataFrame, rows: list[Row] = (),
                     detail: int = FULL) -> str:
    """AutoNorm-S against LayerNorm on each dataset in the regime: ours with its interval, the paper's beside,
    with the counted verdict of the paper's claim; at COUNTS detail, how many datasets read each verdict."""
    said, significant, words = [], [], []
    for r, p in _tested(regime, "comparisons", "frozen_ln"):
        st, d, m = r.study, r.dataset, r.metric
        c = rows_where(st.ctx.comparisons, dataset=d, metric=m, method_a="autonorm_s", method_b="frozen_ln").iloc[0]
        pa, pb = (rules.paper_value(reference, d, x, m) for x in ("autonorm_s", "frozen_ln"))
        what = "accuracy" if m == "accuracy" else "RMSE (lower is better)"
        word = next((x.word for x in counted_claims(list(rows)) if x.claim_key == f"main:{d}:{m}:frozen_ln"), "")
        words.append(word)
        paper = ""
        if math.isfinite(pa) and math.isfinite(pb):
            says = SAYS.get(word, "which our runs neither confirm nor rule out")
            paper = f"; the paper: {fmt(pa)} vs {fmt(pb)}, {says}" if detail == FULL else f", the paper's {says[6:]}"
        said.append(f"on {pretty(d)}, {what} {fmt(fnum(c['mean_a']))} vs {fmt(fnum(c['mean_b']))}, "
                    f"a difference of {_ci(p)}{paper}")
        significant.append(math.isfinite(p.p_holm) and p.p_holm < 0.05)
    if not said:
        return ""
    if detail == COUNTS:
        tally = ", ".join(f"{words.count(w)} {w or 'inconclusive'}" for w in dict.fromkeys(words))
        return (f"{WHAT_AUTONORM_S} against plain LayerNorm on the {len(said)} datasets in the paper's regime: the "
                f"paper's comparison reads {tally}; the scorecard below sets each dataset's numbers beside the "
                "paper's.")
    head = (f"{WHAT_AUTONORM_S} shows no difference from plain LayerNorm" if not any(significant) else
            f"{WHAT_AUTONORM_S} against plain LayerNorm")
    return head + ": " + "; ".join(said) + "."


def learned_vs_random(regime: list[InRegime], reference: pd.DataFrame, detail: int = FULL) -> str:
    """The learned gate against the random one, where the paper's claim is (vision) and beyond it."""
    from autonorm.report.findings.gate_rows import PAPER_STATIONARY

    said, beyond, signs = [], [], []
    for r, p in _tested(regime, "learned_vs_random", "random"):
        st, d, m = r.study, r.dataset, r.metric
        better = p.diff > 0 if stats_higher(m) else p.diff < 0
        signs.append(("ahead" if better else "behind") if math.isfinite(p.p_holm) and p.p_holm < 0.05 else "tied")
        (said if st.ctx.ds_family.get(d) == "vision" and PAPER_STATIONARY.get(d) else beyond).append((d, m, p))
    if not signs:
        return ""
    beat = all(x == "ahead" for x in signs)

    def text(d: str, m: str, p: Paired) -> str:
        if beat:  # the size of the learned gate's lead, in its own words
            lo, hi = sorted(abs(x) for x in p.ci())
            unit = "accuracy points" if m == "accuracy" else "RMSE lower"
            return f"{pretty(d)} by {abs(p.diff):.2g} {unit} (95% CI {lo:.2g} to {hi:.2g})"
        return f"{pretty(d)}, learned minus random {_ci(p)} {'accuracy points' if m == 'accuracy' else 'RMSE'}"

    said, beyond = [text(*x) for x in said], [text(*x) for x in beyond]
    if detail == COUNTS:
        return (f"Learned gates against random ones on the {len(signs)} datasets in the paper's regime: learned "
                f"significantly ahead on {signs.count('ahead')}, behind on {signs.count('behind')}, no difference "
                f"shown on {signs.count('tied')}; the paper reports the random gate often ahead on vision.")
    out = "Learned gates beat random ones" if beat else "Learned gates against random ones"
    if said:
        out += f": on {_and(said)}, where the paper reports the random gate often ahead on vision"
    if beyond:
        out += f"{'; and' if said else ':'} on {_and(beyond)}, where the paper makes no such claim"
    return out + "."


def stats_higher(metric: str) -> bool:
    from autonorm.analysis import stats

    return stats.higher_is_better(metric)


def gates_go(regime: list[InRegime], detail: int = FULL) -> str:
    """Where the gates end: their mean weight on LayerNorm at the last epoch, per dataset in the regime."""
    said, values = [], []
    for r in regime:
        g = r.study.ctx.gates
        g = g[(g.dataset == r.dataset) & (g.method == "autonorm_s")] if not g.empty else g
        if g.empty:
            continue
        last = g[g.epoch == g.groupby("seed").epoch.transform("max")]
        values.append(float(last.w_ln.mean()))
        said.append(f"{values[-1]:.2f} on {pretty(r.dataset)}")
    if not said:
        return ""
    shown = _and(said) if detail != COUNTS or len(said) < 3 else \
        f"between {min(values):.2f} and {max(values):.2f} over {len(values)} datasets"
    return f"Where the gates go: LayerNorm's mean weight at the last epoch is {shown} (out of 1; the rest goes to DyT)."


def not_tested(studies: list[Study], regime: list[InRegime], reference: pd.DataFrame, detail: int = FULL) -> str:
    """The paper's datasets with no in-regime study: never run (with why), or run only outside its regime."""
    paper_sets = list(dict.fromkeys(reference.dataset))
    done = {r.dataset for r in regime}
    ran = {d for st in studies for d in (set(st.ctx.summary.dataset) if not st.ctx.summary.empty else set())}
    never = [pretty(d) for d in paper_sets if d not in done and d not in ran]
    outside = [pretty(d) for d in paper_sets if d not in done and d in ran]
    parts = []
    if never:
        parts.append(f"{_and(never)} were not run (they need a GPU and downloads)")
    if outside:
        parts.append(f"{_and(outside)} ran only outside it: smaller, short of the paper's accuracy or without a "
                     "comparable paper number, so their rows decide nothing" if detail == FULL else
                     f"{_and(outside)} ran only outside it")
    return ("Not tested in the paper's regime: " + "; ".join(parts) + ".") if parts else ""


def counts(rows: list[Row]) -> str:
    claims = counted_claims(rows)
    by: dict[str, int] = {}
    for r in claims:
        by[r.word] = by.get(r.word, 0) + 1
    listed = ", ".join(f"{n} {w}" for w, n in sorted(by.items(), key=lambda kv: -kv[1]))
    return (f"Over {len(claims)} statements of the paper: {listed}. Every row, its rule and the terms: "
            "[docs/findings.md](docs/findings.md).")


def answer_block(studies: list[Study], reference: pd.DataFrame, rows: list[Row]) -> str:
    """The README's findings block (and the page's head): one line a finding, counts last, each line as detailed
    as the limits allow (every number beside the paper's, then ours with the verdict word, then counts: a
    block of many datasets in the paper's regime, as a GPU run of the whole grid gives, says less of each);
    raises :class:`BlockTooLong` where even the counts pass :data:`MAX_LINES` lines or :data:`MAX_CHARS`
    characters."""
    regime = in_regime(studies, reference)
    block = ""
    for detail in (FULL, SHORT, COUNTS):
        lines = [x for x in (what_was_trained(regime, detail), versus_layernorm(regime, reference, rows, detail),
                             learned_vs_random(regime, reference, detail), gates_go(regime, detail),
                             not_tested(studies, regime, reference, detail), counts(rows)) if x]
        block = "\n".join(f"- {x}" for x in lines)
        if len(block) <= MAX_CHARS and len(lines) <= MAX_LINES:
            return block
    return check_block(block)


def check_block(block: str) -> str:
    """``block`` itself, or :class:`BlockTooLong` naming the limit it passes."""
    n_lines, n_chars = block.count("\n") + 1, len(block)
    if n_lines > MAX_LINES or n_chars > MAX_CHARS:
        raise BlockTooLong(f"the findings block has {n_lines} lines and {n_chars} characters, past its "
                           f"{MAX_LINES} lines and {MAX_CHARS} characters: say less (report.findings.answer), "
                           "never cut a sentence")
    return block


def _and(items: list[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
