"""Where the time of a finished study went: per rule and per dataset, from its benchmark TSVs.

    python benchmarks/study_time.py results/laptop

Prints, per rule and per dataset: jobs, summed wall time and summed CPU time (Snakemake's
``benchmark:`` files), the makespan (first job log to the report) and the CPU time divided by
the cores, i.e. the makespan a quiet machine with that many cores could reach at best.
"""
from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path


def read_benchmarks(results: Path) -> list[dict]:
    rows = []
    for tsv in sorted((results / "benchmarks").rglob("*.tsv")):
        rel = tsv.relative_to(results / "benchmarks").parts
        with tsv.open() as fh:
            records = list(csv.DictReader(fh, delimiter="\t"))
        if not records:
            continue
        last = records[-1]  # a rerun appends; the last line is the attempt that produced the output
        # <rule>/<dataset>/.../<x>.tsv, <rule>/<dataset>.tsv, or <rule>.tsv for whole-study rules
        rule = rel[0].removesuffix(".tsv")
        dataset = rel[1].removesuffix(".tsv") if len(rel) > 1 else "(all)"
        rows.append({"rule": rule, "dataset": dataset,
                     "wall_s": float(last["s"]), "cpu_s": float(last.get("cpu_time") or 0.0)})
    return rows


def makespan(results: Path) -> float | None:
    logs = [p.stat().st_mtime for p in (results / "logs").rglob("*.log")] if (results / "logs").is_dir() else []
    report = results / "report.md"
    if not logs or not report.is_file():
        return None
    first_log_written = min(logs)
    return report.stat().st_mtime - first_log_written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, help="a study's results folder (results_dir)")
    p.add_argument("--cores", type=int, default=2)
    args = p.parse_args(argv)
    rows = read_benchmarks(args.results)
    if not rows:
        raise SystemExit(f"no benchmark TSVs under {args.results / 'benchmarks'}: is the study finished?")
    for key in ("rule", "dataset"):
        agg: dict = defaultdict(lambda: [0, 0.0, 0.0])
        for r in rows:
            a = agg[r[key]]
            a[0] += 1
            a[1] += r["wall_s"]
            a[2] += r["cpu_s"]
        print(f"\n| {key} | jobs | wall s (sum) | CPU s (sum) |\n|---|---|---|---|")
        for name, (n, wall, cpu) in sorted(agg.items()):
            print(f"| {name} | {n} | {wall:,.0f} | {cpu:,.0f} |")
    cpu = sum(r["cpu_s"] for r in rows)
    span = makespan(args.results)
    print(f"\nbenchmarked jobs: {len(rows)}; CPU time {cpu:,.0f} s = {cpu / args.cores / 60:.1f} min on "
          f"{args.cores} cores at best")
    if span is not None:
        print(f"makespan (first job log to report.md): {span / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
