"""NLP datasets: GLUE SST-2 (sentence classification) and Penn Treebank POS tagging.

Tokenisation needs no network and no pretrained tokenizer: the vocabulary is
built from the *training split only* (ids 0 = <pad>, 1 = <unk>, then tokens by
decreasing frequency, ties alphabetical), so validation/test words unseen in
training map to <unk> exactly as they would for a deployed model.

SST-2: lower-cased, split with a small Unicode-aware regex that keeps GLUE's
own tokenisation (the GLUE sentences are already space-tokenised), keeps
non-ASCII letters inside words ("clichés", "résumé") and separates
punctuation in untokenised text.  The raw files are verified by content
(registry: GLUE TSV SHA-256s, and a canonical row hash for other containers
such as Hugging Face parquet); a different split, an edited or a translated
copy is rejected unless ``allow_unverified``.  Test = the 872-sentence GLUE validation
split (GLUE hides test labels); validation = seeded holdout of GLUE train
(``val_fraction`` 0.1).  Note: GLUE train contains phrases of the same
sentences, so the holdout is optimistic; it is only used for model selection
and gating statistics, never reported as the test metric.

PTB POS: tokens exactly as in the treebank (case kept), ``-NONE-`` trace
elements dropped.  ``ptb_source='nltk_sample'`` (default): the free NLTK WSJ
sample (files wsj_0001..wsj_0199, ~3,914 sentences) has no official split, so
sentences are shuffled with ``split_seed`` and split 80/10/10
(``val_fraction``/``test_fraction`` 0.1).  ``ptb_source='wsj_full'``: the
licensed LDC Treebank-3 WSJ with the standard POS-tagging sections 00-18
(train), 19-21 (validation), 22-24 (test).  The tag inventory is the sorted set
of tags seen in the corpus (it is the label space, not a learned statistic).
Sequences longer than ``max_len`` are truncated (count recorded in meta).
"""
from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..io_utils import umask_mode
from . import registry
from .errors import DataCorruptError, DataMissingError
from .integrity import (Checks, bytes_sha256, file_hash, manifest_sha256, missing_error, require_network,
                        rows_sha256, sha256_of, verify_file)
from .local_source import checksum_ok, pick
from .source import DatasetSource
from .storage import holdout, split_note, subsample_train, three_way

# the text encoding lives in .text
from .text import build_sequence_classification, build_token_classification, tokenize_sst


# =========================================================================== SST-2
SST2_EXPECTED_ROWS = {"train": 67349, "validation": 872}
_SST2_TSV = {"train": "SST-2/train.tsv", "validation": "SST-2/dev.tsv"}
_SST2_CANDIDATES = {
    "tsv": ("SST-2/train.tsv", "SST-2/dev.tsv"),
    "hf": ("sst2/train-00000-of-00001.parquet", "sst2/validation-00000-of-00001.parquet"),
    "parquet": ("train.parquet", "validation.parquet"),
}


# The accepted forms, as listed in "missing" errors (each is one alternative).
SST2_FORMS = ("SST-2/{train,dev}.tsv", "SST-2.zip", "sst2/{train,validation}-00000-of-00001.parquet",
              "{train,validation}.parquet")


def sst2_present(raw_dir) -> bool:
    root = Path(raw_dir) / "sst2"
    return any(all((root / f).is_file() for f in fs) for fs in _SST2_CANDIDATES.values()) or \
        (root / "SST-2.zip").is_file()


def _read_tsv(fh) -> "Any":
    import csv
    import pandas as pd
    return pd.read_csv(fh, sep="\t", quoting=csv.QUOTE_NONE, dtype={"sentence": str}, keep_default_na=False)


def _sst2_content_problem(split: str, df) -> str:
    """'' if the rows are GLUE SST-2's (canonical hash), else what differs."""
    want_rows = SST2_EXPECTED_ROWS[split]
    if len(df) != want_rows:
        return (f"{len(df)} rows in the {split} split, GLUE SST-2 has {want_rows:,} "
                "(a different split, subset or version)")
    got = rows_sha256(zip(df["sentence"].astype(str), df["label"].astype(int)))
    want = registry.CONTENT_SHA256["sst2"][split]
    if got != want:
        return (f"the {split} rows have the GLUE row count but other content (content sha256 {got}, "
                f"GLUE {want}): an edited, re-tokenised or translated copy")
    return ""


def _check_sst2_frames(frames) -> None:
    """Format checks (any copy, verified or not): columns, labels 0/1, non-empty."""
    import pandas as pd
    for k, df in frames.items():
        if "sentence" not in df.columns or "label" not in df.columns:
            raise DataCorruptError(f"Dataset 'sst2': split {k!r} lacks columns 'sentence' and 'label' "
                                   f"(has {list(df.columns)}). Expected layout: {registry.RAW_LAYOUT['sst2']}")
        lab = set(pd.unique(df["label"]).tolist())
        if not lab <= {0, 1} or len(df) == 0:
            raise DataCorruptError(f"Dataset 'sst2': split {k!r} has labels {sorted(lab)} (expected 0/1) or no rows")


def load_sst2_raw(raw_dir, allow_unverified: bool = False, checks: Optional[Checks] = None
                  ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """({'train': DataFrame, 'validation': DataFrame}, info) from the first accepted layout, verified."""
    import pandas as pd
    root = Path(raw_dir) / "sst2"
    checks = checks if checks is not None else Checks("sst2", raw_dir, allow_unverified)
    frames: Dict[str, Any] = {}
    paths: Dict[str, Path] = {}
    layout = ""
    for kind, (ftr, fva) in _SST2_CANDIDATES.items():
        if (root / ftr).is_file() and (root / fva).is_file():
            reader = pd.read_parquet if kind != "tsv" else _read_tsv
            try:
                frames = {"train": reader(root / ftr), "validation": reader(root / fva)}
            except Exception as exc:
                raise DataCorruptError(f"Dataset 'sst2': cannot read {root / ftr} / {root / fva}: {exc}\n"
                                       f"Expected layout: {registry.RAW_LAYOUT['sst2']}") from exc
            paths = {"train": root / ftr, "validation": root / fva}
            layout = kind
            break
    zip_digests: Dict[str, str] = {}
    if not frames and (root / "SST-2.zip").is_file():
        try:
            with zipfile.ZipFile(root / "SST-2.zip") as zf:
                for split, member in _SST2_TSV.items():
                    data = zf.read(member)
                    zip_digests[split] = bytes_sha256(data)
                    frames[split] = _read_tsv(io.BytesIO(data))
        except Exception as exc:
            raise DataCorruptError(f"Dataset 'sst2': cannot read {root / 'SST-2.zip'}: {exc}") from exc
        layout = "glue_zip"
    if not frames:
        raise missing_error("sst2", raw_dir, [SST2_FORMS])
    _check_sst2_frames(frames)
    problems = {}
    for split, df in frames.items():
        tsv_rel = _SST2_TSV[split]
        if layout == "tsv" and file_hash(paths[split], "sha256") == registry.CHECKSUMS["sst2"][tsv_rel][1]:
            checks.record(paths[split], f"sha256 = GLUE SST-2 {tsv_rel.split('/')[1]}", True)
            continue
        if layout == "glue_zip" and zip_digests[split] == registry.CHECKSUMS["sst2"][tsv_rel][1]:
            continue
        problems[split] = _sst2_content_problem(split, df)
        if layout != "glue_zip":
            if problems[split]:
                checks.unverified(paths[split], problems[split], "expected the GLUE SST-2 rows")
            else:
                checks.record(paths[split], f"content sha256 of (sentence, label) rows = GLUE SST-2 {split} "
                                            f"({registry.CONTENT_SHA256['sst2'][split]})", True)
    if layout == "glue_zip":
        bad = "; ".join(v for v in problems.values() if v)
        if bad:
            checks.unverified(root / "SST-2.zip", bad, "expected the GLUE SST-2 train.tsv/dev.tsv")
        else:
            checks.record(root / "SST-2.zip", "sha256 of SST-2/train.tsv and SST-2/dev.tsv inside = GLUE SST-2"
                          if not problems else "content sha256 of the rows inside = GLUE SST-2", True)
    info = {"layout": layout, "rows": {k: int(len(v)) for k, v in frames.items()}, "checks": checks}
    info["rows_match_official"] = info["rows"] == SST2_EXPECTED_ROWS
    return frames, info


def download_sst2(raw_dir) -> None:
    """Hugging Face ``load_dataset('glue', 'sst2')`` saved as parquet in the hub's own file layout."""
    root = Path(raw_dir) / "sst2"
    require_network("sst2", raw_dir, [SST2_FORMS])
    (root / "sst2").mkdir(parents=True, exist_ok=True)
    try:
        import datasets
        try:
            ds = datasets.load_dataset("nyu-mll/glue", "sst2", cache_dir=str(root / "hf_cache"))
        except Exception:
            ds = datasets.load_dataset("glue", "sst2", cache_dir=str(root / "hf_cache"))
    except Exception as exc:
        raise missing_error("sst2", raw_dir, [SST2_FORMS],
                            note=f"Hugging Face download failed: {type(exc).__name__}: {exc}") from exc
    for split, rel in zip(("train", "validation"), _SST2_CANDIDATES["hf"]):
        tmp = root / (rel + ".tmp")
        ds[split].to_parquet(str(tmp))
        tmp.replace(root / rel)


def preprocess_sst2(raw_dir, options: Dict[str, Any]):
    frames, info = load_sst2_raw(raw_dir, bool(options.get("allow_unverified", False)))
    checks = info.pop("checks")
    tr = frames["train"]
    seed = int(options.get("split_seed", 0))
    fraction = float(options.get("val_fraction", 0.1))
    n_val = int(options["val_size"]) if options.get("val_size") else max(1, round(len(tr) * fraction))
    tr_idx, va_idx = holdout(len(tr), n_val, seed)
    tr_idx, sub_note = subsample_train(tr_idx, options, seed)
    sent = tr["sentence"].astype(str).tolist()
    lab = tr["label"].to_numpy(dtype=np.int64)
    te_sent = frames["validation"]["sentence"].astype(str).tolist()
    texts = {"train": [tokenize_sst(sent[i]) for i in tr_idx], "val": [tokenize_sst(sent[i]) for i in va_idx],
             "test": [tokenize_sst(s) for s in te_sent]}
    labels = {"train": lab[tr_idx], "val": lab[va_idx], "test": frames["validation"]["label"].to_numpy(dtype=np.int64)}
    return build_sequence_classification(
        "sst2", texts, labels, ["negative", "positive"], options,
        {"source": {"raw_dir": str(Path(raw_dir) / "sst2"), **info},
         "provenance": checks.provenance("GLUE SST-2"), "max_train": options.get("max_train"),
         "split_note": "test = GLUE validation (872); val = seeded holdout of GLUE train; lowercased" + sub_note})


# =========================================================================== PTB POS
WSJ_SECTIONS = {"train": range(0, 19), "val": range(19, 22), "test": range(22, 25)}


def _nltk_sample_dir(raw_dir) -> Path:
    return Path(raw_dir) / "ptb_pos" / "nltk_data" / "corpora" / "treebank" / "combined"


def ptb_present(raw_dir, source: str = "nltk_sample") -> bool:
    if source == "wsj_full":
        return _wsj_root(raw_dir) is not None
    d = _nltk_sample_dir(raw_dir)
    return (d.is_dir() and any(d.glob("wsj_*.mrg"))) or (d.parent.parent / "treebank.zip").is_file()


def _wsj_root(raw_dir) -> Optional[Path]:
    base = Path(raw_dir) / "ptb_pos"
    for cand in (base / "wsj", base / "treebank_3" / "parsed" / "mrg" / "wsj"):
        if cand.is_dir() and any(cand.glob("[0-2][0-9]/wsj_*.mrg")):
            return cand
    return None


def _tagged_sents(root: Path, fileids: List[str]) -> List[List[Tuple[str, str]]]:
    import nltk.data
    from nltk.corpus.reader import BracketParseCorpusReader
    # NLTK >= 3.9 only reads corpora below a root listed in nltk.data.path (its path sentinel).
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    reader = BracketParseCorpusReader(str(root), fileids)
    out = []
    for fid in fileids:
        for s in reader.tagged_sents(fid):
            s = [(w, t) for w, t in s if t != "-NONE-"]
            if s:
                out.append(s)
    return out


PTB_ZIP = "nltk_data/corpora/treebank.zip"
PTB_COMBINED = "nltk_data/corpora/treebank/combined"
NLTK_SAMPLE_SENTENCES = 3914
# Sentences of the standard WSJ POS split (sections 00-18 / 19-21 / 22-24; Toutanova et al. 2003).
WSJ_SENTENCES = {"train": 38219, "val": 5527, "test": 5462}


def download_ptb(raw_dir) -> None:
    """NLTK's treebank sample into R/ptb_pos/nltk_data (the licensed full WSJ cannot be downloaded)."""
    target = Path(raw_dir) / "ptb_pos" / "nltk_data"
    require_network("ptb_pos", raw_dir, [(PTB_ZIP, PTB_COMBINED + "/wsj_0001.mrg")])
    target.mkdir(parents=True, exist_ok=True)
    ok = False
    err = ""
    try:
        import nltk
        ok = bool(nltk.download("treebank", download_dir=str(target), quiet=True, raise_on_error=True))
    except Exception as exc:
        err = f"{type(exc).__name__}: {exc}"
    if not ok or not ptb_present(raw_dir):
        raise missing_error("ptb_pos", raw_dir, [(PTB_ZIP, PTB_COMBINED + "/wsj_0001.mrg")],
                            note=f"nltk.download('treebank') failed. {err}")


def _mrg_manifest(d: Path) -> Tuple[str, int]:
    files = sorted(d.glob("wsj_*.mrg"))
    return manifest_sha256((f.name, sha256_of(f)) for f in files), len(files)


def _extract_combined(z: Path, d: Path) -> None:
    """Replace ``d`` by the zip's treebank/combined/*.mrg (all or nothing: temp folder + rename)."""
    d.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".combined.tmp-", dir=str(d.parent)))
    try:
        with zipfile.ZipFile(z) as zf:
            for m in zf.namelist():
                if m.startswith("treebank/combined/") and m.endswith(".mrg") and "/" not in m[18:]:
                    (tmp / m[18:]).write_bytes(zf.read(m))
        os.chmod(tmp, umask_mode(0o777))  # mkdtemp makes 0700: others sharing the raw folder must enter it
        if d.exists():
            shutil.rmtree(d)
        os.rename(tmp, d)
    except zipfile.BadZipFile as exc:
        raise DataCorruptError(f"Dataset 'ptb_pos': {z} is not a valid zip archive: {exc}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _nltk_sample_files(raw_dir, checks: Checks) -> Path:
    """Verified folder of the NLTK sample's .mrg files (extracted from a verified zip if needed)."""
    root = Path(raw_dir) / "ptb_pos"
    z, d = root / PTB_ZIP, root / PTB_COMBINED
    want = registry.CONTENT_SHA256["ptb_pos"]["combined"]
    have_dir = d.is_dir() and any(d.glob("wsj_*.mrg"))
    if z.is_file():
        verify_file("ptb_pos", raw_dir, PTB_ZIP, checks)  # raises unless verified or allowed
        if not have_dir or _mrg_manifest(d)[0] != want:
            _extract_combined(z, d)  # the folder is derived from the zip: refresh it
        return d
    if not have_dir:
        raise missing_error("ptb_pos", raw_dir, [(PTB_ZIP, PTB_COMBINED + "/wsj_0001.mrg .. wsj_0199.mrg")])
    got, n = _mrg_manifest(d)
    if got == want:
        checks.record(d, f"manifest sha256 of the {n} wsj_*.mrg files = that of NLTK's treebank.zip ({want})",
                      True, sha256=got)
    else:
        checks.unverified(d, f"manifest sha256 of its {n} wsj_*.mrg files is {got}",
                          f"expected {want} (the 199 files of NLTK's treebank.zip)", sha256=got)
    return d


def load_ptb(raw_dir, options: Dict[str, Any], checks: Optional[Checks] = None
             ) -> Tuple[Dict[str, List], Dict[str, Any]]:
    source = options.get("ptb_source", "nltk_sample")
    checks = checks if checks is not None else Checks("ptb_pos", raw_dir, bool(options.get("allow_unverified", False)))
    if source == "wsj_full":
        root = _wsj_root(raw_dir)
        if root is None:
            raise missing_error("ptb_pos", raw_dir, ["wsj/00/wsj_0001.mrg"],
                                note="ptb_source='wsj_full' needs the licensed LDC99T42 Treebank-3 WSJ .mrg files.")
        files = sorted(str(p.relative_to(root)) for p in root.glob("[0-2][0-9]/wsj_*.mrg"))
        sents = {k: _tagged_sents(root, [f for f in files if int(f[:2]) in secs]) for k, secs in WSJ_SECTIONS.items()}
        for k, v in sents.items():
            if not v:
                raise DataMissingError(f"Dataset 'ptb_pos' (wsj_full): no sentences for split {k!r} "
                                       f"(sections {list(WSJ_SECTIONS[k])}) under {root}")
        counts = {k: len(v) for k, v in sents.items()}
        digest = manifest_sha256((f, sha256_of(root / f)) for f in files)
        if counts == WSJ_SENTENCES:
            checks.record(root, f"sentence counts {counts} = the standard WSJ POS split (no published checksum)",
                          True, sha256=digest)
        else:
            checks.unverified(root, f"sentence counts {counts}", f"the standard WSJ POS split has {WSJ_SENTENCES}",
                              sha256=digest)
        keep, sub = subsample_train(np.arange(len(sents["train"])), options, int(options.get("split_seed", 0)))
        sents["train"] = [sents["train"][i] for i in keep]
        return sents, {"ptb_source": source, "root": str(root), "n_files": len(files), "checks": checks,
                       "split_note": "standard WSJ POS sections 00-18 / 19-21 / 22-24" + sub}
    if source != "nltk_sample":
        raise ValueError(f"ptb_source must be 'nltk_sample' or 'wsj_full', got {source!r}")
    d = _nltk_sample_files(raw_dir, checks)
    files = sorted(p.name for p in d.glob("wsj_*.mrg"))
    try:
        all_sents = _tagged_sents(d, files)
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'ptb_pos': cannot parse the treebank files in {d}: {exc}") from exc
    if len(all_sents) < 10:
        raise DataCorruptError(f"Dataset 'ptb_pos': only {len(all_sents)} sentences parsed from {d}")
    tr, va, te = three_way(len(all_sents), float(options.get("val_fraction", 0.1)),
                           float(options.get("test_fraction", 0.1)), int(options.get("split_seed", 0)))
    tr, sub = subsample_train(tr, options, int(options.get("split_seed", 0)))
    sents = {"train": [all_sents[i] for i in tr], "val": [all_sents[i] for i in va], "test": [all_sents[i] for i in te]}
    return sents, {"ptb_source": source, "root": str(d), "n_files": len(files), "n_sentences": len(all_sents),
                   "checks": checks,
                   "split_note": "NLTK WSJ sample (no official split): "
                                 + split_note(tr, va, te, "seeded sentence-level") + sub}


def preprocess_ptb(raw_dir, options: Dict[str, Any]):
    sents, info = load_ptb(raw_dir, options)
    checks = info.pop("checks")
    what = "NLTK 10% WSJ sample" if info["ptb_source"] == "nltk_sample" else "LDC Treebank-3 WSJ"
    return build_token_classification("ptb_pos", sents, options,
                                      {"source": info, "split_note": info.pop("split_note"),
                                       "provenance": checks.provenance(what)})


# ------------------------------------------------------------------ --from plans and the sources
def plan_ptb(name, ix, opts):
    """--from for PTB: the NLTK zip, else a folder of wsj_*.mrg (or the full WSJ tree with wsj_full)."""
    if opts.get("ptb_source") == "wsj_full":
        roots = [d for d in ix.all_dirs()
                 if sum(1 for s in range(25) if any((d / f"{s:02d}").glob("wsj_*.mrg"))) >= 3]
        root = pick(name, "the WSJ folder (sections 00..24)", roots, None)
        if root is None:
            return [], [], ["wsj/00/wsj_0001.mrg"]
        return [(root, "wsj")], [], []
    zip_rel = "nltk_data/corpora/treebank.zip"
    z = pick(name, "treebank.zip", ix.files.get("treebank.zip", []), checksum_ok("ptb_pos", zip_rel))
    if z is not None:
        return [(z, zip_rel)], [], []
    dirs = [d for d in ix.all_dirs() if any(d.glob("wsj_*.mrg"))]
    d = pick(name, "the folder of wsj_*.mrg files", [x for x in dirs if x.name == "combined"] or dirs, None)
    if d is not None:
        return [(d, "nltk_data/corpora/treebank/combined")], [zip_rel], []
    return [], [], [(zip_rel, "nltk_data/corpora/treebank/combined/wsj_0001.mrg")]


def plan_sst2(name, ix, opts):
    """--from for SST-2: the GLUE TSVs, the GLUE zip, or the Hugging Face parquet pair."""
    pairs = [("train.tsv", "dev.tsv", "SST-2/train.tsv", "SST-2/dev.tsv"),
             ("train-00000-of-00001.parquet", "validation-00000-of-00001.parquet",
              "sst2/train-00000-of-00001.parquet", "sst2/validation-00000-of-00001.parquet"),
             ("train.parquet", "validation.parquet", "train.parquet", "validation.parquet")]
    all_rels = ["SST-2.zip"] + [r for p in pairs for r in p[2:]]
    for a, b, ra, rb in pairs:
        good = checksum_ok("sst2", ra) if ra in registry.CHECKSUMS["sst2"] else None
        src = pick(name, a, [p for p in ix.files.get(a, []) if (p.parent / b).is_file()], good)
        if src is not None:
            return [(src, ra), (src.parent / b, rb)], [r for r in all_rels if r not in (ra, rb)], []
        if a == "train.tsv":  # the GLUE zip comes right after the TSVs in preference
            z = pick(name, "SST-2.zip", ix.files.get("SST-2.zip", []), None)
            if z is not None:
                return [(z, "SST-2.zip")], [r for r in all_rels if r != "SST-2.zip"], []
    return [], [], [("SST-2/train.tsv", "SST-2.zip", "sst2/train-00000-of-00001.parquet")]


def _fetch_ptb(raw_dir, opts) -> None:
    if opts.get("ptb_source") == "wsj_full":
        raise missing_error("ptb_pos", raw_dir, ["wsj/00/wsj_0001.mrg"],
                            note="The full WSJ treebank (LDC99T42) is licensed and cannot be downloaded.")
    download_ptb(raw_dir)


PTB_POS = DatasetSource(
    build=lambda raw, opts: preprocess_ptb(raw, opts),
    present=lambda raw, opts: ptb_present(raw, opts.get("ptb_source", "nltk_sample")),
    verify=lambda raw, opts: load_ptb(raw, opts)[1]["checks"],
    fetch=_fetch_ptb, plan_from=plan_ptb, hints=("treebank", "ptb"))
SST2 = DatasetSource(
    build=lambda raw, opts: preprocess_sst2(raw, opts),
    present=lambda raw, opts: sst2_present(raw),
    verify=lambda raw, opts: load_sst2_raw(raw, bool(opts.get("allow_unverified", False)))[1]["checks"],
    fetch=lambda raw, opts: download_sst2(raw), plan_from=plan_sst2, hints=("sst",),
    loader_verifies=("*",))  # the same rows in a GLUE zip or a parquet pair verify by content
