"""Aggregate run folders and eval jsons into tidy CSV tables.

Why: every table and figure of the report is drawn from these CSVs, so that a
number in the report can be traced back to one row, and a row back to the run
folders (``runs.csv`` holds the paths).  Inputs (the run-folder format of
docs/data.md):

* ``<results>/runs/<dataset>/<method>/seed<k>/`` with ``metrics.json`` (ok run)
  or ``failed.json`` (diverged run), ``history.json``, ``freeze.json``,
  ``env.json``;
* ``<results>/eval/<dataset>/<method>/seed<k>.json``;
* optionally ``<results>/data/<dataset>/meta.json`` (family, stand-in flag,
  description, split sizes, ``trivial_baseline`` and ``provenance``).

Outputs (``autonorm.output_names.TABLE_NAMES``, all written atomically into ``--out-dir``):

``summary.csv``      one row per dataset x method x metric: n, mean, std (ddof=1),
                     95% t-CI, the paper's mean/std (paper datasets only), and
                     how many runs were expected / diverged / missing.
``comparisons.csv``  autonorm_s vs every other method, paired by seed, with t,
                     p, Holm-adjusted p, Cohen's d_z, Wilcoxon p and a note.
``runs.csv``         one row per expected run: status ok | diverged | missing.
``gates.csv``        per epoch x selector gate entropy and mean w_DyT.
``history.csv``      per epoch: losses, val metric, mean gate entropy / w_DyT.
``freeze.csv``       the AutoNorm-S freeze record of every run.
``corruptions.csv``  accuracy per corruption x severity.
``datasets.csv``     one row per dataset: description, split sizes, provenance
                     status of its files, trivial baseline name.
``baselines.csv``    the trivial baseline's test metrics per dataset.
``ablations.csv``    every method variant beside its base, per dataset x axis x
                     metric, with a paired test against the base.
``learned_vs_random.csv``  each gated method (autonorm, autonorm_s) minus the Random
                     Selector, paired by seed: the paper's abstract says learned gates
                     lose to random ones on stationary vision. One Holm family per
                     dataset and metric family over the claim's distinct tests (the two
                     learned gates; a gate whose differences equal the other's, the same
                     training, counts once): one sentence about both gates, not the main
                     table's family.

Stale runs: an eval json records the ``config_hash`` of the run it evaluated;
it is compared with the hash of the run folder's current ``config.json``.  A
mismatch (the folder was reconfigured after the evaluation) makes the run
``stale``: it contributes no number and the report lists it at the top.  A
missing field is ``unknown`` (older formats) and the run is used.

Same runs: an eval json with ``same_run_as: <method>`` (AutoNorm-S on NLP is the
unfrozen AutoNorm run) keeps its row, but no paired test is run between the two.

A diverged or missing run never contributes a number: it appears in
``runs.csv`` (and in the n_diverged / n_missing columns of ``summary.csv``)
only.  Paper values are placed beside ours only for paper datasets; stand-in
datasets (``standin`` true) get none.

Variants (ablations): an eval json carrying ``variant: {name, base, axis,
value}`` belongs to an ablation; such methods are left out of summary.csv and
comparisons.csv (they would enlarge the Holm families of the main table) and
go to ablations.csv, with Holm over the variants of one dataset x axis x metric.

Holm families (documented choice): within each dataset, all comparisons
(every baseline x every metric) whose metric is in the same family of
:func:`autonorm.analysis.stats.metric_family` - ``primary`` (accuracy,
tag_perplexity, rmse), ``secondary`` (precision/recall/F1 macro, MAE),
``robustness`` (rotation accuracy, corruption summaries) - form one Holm
family.  Cost metrics are summarised but not tested.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from autonorm.analysis.ablations import ablation_table
from autonorm.analysis.collect import collect, discover_variants, load_reference
from autonorm.analysis.summaries import (alias_same_runs, alias_unfired_freeze, compare_methods, joint_family,
                                         same_run_pairs, summarize)
from autonorm.analysis.tables import COMPARISON_COLUMNS, REFERENCE_METHOD
from autonorm.io_utils import write_csv_atomic

#: the paper's learned gates, each compared with the Random Selector (learned_vs_random.csv)
LEARNED_GATES = ("autonorm", "autonorm_s")

# The work is done by job in autonorm.analysis (collect, summaries, ablations, tables); this module
# runs them in turn, writes the tables, and is the command line.


def aggregate(results: str | Path, datasets: Sequence[str], methods: Sequence[str],
              seeds: Sequence[int], out_dir: str | Path,
              reference: str | Path | None = None,
              reference_method: str = REFERENCE_METHOD,
              variants: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    """Collect, summarise, compare and write all tables; returns the frames.

    ``variants``: ablation method names; ``None`` finds them on disk (method
    folders under eval/<dataset>/ whose eval jsons carry a ``variant`` field).
    """
    methods = list(dict.fromkeys(methods))
    if variants is None:
        variants = discover_variants(results, datasets, methods)
    all_methods = methods + [v for v in variants if v not in methods]
    raw = collect(results, datasets, all_methods, seeds,
                  sparse=[v for v in variants if v not in methods])
    tables = tables_from_runs(raw, methods, variants, reference, reference_method, results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        write_csv_atomic(out_dir / name, df, float_format="%.10g")
    return tables


def tables_from_runs(raw: dict, methods: Sequence[str], variants: Sequence[str],
                     reference: str | Path | None = None, reference_method: str = REFERENCE_METHOD,
                     results: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """Every table from the per-run frames ``raw`` (collect's output, or a study record's:
    analysis.records), so that a record and its results folder give the same statistics."""
    methods = list(dict.fromkeys(methods))
    raw = alias_unfired_freeze(alias_same_runs(raw))
    var_info = dict(raw["variants"])
    for v in variants:  # a declared variant with no eval json yet: axis unknown
        var_info.setdefault(v, {"name": v, "base": "", "axis": "unknown", "value": v})
    main_methods = [m for m in methods if m not in var_info]
    ref = load_reference(reference)
    main_values = raw["values"][raw["values"].method.isin(main_methods)]
    main_runs = raw["runs"][raw["runs"].method.isin(main_methods)]
    summary = summarize(main_values, main_runs, main_methods, ref, raw["ds_info"],
                        raw["baselines"])
    comparisons = compare_methods(main_values, main_methods, raw["ds_info"], reference_method,
                                  same_run_pairs(raw["runs"]), ref)
    ablations = ablation_table(raw["values"], raw["runs"], var_info, results, raw["history"],
                              configs=raw.get("configs"))
    pairs = [compare_methods(main_values, [m, "random"], raw["ds_info"], m, same_run_pairs(raw["runs"]), ref)
             for m in LEARNED_GATES if m in main_methods and "random" in main_methods]
    learned_vs_random = (joint_family(pd.concat(pairs, ignore_index=True)) if pairs
                         else pd.DataFrame(columns=COMPARISON_COLUMNS))
    return {
        "summary.csv": summary,
        "comparisons.csv": comparisons,
        "runs.csv": raw["runs"],
        "gates.csv": raw["gates"],
        "history.csv": raw["history"],
        "freeze.csv": raw["freeze"],
        "corruptions.csv": raw["corruptions"],
        "datasets.csv": raw["datasets"],
        "baselines.csv": raw["baselines"],
        "ablations.csv": ablations,
        "learned_vs_random.csv": learned_vs_random,
    }


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-aggregate", description=__doc__.split("\n")[0])
    p.add_argument("--results", required=True, help="results root (holds runs/, eval/, data/)")
    p.add_argument("--datasets", nargs="+", required=True)
    p.add_argument("--methods", nargs="+", required=True)
    p.add_argument("--seeds", nargs="+", type=int, required=True)
    p.add_argument("--out-dir", required=True, help="where the csv tables go")
    p.add_argument("--reference", default=None,
                   help="paper reference csv (default: the package's paper_reference.csv)")
    p.add_argument("--reference-method", default=REFERENCE_METHOD,
                   help="method compared against every other one (default: autonorm_s)")
    p.add_argument("--variants", nargs="*", default=None,
                   help="ablation variants (method names); default: found on disk by the "
                        "'variant' field of their eval jsons")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    """The command line (``autonorm-aggregate``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-aggregate", _main, argv)


def _main(argv: Iterable[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    tables = aggregate(args.results, args.datasets, args.methods, args.seeds, args.out_dir,
                       args.reference, args.reference_method, args.variants)
    runs = tables["runs.csv"]
    n_ok = int((runs.status == "ok").sum())
    print(f"autonorm-aggregate: {len(runs)} expected runs, {n_ok} ok, "
          f"{int((runs.status == 'diverged').sum())} diverged, "
          f"{int((runs.status == 'missing').sum())} missing, "
          f"{int((runs.status == 'stale').sum())} stale -> {args.out_dir}")
    for r in runs[runs.status == "stale"].itertuples(index=False):
        print(f"autonorm-aggregate: STALE (excluded): {r.path}: {r.message}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
