"""The markdown report: our numbers beside the paper's, with their context.

Why: the report is the reproduction's single human-readable result.  It is
built only from the aggregate CSVs (so every number can be traced to a row)
plus, for provenance, the runs' ``env.json`` files.  Stand-in datasets are
labelled as such everywhere and never get a paper number beside them; runs
whose recorded config hash is not their folder's current one are listed at
the top and used nowhere.

Layout: :mod:`.context` loads the tables once, :mod:`.sections` holds one
function per section (their order is :data:`.sections.SECTIONS`),
:mod:`.paper` the paper's claims and thresholds, :mod:`.fmt` formatting and
:mod:`.html` the HTML page that opens inside ``snakemake --report``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterable

from autonorm.io_utils import require_folder, write_text_atomic
from autonorm.report.context import FAMILIES, ReportContext
from autonorm.report.fmt import fmt, fmt_ms, fmt_p, md_table, pretty
from autonorm.report.html import markdown_to_html
from autonorm.report.sections import SECTIONS
from autonorm.report.sections.header import BANNER, STALE_TITLE
from autonorm.report.sections.provenance import collect_env, config_hash

__all__ = ["build_report", "main", "build_parser", "BANNER", "STALE_TITLE", "SECTIONS",
           "ReportContext", "config_hash", "collect_env", "fmt", "fmt_ms", "fmt_p", "md_table",
           "pretty", "FAMILIES", "markdown_to_html"]


def render(ctx: ReportContext) -> str:
    parts = [s for _, fn in SECTIONS if (s := fn(ctx))]
    return "\n".join(p.rstrip() + "\n" for p in parts).rstrip() + "\n"


def build_report(tables: str | Path, figures_dir: str | Path | None, out: str | Path,
                 config_json: str | None = None,
                 provenance_from: str | Path | None = None,
                 html_out: str | Path | None = None) -> str:
    """Write report.md (and, with ``html_out``, the same as one HTML page); returns the text."""
    require_folder(tables, "autonorm-aggregate (rule aggregate)")
    ctx = ReportContext.load(tables, out, figures_dir, config_json, provenance_from)
    text = render(ctx)
    write_text_atomic(out, text)
    if html_out is not None:
        write_text_atomic(html_out, markdown_to_html(text, base=Path(out).resolve().parent,
                                                     title="AutoNorm reproduction report"))
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-report", description="Write the markdown report.")
    p.add_argument("--tables", required=True, help="folder with the csvs of autonorm-aggregate")
    p.add_argument("--figures-dir", default=None, help="folder with the figures (linked relatively)")
    p.add_argument("--out", required=True, help="report path, e.g. results/report.md")
    p.add_argument("--html-out", default=None,
                   help="also write the report as one self-contained HTML page (for "
                        "snakemake --report)")
    p.add_argument("--config-json", default=None, help="the pipeline config as a json string")
    p.add_argument("--provenance-from", default=None,
                   help="runs folder whose env.json files give versions and devices")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    """The command line (``autonorm-report``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-report", _main, argv)


def _main(argv: Iterable[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--record" in argv:  # a results folder as a study record (analysis.record_cli)
        from autonorm.analysis import record_cli

        return record_cli.main(argv)
    if "--findings" in argv:  # the findings page over several studies (report.findings)
        from autonorm.report.findings import page

        return page.main(argv)
    args = build_parser().parse_args(argv)
    build_report(args.tables, args.figures_dir, args.out, args.config_json, args.provenance_from,
                 args.html_out)
    print(f"autonorm-report: wrote {args.out}" + (f" and {args.html_out}" if args.html_out else ""))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
