"""The findings page: every claim of the paper, where we tested it, what came out.

    autonorm-report --findings                       # every study record under studies/
    autonorm-report --findings --study depth=results/depth --out docs/findings.md --figures-dir docs/findings

It reads the studies that exist (the committed records under ``studies/``, then the results folders
of report.findings.studies.STUDIES that have no record) and writes ``docs/findings.md``: a claims
ledger (one row per claim of the paper and study that tested it, each claim counted once) and the
figures that carry the evidence in ``docs/findings/``. The rows come from the ``*_rows`` modules
of this package, judged by report.findings.rules.
"""
from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from autonorm.io_utils import write_text_atomic
from autonorm.report import scorecard
from autonorm.report.findings import (ablation_rows, answer, cost_rows, gate_rows, main_table, paper_rows,
                                      routing_rows, rules, statement_rows)
from autonorm.report.findings.figures import draw_figures
from autonorm.report.findings.rows import Row, counted_rows, tally
from autonorm.report.findings.rules import MARGIN_SHARE, VERDICTS
from autonorm.report.findings.studies import STUDIES, Study, find_studies
from autonorm.report.fmt import md_table, pretty

#: the ledger's sections: (title, the function that builds its rows from (studies, reference))
SECTIONS = (
    ("Main results (the paper's Tables 1-4)", lambda s, r: main_table.main_table_rows(s, r)
     + main_table.ptb_perplexity_rows(s, r) + gate_rows.rotation_chance_rows(s, r)
     + main_table.within_ci_general_rows(s, r) + statement_rows.main_result_rows(s, r)),
    ("The paper's numbers on their own (docs/method.md section 8)", lambda s, r: paper_rows.paper_arithmetic_rows(s, r)
     + statement_rows.number_rows(s, r)),
    ("The central claim: does learned routing converge? (abstract, sections 3.1, 4.6)",
     lambda s, r: gate_rows.central_claim_rows(s, r) + gate_rows.stationarity_rows(s, r)
     + gate_rows.untested_class_rows(s) + statement_rows.central_rows(s, r)),
    ("What the gates learn (sections 3.2-3.3, 4.3-4.7)", lambda s, r: gate_rows.mechanism_rows(s, r)
     + gate_rows.sst2_collapse_rows(s, r) + gate_rows.fig4_rows(s, r) + gate_rows.unmeasured_mechanism_rows()
     + statement_rows.gate_statement_rows(s, r)),
    ("Freezing (sections 3.4, 4.6, 4.7)", lambda s, r: routing_rows.freeze_rows(s, r)
     + routing_rows.freeze_principle_rows(s) + routing_rows.not_tuned_rows(s) + routing_rows.twin_noise_rows(s)),
    ("Learned gates against random ones (abstract, sections 1, 4.1)", routing_rows.learned_vs_random_rows),
    ("Ablations (sections 3.6.2, 4.4, 4.7)", lambda s, r: ablation_rows.ablation_rows(s, r)
     + ablation_rows.tau_blend_rows(s, r) + statement_rows.ablation_statement_rows(s, r)),
    ("Cost (sections 3.5, 4.6)", lambda s, r: cost_rows.overhead_rows(s) + cost_rows.benchmark_rows(cost_rows.load_benchmark())
     + cost_rows.time_rows(s) + statement_rows.cost_statement_rows(s, r)),
    ("The conclusion's interpretations (section 5)", statement_rows.conclusion_rows),
)

GLOSSARY = [
    "**The paper's regime**: a study trains every element of the setup the paper states (its backbone's depth "
    "for the family and width 128; on vision its 4 x 4 patch) and its LayerNorm model (frozen_ln) is within 2 "
    "accuracy points (10% of an RMSE) of the paper's FrozenLN and at least half as far above the trivial baseline "
    "as the paper's; only there can a claim be reproduced or contradicted. A row out of it names what differs and "
    "says what its runs say. **Placement**: one selector per block is the paper's design and its rows are counted; "
    "one per sub-layer is our alternative reading, and its rows support.",
    f"**The margin**: {100 * MARGIN_SHARE:g}% of the paper's FrozenLN value (0.395 accuracy points on MNIST), from the "
    "smallest difference the paper calls an improvement (distillation's 0.4%, which the paper gives for a "
    "validation stability it does not define; read here as relative): the margin of a stated equivalence, and the "
    "size of a meaningful difference the paper states without a number. **The paper's spread**: a stated number "
    "is held with the paper's own ± SD over its 5 seeds and ours together; one its own spread cannot tell from zero "
    "contradicts nothing; one printed with no spread is held as exact, and the row says so. **One claim, one "
    "verdict**: a table's other columns of the same runs (precision, recall, F1; MAE) are parts of its primary "
    "metric's claim.",
    "**Δ [a, b]**: the first method minus the second, paired by seed, with its 95% t-interval (unadjusted, "
    "printed). **One level**: every decision is at familywise 5% over the claim's family of k tests: a sign by "
    "Holm's p, an exclusion or an equivalence from the same family's interval at one-sided 0.05/k (Bonferroni; the "
    "90% interval for a family of one). p (Holm, k tests) is corrected over the claim's family; a family of one "
    "prints its p as one test. "
    "**AutoNorm-S** is AutoNorm whose gates freeze at epoch T_freeze if their mean entropy H is still at least "
    "eps_H; unfrozen **AutoNorm** never freezes. **TOST**: two one-sided t-tests at the margin. **Both arms by one "
    "band**: an arm (AutoNorm-S or a baseline) outside the band frozen_ln must meet of the paper's number for it, "
    "below or above, decides nothing where its deviation points the way the result went.",
    "**Test, not validation**: the paper's tables head their columns \"Val Acc\" and \"V-RMSE\" without naming "
    "the split; ours are test-split metrics (the official test sets, never used for a choice), set beside the "
    "paper's numbers as they are. Our validation split is held out of the training set. **Cost**: counted from "
    "the interleaved benchmark's record (benchmarks/records/cost_claims.json); the trainings' wall times support.",
]


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _code_changes(out: Path, figures_dir: Path) -> list[str]:
    """Tracked files changed since the commit, other than this page and its figures."""
    top = _git("rev-parse", "--show-toplevel")
    if not top:
        return []
    own = {out.resolve(), figures_dir.resolve()}
    changed = []
    for line in _git("status", "--porcelain", "--untracked-files=no").splitlines():
        path = (Path(top) / line[2:].lstrip().split(" -> ")[-1].strip('"')).resolve()
        if not any(path == o or o in path.parents for o in own):
            changed.append(str(path))
    return changed


def ledger(studies: list[Study], reference: pd.DataFrame) -> list[tuple[str, list[Row]]]:
    """The ledger's sections with their rows, every claim counted once across them."""
    built = [(title, build_rows(studies, reference)) for title, build_rows in SECTIONS]
    # the seed rule, once for every row (a row's n is the fewest seeds of a method it reads), at the
    # seeds its study planned where the study declares them
    planned = {st.name: st.planned_seeds for st in studies}
    flat = counted_rows([replace(r, verdict=rules.decided_from_seeds(r.verdict, r.n, planned.get(study_of(r, planned), 0)))
                         for _, rows in built for r in rows])
    out, i = [], 0
    for title, rows in built:
        out.append((title, flat[i:i + len(rows)]))
        i += len(rows)
    return out


def study_of(row: Row, names) -> str | None:
    """The study a row was read from: Study.where begins every study row's ``where`` with "<name>: "
    (rows of the paper's own numbers or of a benchmark name none)."""
    return next((name for name in names if row.where.startswith(f"{name}: ")), None)


def _made_by(studies: list[Study], out: Path, figures_dir: Path, command: str) -> str:
    if all(st.record is not None for st in studies):
        # from committed records only: the page is a function of them (and of this code)
        return ("Generated by `autonorm-report --findings` from the study records "
                + ", ".join(f"`{st.root.as_posix()}`" for st in studies)
                + (f" and the benchmark record `{cost_rows.BENCHMARK_RECORD.as_posix()}`"
                   if cost_rows.BENCHMARK_RECORD.is_file() else "") + f". Command: `{command}`.")
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = " (with uncommitted changes)" if _code_changes(out, figures_dir) else ""
    return ("Generated by `autonorm-report --findings` from the studies' results folders. "
            f"Commit {commit}{dirty}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, on "
            f"{platform.machine()} {platform.system()} (Python {platform.python_version()}). Command: `{command}`.")


def _record_lines(st: Study) -> list[str]:
    """A recorded study's parts as read, each with its finished runs (every input of the verdicts
    in sight), and the runs it repeats of another study, as declared."""
    if st.record is None:
        return []
    lines = ["  - parts read (finished runs): " + ", ".join(f"`{name}` {n}" for name, n in st.record["parts"]) + "."]
    lines += _cpu_lines(st.record.get("provenance"), st.same_floats)
    if st.repeats:
        from autonorm.analysis.study_folders import DECLARATION

        runs = "; ".join(f"{own} is {src}'s {theirs}" + _same_or_not(st.repeat_differences.get(own))
                         for own, src, theirs in st.repeats)
        sources = ", ".join(dict.fromkeys(src for _, src, _ in st.repeats))
        read = ("the claims and figures read it without them" if st.without_repeats is not None
                else "the claims and figures do not read it")
        lines.append(f"  - repeats (declared in `{(st.root / DECLARATION).as_posix()}`): {runs}; counted once, "
                     f"in {sources}: {read}.")
    if st.baseline:
        lines.append(f"  - pairs with {st.baseline['study']}'s {', '.join(st.baseline['methods'])} runs (declared): its "
                     "repeat of one of them shows that its code computes them alike.")
    return lines


def _cpu_lines(prov, same_floats=()) -> list[str]:
    """The CPU types its runs trained on, with their counts: a paired Δ between runs of two CPU types
    carries the machine's own float rounding, so a reader must see where a study mixes them, and whether
    the study checked that its CPU types train its runs to the same floats (study.json, checked on load)."""
    if prov is None or prov.empty:
        return []
    cpu = (prov["cpu"] if "cpu" in prov else pd.Series([None] * len(prov), dtype=object)).astype(object)
    cpu = cpu.where(cpu.notna() & (cpu.astype(str).str.strip() != ""), UNRECORDED_CPU)
    counts = cpu.value_counts()
    named = ", ".join(f"`{c}` {n}" if c != UNRECORDED_CPU else f"{c} {n}" for c, n in counts.items())
    # the thread count rounds floats as a CPU type does (a study holds one: load refuses two); named where not 1
    threads = sorted({int(t) for t in prov["torch_threads"].dropna()}) if "torch_threads" in prov else []
    named += f", at {threads[0]} threads a run" if len(threads) == 1 and threads != [1] else ""
    if len(counts) < 2:
        return [f"  - CPUs of its runs: {named}."]
    if same_floats and UNRECORDED_CPU not in counts:  # load refused CPU types no check joins
        checks = "; ".join(f"{c['run']} trained again on `{c['cpu']}` gave the record's losses to every digit at "
                           f"epoch{'s' if len(c['epochs']) > 1 else ''} "
                           f"{', '.join(str(e['epoch']) for e in c['epochs'])}" for c in same_floats)
        return [f"  - CPUs of its runs: {named} ({len(counts)} CPU types, checked for the same floats and paired "
                f"across: {checks} (study.json); a check of some epochs of one run, not a proof for every run)."]
    mixed = (" (more than one CPU type, or runs that name none: a paired Δ may span two machines, whose float "
             "rounding alone moves it; the noise-floor observation below measures how much)")
    return [f"  - CPUs of its runs: {named}{mixed}."]


#: runs of older code whose env.json names no CPU (the study's README names the machine)
UNRECORDED_CPU = "not recorded (older code; the study's README names the machine)"


def _same_or_not(diffs: list | None) -> str:
    if diffs is None:
        return ""
    return (" (the same in every recorded number: per-epoch losses, validation metric, test metrics; times aside)"
            if not diffs else f" (differs: {'; '.join(diffs[:3])})")


def _studies_read(studies: list[Study]) -> list[str]:
    lines = []
    for st in studies:
        runs = st.ctx.runs
        ok = runs[runs.status == "ok"] if not runs.empty else runs
        n_ok = len(ok)
        # a seed read through another method's run (the same training) points at that run's folder
        n_read = n_ok - int(ok.path.nunique()) if n_ok and "path" in ok else 0
        src = ""
        if st.record is not None:
            mans = st.record["manifests"]
            commits = ", ".join(dict.fromkeys(str(m.get("commit") or "?")[:7] for m in mans))
            dates = ", ".join(dict.fromkeys(str(m.get("recorded_utc", "?"))[:10] for m in mans))
            src = f", recorded in {len(mans)} part(s) at commit {commits} on {dates}"
        read = (f" (and {n_read} seed(s) of another method read through one of them: the same training)"
                if n_read else "")
        plan = (f"; its plan: {st.planned_seeds} seeds of each method (study.json), and its rows are decided at "
                f"that many" if st.planned_seeds else "")
        lines.append(f"- **{st.name}** (`{st.root.as_posix()}`{src}): {n_ok - n_read} finished runs{read}; datasets "
                     f"{', '.join(pretty(d) for d in dict.fromkeys(st.ctx.summary.dataset))}{plan}.")
        lines += _record_lines(st)
    missing = [n for n, _, _ in STUDIES if n not in {s.name for s in studies}]
    if missing:
        lines.append(f"- not found here (no record, no results folder): {', '.join(missing)}. An earlier page built "
                     "from their unrecorded results folders, before the verdict rules, is kept for its numbers: "
                     "docs/history/findings-2026-12-01.md.")
    return lines


def build(studies: list[Study], out: Path, figures_dir: Path, command: str, with_block: bool = False):
    """The page (and, ``with_block``, the README's findings block beside it)."""
    from autonorm.analysis.collect import load_reference

    reference = load_reference(None)
    # the claims and figures read each run once: a study without the runs it repeats (declared)
    judged = [j for st in studies if (j := st.judged()) is not None]
    sections = ledger(judged, reference)
    all_rows = [r for _, rs in sections for r in rs]
    drawn = draw_figures(judged, reference, figures_dir)
    rel = Path(os.path.relpath(figures_dir.resolve(), out.parent.resolve()))
    recorded = all(st.record is not None for st in studies)
    block = answer.answer_block(judged, reference, all_rows)
    cards = answer.cards(judged, reference)
    lines = ["# Findings: what holds of the AutoNorm paper here", "",
             "## The answer", "", page_block(block), "",
             "## Scorecard: the paper's numbers beside ours, where we trained its design", "",
             "Each method's test metric on each dataset we trained at the paper's design and in its regime: the "
             "paper's mean ± SD over its 5 seeds, ours as mean ± SD with its 95% CI and n, and each method's "
             "difference from frozen_ln (LayerNorm), ours and the paper's (differences of the means; the paired "
             "tests are in the ledger below).", ""]
    for c in cards:
        lines += [scorecard.card_table(c), ""]
    if scorecard.draw(cards, figures_dir / SCORECARD_PNG):
        lines += [f"![{SCORECARD_PNG}]({(rel / SCORECARD_PNG).as_posix()})", "", scorecard.CAPTION, ""]
    else:
        (figures_dir / SCORECARD_PNG).unlink(missing_ok=True)
        lines += ["No study has reached the paper's design yet.", ""]
    lines += ["## How this page is made", "", _made_by(studies, out, figures_dir, command), "",
             ("The page is a function of the committed study records under `studies/` and of the code: "
              "`autonorm-report --findings` rebuilds it in seconds, byte for byte. A claim gains evidence when a "
              "study is run and recorded (README \"Study records\"); each row names the study it rests on."
              if recorded else
              "**These numbers and figures are a snapshot.** They go stale when the code, a preset or the data "
              "change. To regenerate: run the studies (Snakemake resumes what exists), record them (README \"Study "
              "records\") and then `autonorm-report --findings`."), "",
             "Studies read (a claim tested in several studies has a row in each; it is counted once, by the row of "
             "its best evidence: in the paper's regime, then the paper's placement of the selectors, then the most "
             "seeds; the others are supporting rows; a cost claim is counted from the interleaved benchmark's record, "
             "`benchmarks/records/cost_claims.json`, and never from a training's wall time):", ""]
    lines += _studies_read(studies)
    lines += ["", f"In one line: {tally(all_rows)}.", ""] + [f"- {g}" for g in GLOSSARY] + [""]
    # every study's accuracy, repeats included; a study that pairs with another's baseline runs (declared)
    # is shown with them, as its claims read it
    learned = main_table.learning_rows([(st.judged() or st) if st.baseline else st for st in studies], reference)
    if learned:
        lines += ["How far each study's models got (test metric, mean over seeds; a best of fewer seeds than the "
                  "study's most names its n) beside the paper's: every verdict below is about that configuration, not "
                  "the paper's.", "",
                  md_table(["study", "dataset", "metric", "best of ours", "frozen_ln (ours)",
                            "paper frozen_ln / AutoNorm-S", "trivial baseline", "in the paper's regime",
                            "at or below trivial"], learned), "",
                  "† not comparable: docs/method.md section 8.", ""]
    lines += ["## Claims ledger", "",
              "Each row: the claim, with the paper's own words in quotation marks; where the paper says it; where we "
              "tested it (study, dataset, model depth x width, epochs, training examples, n seeds); our number (a "
              "paired difference: reference minus other, its 95% CI, and the means over the same seeds) and the "
              "paper's; the verdict, by the rules of docs/method.md section 11.", ""]
    for title, rs in sections:
        lines += [f"### {title}", "", md_table(["claim", "the paper", "where tested", "ours", "paper", "verdict"],
                                                [r.cells() for r in rs]), ""]
    lines += ["Verdicts:", ""] + [f"- **{k}**: {v}." for k, v in VERDICTS.items()] + [""]
    if drawn:
        lines += ["## Figures", ""]
        for name, caption in drawn:
            lines += [f"![{name}]({(rel / name).as_posix()})", "", caption, ""]
    return ("\n".join(lines), block) if with_block else "\n".join(lines)


#: the scorecard's picture, beside the page's other figures
SCORECARD_PNG = "scorecard.png"


def page_block(block: str) -> str:
    """The README's block as the page's head: its link to the page points into the page itself."""
    return block.replace("[docs/findings.md](docs/findings.md)", "the [claims ledger](#claims-ledger) below")


def short_of_plan(st: Study) -> list[tuple[str, int]]:
    """The methods of a study's grid with fewer finished seeds than its plan (study.json), each with its
    finished seeds; empty where the study declares no plan or every method has its seeds. The rows that read
    such a method are interim (rules.decided_from_seeds); the others may decide."""
    if not st.planned_seeds:
        return []
    s = st.ctx.summary
    have = s.groupby("method")["n"].max().to_dict() if not s.empty else {}
    grid = ((st.record or {}).get("grid") or {}).get("methods") or list(have)
    return [(m, int(have.get(m, 0))) for m in grid if have.get(m, 0) < st.planned_seeds]


#: where the page's readme lives: README_FILE beside the DOCS_FOLDER the page is written into
README_FILE = "README.md"
DOCS_FOLDER = "docs"
#: the README's generated block: its markers (its limits: report.findings.answer)
README_START, README_END = "<!-- findings:start", "<!-- findings:end -->"


def write_readme_block(readme: Path, block: str) -> bool:
    """Replace the text between the README's findings markers by ``block`` (atomically); False where the
    file or its markers are missing."""
    if not readme.is_file():
        return False
    text = readme.read_text()
    i, j = text.find(README_START), text.find(README_END)
    if i < 0 or j < i:
        return False
    head = text[:text.index("\n", i) + 1]
    new = head + block + "\n" + text[j:]
    if new != text:
        write_text_atomic(readme, new)
    return True


def main(argv=None) -> int:
    import argparse
    import tempfile

    p = argparse.ArgumentParser(prog="autonorm-report --findings",
                                description="Write the findings page (claims ledger + figures).")
    p.add_argument("--findings", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--study", action="append", default=[], metavar="NAME=FOLDER",
                   help="a study record (studies/NAME) or a study's results folder (default: every record under "
                        "--studies-dir, then " + ", ".join(f"{n}={r}" for n, r, _ in STUDIES)
                        + " where present and not recorded)")
    p.add_argument("--studies-dir", default="studies", help="where study records are (default: studies)")
    p.add_argument("--out", default="docs/findings.md")
    p.add_argument("--figures-dir", default="docs/findings")
    p.add_argument("--readme", default=None,
                   help="the README whose findings block (between its markers) is rewritten (default: README.md beside "
                        "the docs/ folder the page is written into; none for a page written elsewhere); skipped where "
                        "the file or its markers are missing; '' for none")
    args = p.parse_args(argv)
    pairs = [tuple(s.split("=", 1)) for s in args.study] or None
    with tempfile.TemporaryDirectory(prefix="autonorm-findings-") as scratch:
        studies = find_studies(pairs, Path(args.studies_dir), Path(scratch))
        if not studies:
            raise SystemExit("autonorm-report --findings: no study found (no record under "
                             f"{args.studies_dir}/, no tables in " + ", ".join(r for _, r, _ in STUDIES)
                             + "); run a study first, e.g. `snakemake all --cores 2 --configfile "
                             "workflow/presets/depth.yaml`, and record it (README \"Study records\")")
        out, figs = Path(args.out), Path(args.figures_dir)
        command = "autonorm-report --findings" + "".join(f" --study {n}={r}" for n, r in (pairs or []))
        page, block = build(studies, out, figs, command, with_block=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, page + "\n")
    if args.readme is None:  # the repository's readme only beside its own docs/ folder, never a test's page
        readme = (out.parent.parent / README_FILE) if out.parent.name == DOCS_FOLDER else None
    else:
        readme = Path(args.readme) if args.readme else None
    wrote = readme is not None and write_readme_block(readme, block)
    print(f"wrote {out} and {len(list(figs.glob('*.png')))} figures in {figs}"
          + (f", and the findings block of {readme}" if wrote else ""))
    return 0
