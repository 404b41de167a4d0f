"""The findings page: every claim of the paper, where we tested it, what came out.

    autonorm-report --findings                       # the studies found under results/
    autonorm-report --findings --study depth=results/depth --study laptop=results/laptop \\
        --out docs/findings.md --figures-dir docs/findings

It reads the tables of the studies that exist (the paper grid in ``results/``, the paper-depth
study in ``results/depth``, the laptop study in ``results/laptop``: whichever a user has) and
writes ``docs/findings.md`` with a claims ledger (one row per claim of the paper, docs/method.md
sections 6-8) and the figures that carry the evidence in ``docs/findings/``. Each claim is
judged on the best study that tested it (the paper grid before the depth study before the
laptop study): reproduced, contradicted, inconclusive at this power (with the difference the
test could detect), or not testable here, with the command that would test it.

The verdicts reuse the report's own checks (``report.sections.mechanism``) and the aggregate's
paired tests, so the page and the per-study reports cannot disagree.
"""
from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

from autonorm.io_utils import write_text_atomic
from autonorm.report.fmt import md_table, pretty
# the page's parts, each in its module (re-exported here: the names callers and tests use)
from autonorm.report.findings_figures import PNG_METADATA, draw_figures  # noqa: F401
from autonorm.report.ledger import (VERDICTS, _doubtful_row, ablation_rows, diff_verdict,  # noqa: F401
                                    freeze_rows, headline, learned_vs_random_rows, learning_rows,
                                    main_table_rows, mechanism_rows, overhead_rows, time_overhead_rows)
from autonorm.report.study import STUDIES, Study, find_studies  # noqa: F401

def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _code_changes(out: Path, figures_dir: Path) -> list[str]:
    """Tracked files changed since the commit, other than this page and its figures (an earlier
    version of the page is not a change to the code that makes it)."""
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



def _record_lines(st: Study) -> list[str]:
    """A recorded study's parts as read, each with its finished runs (every input of the verdicts
    in sight), and the runs it repeats of another study, as declared."""
    if st.record is None:
        return []
    lines = ["  - parts read (finished runs): "
             + ", ".join(f"`{name}` {n}" for name, n in st.record["parts"]) + "."]
    if st.repeats:
        from autonorm.analysis.study_folders import DECLARATION

        runs = "; ".join(f"{own} is {src}'s {theirs}" for own, src, theirs in st.repeats)
        sources = ", ".join(dict.fromkeys(src for _, src, _ in st.repeats))
        read = ("the claims and figures read it without them" if st.without_repeats is not None
                else "the claims and figures do not read it")
        lines.append(f"  - repeats (declared in `{(st.root / DECLARATION).as_posix()}`): {runs}; counted once, "
                     f"in {sources}: {read}.")
    return lines


def build(studies: list[Study], out: Path, figures_dir: Path, command: str) -> str:
    from autonorm.analysis.aggregate import load_reference

    reference = load_reference(None)
    # the claims and figures read each run once: a study without the runs it repeats (declared)
    judged = [j for st in studies if (j := st.judged()) is not None]
    sections = [("Main results (docs/method.md section 6)", main_table_rows(judged, reference)),
                ("What the gates learn (section 6)", mechanism_rows(judged)),
                ("Freezing (sections 1 and 7)", freeze_rows(judged)),
                ("Learned gates against random ones (the abstract, section 8.4)",
                 learned_vs_random_rows(judged)),
                ("Ablations (section 7)", ablation_rows(judged)),
                ("Cost (section 8.1)", overhead_rows(judged) + time_overhead_rows(judged))]
    all_rows = [r for _, rs in sections for r in rs]
    drawn = draw_figures(judged, figures_dir)
    rel = Path(os.path.relpath(figures_dir.resolve(), out.parent.resolve()))
    if all(st.record is not None for st in studies):
        # from committed records only: the page is a function of them (and of this code), so a
        # fresh clone regenerates it byte for byte
        made = ("Generated by `autonorm-report --findings` from the study records "
                + ", ".join(f"`{st.root.as_posix()}`" for st in studies) + f". Command: `{command}`.")
    else:
        commit = _git("rev-parse", "--short", "HEAD") or "unknown"
        dirty = " (with uncommitted changes)" if _code_changes(out, figures_dir) else ""
        made = ("Generated by `autonorm-report --findings` from the studies' results folders. "
                f"Commit {commit}{dirty}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, on "
                f"{platform.machine()} {platform.system()} (Python {platform.python_version()}). "
                f"Command: `{command}`.")
    lines = [
        "# Findings: what holds of the AutoNorm paper here",
        "",
        made,
        "",
        ("The page is a function of the committed study records under `studies/` and of the code: "
         "`autonorm-report --findings` rebuilds it in seconds, byte for byte. A claim gains evidence "
         "when a study is run and recorded (README \"Study records\"); each row names the study it "
         "rests on." if all(st.record is not None for st in studies) else
         "**These numbers and figures are a snapshot.** They go stale when the code, a preset or "
         "the data change. To regenerate: run the studies (Snakemake resumes what exists), record "
         "them (README \"Study records\") and then `autonorm-report --findings`."),
        "",
        "Studies read (for the paper's main table every study that ran a comparison has its own row; "
        "the gate claims are judged on the first study in the paper's regime, else the first that "
        "tested them, and the ablations on the first that tested them, in this order):",
        "",
    ]
    for st in studies:
        runs = st.ctx.runs
        n_ok = int((runs.status == "ok").sum()) if not runs.empty else 0
        src = ""
        if st.record is not None:
            mans = st.record["manifests"]
            commits = ", ".join(dict.fromkeys(str(m.get("commit") or "?")[:7] for m in mans))
            dates = ", ".join(dict.fromkeys(str(m.get("recorded_utc", "?"))[:10] for m in mans))
            src = f", recorded in {len(mans)} part(s) at commit {commits} on {dates}"
        lines.append(f"- **{st.name}** (`{st.root.as_posix()}`{src}): {n_ok} finished runs; datasets "
                     f"{', '.join(pretty(d) for d in dict.fromkeys(st.ctx.summary.dataset))}.")
        lines += _record_lines(st)
    missing = [n for n, _, _ in STUDIES if n not in {s.name for s in studies}]
    if missing:
        lines.append(f"- not found here (no record, no results folder): {', '.join(missing)}. An "
                     "earlier page built from their unrecorded results folders, before the verdict "
                     "rules, is kept for its numbers: docs/history/findings-2026-12-01.md.")
    learned = learning_rows(studies, reference)
    lines += ["", f"In one line: {', '.join(headline(all_rows))} (of {len(all_rows)} rows).", ""]
    if learned:
        lines += ["How far each study's models got (test metric, mean over seeds) beside the "
                  "paper's: every verdict below is about that configuration, not the paper's.", "",
                  md_table(["study", "dataset", "metric", "best of ours", "frozen_ln (ours)",
                            "paper frozen_ln / AutoNorm-S", "trivial baseline",
                            "at or below trivial"], learned), "",
                  "† not comparable: docs/method.md section 8.", ""]
    lines += ["## Claims ledger", "",
              "Each row: the claim in our words and its docs/method.md section; where we tested "
              "it (study, dataset, model depth x width, epochs, training examples, n seeds); our "
              "number (a paired difference: mean and its 95% CI, reference minus other) and the "
              "paper's; the verdict.", ""]
    for title, rs in sections:
        lines += [f"### {title}", "",
                  md_table(["claim", "§", "where tested", "ours", "paper", "verdict"], rs), ""]
    lines += ["Verdicts:", ""] + [f"- **{k}**: {v}." for k, v in VERDICTS.items()] + [""]
    if drawn:
        lines += ["## Figures", ""]
        for name, caption in drawn:
            lines += [f"![{name}]({(rel / name).as_posix()})", "", caption, ""]
    return "\n".join(lines)



def main(argv=None) -> int:
    import argparse
    import tempfile

    p = argparse.ArgumentParser(prog="autonorm-report --findings",
                                description="Write the findings page (claims ledger + figures).")
    p.add_argument("--findings", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--study", action="append", default=[], metavar="NAME=FOLDER",
                   help="a study record (studies/NAME) or a study's results folder (default: every "
                        "record under --studies-dir, then " +
                   ", ".join(f"{n}={r}" for n, r, _ in STUDIES) + " where present and not recorded)")
    p.add_argument("--studies-dir", default="studies", help="where study records are (default: studies)")
    p.add_argument("--out", default="docs/findings.md")
    p.add_argument("--figures-dir", default="docs/findings")
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
        page = build(studies, out, figs, command)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, page + "\n")
    print(f"wrote {out} and {len(list(figs.glob('*.png')))} figures in {figs}")
    return 0
