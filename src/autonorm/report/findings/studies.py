"""A study the findings page reads: a results folder's tables, or a study record's (computed as the
aggregate step computes them: analysis.records), with its run configs."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from autonorm.methods import UNNAMED_PLACEMENT
from autonorm.report.context import ReportContext, column_where, rows_where
from autonorm.report.fmt import fmt, fnum, pretty

#: the studies, best evidence first: (name, default results folder, preset file)
STUDIES = (("paper", "results", "config.yaml"),
           ("depth", "results/depth", "workflow/presets/depth.yaml"),
           ("laptop", "results/laptop", "workflow/presets/laptop.yaml"))


@dataclass
class Study:
    """One study's tables (as the report reads them) and its run configs: from a results folder,
    or from a study record (analysis.records), whose tables are computed as the aggregate step
    computes them from a results folder."""
    name: str
    root: Path
    ctx: ReportContext
    _configs: dict = field(default_factory=dict)
    record: dict | None = None
    #: its runs that are another study's, declared (study_folders.Recorded.repeats), and the study
    #: less them, which the claims and figures read (None: no run left)
    repeats: list = field(default_factory=list)
    without_repeats: "Study | None" = None
    #: how each repeated run differs from its source's (empty: the same numbers), and the methods the
    #: study pairs with from a source (study_folders.Recorded)
    repeat_differences: dict = field(default_factory=dict)
    baseline: dict | None = None
    #: the seeds its plan fixed before its first run (study.json; 0: none declared): its rows decide at that many
    planned_seeds: int = 0
    #: its checks that two CPU types train its runs to the same floats (study.json; study_folders, checked)
    same_floats: list = field(default_factory=list)

    def judged(self) -> "Study | None":
        """The study as the claims and figures read it: without the runs it repeats (declared), with
        the baseline runs it pairs with (declared)."""
        return self.without_repeats if (self.repeats or self.baseline) else self

    @classmethod
    def load(cls, name: str, root: str | Path) -> "Study | None":
        root = Path(root)
        tables = root / "tables"
        if not (tables / "summary.csv").is_file():
            return None
        return cls(name, root, ReportContext.load(tables, root / "report.md"))

    @classmethod
    def from_record(cls, name: str, study_dir: str | Path, scratch: str | Path, rec: dict | None = None) -> "Study":
        """A recorded study (studies/<name>/, or its record ``rec`` as loaded): its tables computed
        from the record and written, as the aggregate step writes them, into ``scratch``, then read
        as the report reads them."""
        from autonorm.analysis.records import tables_of
        from autonorm.analysis.study_folders import load_study
        from autonorm.io_utils import write_csv_atomic

        rec = load_study(study_dir) if rec is None else rec
        tables = Path(scratch) / name / "tables"
        tables.mkdir(parents=True, exist_ok=True)
        for fname, df in tables_of(rec).items():
            write_csv_atomic(tables / fname, df, float_format="%.10g")
        return cls(name, Path(study_dir), ReportContext.load(tables, tables.parent / "report.md"), record=rec)

    def has(self, d: str, method: str | None = None) -> bool:
        s = self.ctx.summary
        if s.empty:
            return False
        n = column_where(s, "n", dataset=d, **({"method": method} if method else {}))
        return bool((n.astype(float) > 0).any())  # a missing n (NaN) is no run

    def placement(self, d: str, method: str = "autonorm_s") -> str:
        """The selectors' placement of (dataset, method)'s runs (a run config without the key predates
        it: one selector per sub-layer)."""
        return (self.run_config(d, method).get("norm_options") or {}).get("placement", UNNAMED_PLACEMENT)

    def run_config(self, d: str, method: str = "autonorm_s") -> dict:
        """config.json of the first finished run of (dataset, method), or of any method."""
        key = (d, method)
        if key not in self._configs:
            runs = self.ctx.runs
            cfg = {}
            if self.record is not None and not runs.empty:
                ok = runs[(runs.dataset == d) & (runs.status == "ok")]
                for _, r in pd.concat([ok[ok.method == method], ok]).iterrows():
                    cfg = self.record["configs"].get(f"{d}/{r['method']}/seed{int(r['seed'])}") or {}
                    if cfg:
                        break
            elif not runs.empty:
                ok = runs[(runs.dataset == d) & (runs.status == "ok")]
                for _, r in pd.concat([ok[ok.method == method], ok]).iterrows():
                    p = Path(str(r["path"]))
                    if not p.is_absolute() and not p.exists():
                        p = self.root.parent / p if (self.root.parent / p).exists() else p
                    try:
                        cfg = json.loads((p / "config.json").read_text())
                        break
                    except (OSError, ValueError):
                        continue
            self._configs[key] = cfg
        return self._configs[key]

    def where(self, d: str, method: str = "autonorm_s", n: int | None = None) -> str:
        """'depth: MNIST, 8 x 128, patch 7, 12 epochs, 15,000 train, n=3'."""
        cfg = self.run_config(d, method)
        model, train = cfg.get("model", {}), cfg.get("train", {})
        parts = [f"{self.name}: {pretty(d)}"]
        if model:
            size = f"{model.get('depth', '?')} x {model.get('dim', '?')}"
            if model.get("patch_size"):
                size += f", patch {model['patch_size']}"
            parts.append(size)
        if train.get("epochs"):
            parts.append(f"{train['epochs']} epochs")
        meta = self.ctx.dataset_meta(d)
        n_train = fnum(meta.get("n_train"))
        if math.isfinite(n_train):
            parts.append(f"{int(n_train):,} train")
        if n is not None:
            parts.append(f"n={n}")
        return ", ".join(parts)

    def where_gated(self, d: str, method: str = "autonorm_s", n: int | None = None) -> str:
        """:meth:`where` with the selectors' placement: '..., n=5, one selector per block'."""
        from autonorm.report.findings.rows import placement_words

        return f"{self.where(d, method, n)}, one selector {placement_words(self.placement(d, method))}"


def first_study(studies: list[Study], d: str, *methods: str) -> Study | None:
    """The first study that ran every one of ``methods`` on ``d``."""
    for st in studies:
        if all(st.has(d, m) for m in methods):
            return st
    return None


def mean_ci(st: Study, d: str, method: str, metric: str) -> str:
    """'mean [low, high]' of a method's metric over all its seeds in a study."""
    s = st.ctx.summary
    r = rows_where(s, dataset=d, method=method, metric=metric)
    if r.empty or not fnum(r.iloc[0]["n"]):
        return "–"
    r = r.iloc[0]
    lo, hi = fnum(r["ci95_low"]), fnum(r["ci95_high"])
    ci = f" [{fmt(lo)}, {fmt(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else ""
    return f"{fmt(r['mean'])}{ci}"


def find_studies(pairs: list[tuple[str, str]] | None, studies_dir: Path, scratch: Path) -> list[Study]:
    """The studies to read: those named (NAME=FOLDER, a record or a results folder), else every
    record under ``studies_dir`` (in STUDIES order, then by name) and every default results folder
    of STUDIES that has no record of its name. The records are checked to hold each run once
    (analysis.study_folders: a run two studies hold is refused unless one declares the other)."""
    from autonorm.analysis.study_folders import load_studies, parts_of, study_folders

    order = {n: i for i, (n, _, _) in enumerate(STUDIES)}
    if pairs:
        named = [(n, Path(r)) for n, r in pairs]
    else:
        named = sorted(((p.name, p) for p in study_folders(studies_dir)),
                       key=lambda np: (order.get(np[0], len(order)), np[0]))
    is_record = [bool(parts_of(f)) for _, f in named]
    loaded = load_studies([nf for nf, rec in zip(named, is_record) if rec])
    by_name = {r.name: r for r in loaded}
    records = iter(loaded)
    found = []
    for (name, folder), rec in zip(named, is_record):
        if not rec:
            if (st := Study.load(name, folder)) is not None:
                found.append(st)
            continue
        r = next(records)
        st = Study.from_record(name, folder, scratch, r.record)
        st.repeats, st.repeat_differences, st.baseline = r.repeats, r.repeat_differences, r.baseline
        st.planned_seeds, st.same_floats = r.planned_seeds, r.same_floats
        judged = r.judged(by_name) if (r.repeats or r.baseline) else None
        st.without_repeats = None if judged is None else Study.from_record(name, folder, scratch / "judged", judged)
        if st.without_repeats is not None:
            st.without_repeats.planned_seeds = r.planned_seeds
        found.append(st)
    if pairs:
        return found
    names = {st.name for st in found}
    found += [st for n, r, _ in STUDIES if n not in names and (st := Study.load(n, r)) is not None]
    return sorted(found, key=lambda st: (order.get(st.name, len(order)), st.name))
