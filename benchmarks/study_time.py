"""Where the time of a finished study went, from its benchmark TSVs.

    python benchmarks/study_time.py results/laptop [--cores 2] [--plot utilisation.png]
    python benchmarks/study_time.py AFTER --against BEFORE   # the same jobs in two studies

Prints, per rule and per dataset: jobs, summed wall time and summed CPU time (Snakemake's
``benchmark:`` files); the makespan (first job start to the report) and the summed job wall time
divided by the cores, i.e. the makespan a quiet machine with that many cores could reach at best
with these jobs (each job is one single-threaded process that keeps its core busy); the core
utilisation over time (jobs running, in tenths of the makespan) and the idle core-minutes; and
the critical path: the chain of jobs (preprocess -> train -> evaluate -> aggregate -> figures ->
report) that ended last, i.e. what the study waited for at the end.

Each job's interval comes from its TSV: Snakemake writes the file when the job ends (its
modification time) and records the job's wall time in it (``s``), so the job started ``s``
seconds before. A copied results folder keeps these times only if the copy kept modification
times (``cp -a``).

``--against BEFORE`` compares the jobs that two studies of the same preset both ran (say, two
commits' results folders): per rule and dataset, the summed wall time of those jobs in each and
the ratio. Run the two side by side on one machine (each with ``--cores 1``), so that both see
the same machine at the same time: this VM's speed drifts by 10-30% within hours, more than
most changes being measured (benchmarks/LOG.md sections 9 and 10).

Snakemake's ``cpu_time`` is sampled while the job runs and undercounts: a laptop MNIST training
that GNU ``time`` measured at 62 s of CPU in 62 s of wall time, alone or beside another, was
recorded as 42.6 s of CPU in 59.9 s. So a wall/CPU ratio above 1 in these files is not waiting
(2026-12-01, benchmarks/LOG.md section 8); the wall times are the numbers to trust.
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
        wall = float(last["s"])
        end = tsv.stat().st_mtime
        rows.append({"rule": rule, "dataset": dataset, "job": "/".join(rel).removesuffix(".tsv"),
                     "key": "/".join(rel[1:]).removesuffix(".tsv"),
                     "wall_s": wall, "cpu_s": float(last.get("cpu_time") or 0.0),
                     "start": end - wall, "end": end})
    return rows


def makespan(rows: list[dict]) -> tuple[float, float]:
    """(first start, last end) over the jobs of this study."""
    return min(r["start"] for r in rows), max(r["end"] for r in rows)


def running_jobs(rows: list[dict], t0: float, t1: float, bins: int) -> list[float]:
    """Mean number of jobs running in each of ``bins`` equal slices of [t0, t1]."""
    width = (t1 - t0) / bins
    out = []
    for i in range(bins):
        a, b = t0 + i * width, t0 + (i + 1) * width
        busy = sum(max(0.0, min(b, r["end"]) - max(a, r["start"])) for r in rows)
        out.append(busy / width if width > 0 else 0.0)
    return out


def idle_core_seconds(rows: list[dict], cores: int, t0: float, t1: float) -> float:
    """Integral over the makespan of max(0, cores - jobs running): core time nothing used."""
    events = sorted([(r["start"], 1) for r in rows] + [(r["end"], -1) for r in rows])
    idle, running, last = 0.0, 0, t0
    for t, d in events:
        idle += max(0, cores - running) * (t - last)
        running, last = running + d, t
    return idle + max(0, cores - running) * (t1 - last)


def critical_path(rows: list[dict]) -> list[dict]:
    """The chain that ended last: report <- figures <- aggregate <- the evaluation (or copy)
    that ended last before the aggregation <- its training <- its dataset's preprocessing."""
    by_rule = defaultdict(list)
    for r in rows:
        by_rule[r["rule"]].append(r)
    chain = [r for name in ("report", "figures", "aggregate") for r in by_rule.get(name, [])[:1]]
    agg_start = chain[-1]["start"] if chain else float("inf")
    evals = [r for name in ("evaluate", "same_run_eval") for r in by_rule.get(name, [])
             if r["end"] <= agg_start + 1.0]
    if evals:
        last_eval = max(evals, key=lambda r: r["end"])
        chain.append(last_eval)
        train = [r for r in by_rule.get("train", []) if r["key"] == last_eval["key"]]
        chain += train[:1]
        chain += [r for r in by_rule.get("preprocess", []) if r["dataset"] == last_eval["dataset"]][:1]
    return list(reversed(chain))


def plot(rows: list[dict], cores: int, t0: float, t1: float, out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({r["dataset"] for r in rows})
    colors = dict(zip(datasets, plt.get_cmap("tab10").colors))
    bins = 200
    width = (t1 - t0) / bins
    xs = [(t0 + (i + 0.5) * width - t0) / 60 for i in range(bins)]
    stacks = []
    for d in datasets:
        stacks.append(running_jobs([r for r in rows if r["dataset"] == d], t0, t1, bins))
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.stackplot(xs, stacks, labels=datasets, colors=[colors[d] for d in datasets], step="mid")
    ax.axhline(cores, color="black", ls="--", lw=0.8)
    ax.text(0.005, cores, f"{cores} cores", transform=ax.get_yaxis_transform(), va="bottom", fontsize=7)
    ax.set_xlabel("minutes since the first job started")
    ax.set_ylabel("jobs running")
    ax.set_ylim(0, cores + 1)
    ax.set_xlim(0, (t1 - t0) / 60)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, ncol=4, loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def compare(after: list[dict], before: list[dict]) -> list[tuple]:
    """(rule, dataset, jobs, before wall s, after wall s) over the jobs both studies ran, per rule
    and dataset, then a total row ("all", "", ...)."""
    old = {r["job"]: r["wall_s"] for r in before}
    agg: dict = defaultdict(lambda: [0, 0.0, 0.0])
    for r in after:
        if r["job"] in old:
            a = agg[(r["rule"], r["dataset"])]
            a[0] += 1
            a[1] += old[r["job"]]
            a[2] += r["wall_s"]
    rows = [(rule, d, n, b, a) for (rule, d), (n, b, a) in sorted(agg.items())]
    total = [sum(col) for col in zip(*[(n, b, a) for *_, n, b, a in rows])] or [0, 0.0, 0.0]
    return rows + [("all", "", *total)]


def print_comparison(after: list[dict], before: list[dict], name_after: str, name_before: str) -> None:
    rows = compare(after, before)
    print(f"\njobs in both studies: {rows[-1][2]} (of {len(after)} in {name_after}, {len(before)} in {name_before})")
    print(f"\n| rule | dataset | jobs | wall s, {name_before} | wall s, {name_after} | ratio |\n|---|---|---|---|---|---|")
    for rule, d, n, b, a in rows:
        ratio = f"{a / b:.2f}" if b > 0 else "-"
        print(f"| {rule} | {d} | {n} | {b:,.0f} | {a:,.0f} | {'**' + ratio + '**' if rule == 'all' else ratio} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, help="a study's results folder (results_dir)")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--plot", type=Path, default=None, help="write the utilisation over time as a PNG")
    p.add_argument("--title", default=None, help="the plot's title (default: the results folder)")
    p.add_argument("--against", type=Path, default=None,
                   help="another results folder of the same preset (before): compare the jobs both ran")
    args = p.parse_args(argv)
    rows = read_benchmarks(args.results)
    if not rows:
        raise SystemExit(f"no benchmark TSVs under {args.results / 'benchmarks'}: is the study finished?")
    if args.against is not None:
        before = read_benchmarks(args.against)
        if not before:
            raise SystemExit(f"no benchmark TSVs under {args.against / 'benchmarks'}")
        print_comparison(rows, before, str(args.results), str(args.against))
        return 0
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
    t0, t1 = makespan(rows)
    wall = sum(r["wall_s"] for r in rows)
    print(f"\nbenchmarked jobs: {len(rows)}; job wall time {wall:,.0f} s = {wall / args.cores / 60:.1f} min on "
          f"{args.cores} cores at best (Snakemake's sampled CPU time: {cpu:,.0f} s, an undercount)")
    print(f"makespan (first job start to the last job end): {(t1 - t0) / 60:.1f} min; "
          f"idle core time {idle_core_seconds(rows, args.cores, t0, t1) / 60:.1f} core-min "
          f"of {args.cores * (t1 - t0) / 60:.1f}")
    util = running_jobs(rows, t0, t1, 10)
    print("jobs running, mean per tenth of the makespan: " + " ".join(f"{u:.2f}" for u in util))
    print("\ncritical path (the chain that ended last):\n\n| job | start (min) | end (min) | wall s |\n|---|---|---|---|")
    for r in critical_path(rows):
        print(f"| {r['job']} | {(r['start'] - t0) / 60:.1f} | {(r['end'] - t0) / 60:.1f} | {r['wall_s']:,.0f} |")
    if args.plot:
        plot(rows, args.cores, t0, t1, args.plot, args.title or f"{args.results}: jobs running over time")
        print(f"\nwrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
