"""Tabular regression: UCI Energy Efficiency and California Housing (and the smoke diabetes set).

Neither source has an official split, so rows are shuffled with
``split_seed`` and split train/val/test: Energy Efficiency 70/15/15 (768 rows
-> 538/115/115), California Housing 80/10/10 (20,640 -> 16,512/2,064/2,064).
Features are standardised with the mean/std of the *training split only*
(stored in meta as feature_mean/feature_std); the target stays in its original
units (Energy: kWh/m^2; California: 100,000 USD as scikit-learn provides it) and
its train mean/std are recorded (y_mean, y_std) so the trainer can standardise
it internally and report RMSE/MAE in original units.

Energy Efficiency target: ``target='heating_load'`` (Y1, default) or
``'cooling_load'`` (Y2); the other load is never used as a feature.

Verification: the UCI xlsx and StatLib's ``cal_housing.data`` / ``.tgz`` by
SHA-256; a CSV or re-zipped copy of the Energy table by a canonical hash of
its numeric content (registry.CONTENT_SHA256).  California Housing is parsed
from the text file with numpy only: scikit-learn's pickled cache
(``cal_housing_py3.pkz``) is never read, since unpickling a user-supplied file
can run arbitrary code.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from . import registry
from .errors import DataCorruptError
from .integrity import Checks, bytes_sha256, missing_error, require_network, sha256_of, table_sha256
from .local_source import plan_alternatives
from .source import DatasetSource
from .storage import split_note, subsample_train, three_way

ENERGY_FEATURES = {
    "X1": "relative_compactness", "X2": "surface_area", "X3": "wall_area", "X4": "roof_area",
    "X5": "overall_height", "X6": "orientation", "X7": "glazing_area", "X8": "glazing_area_distribution",
}
ENERGY_TARGETS = {"heating_load": "Y1", "cooling_load": "Y2"}
ENERGY_ROWS = 768
CAL_ROWS = 20640


def build_regression(name: str, X: np.ndarray, y: np.ndarray, feature_names: List[str], target_name: str,
                     options: Dict[str, Any], extra: Optional[Dict[str, Any]] = None):
    """Seeded split + train-only standardisation -> (meta, splits)."""
    spec = registry.get_spec(name)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    seed = int(options.get("split_seed", 0))
    tr, va, te = three_way(len(y), float(options.get("val_fraction", 0.15)), float(options.get("test_fraction", 0.15)), seed)
    tr, sub = subsample_train(tr, options, seed)
    mu = X[tr].mean(axis=0)
    sd = X[tr].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    out = {k: (((X[idx] - mu) / sd).astype(np.float32), y[idx].astype(np.float32))
           for k, idx in (("train", tr), ("val", va), ("test", te))}
    meta = {
        "name": name, "task": spec.task, "family": spec.family, "standin": spec.standin,
        "description": spec.description,
        "sizes": {k: int(len(v[1])) for k, v in out.items()},
        "split_seed": seed,
        "num_features": int(X.shape[1]), "feature_names": list(feature_names), "target_name": target_name,
        "feature_mean": mu.tolist(), "feature_std": sd.tolist(),
        "y_mean": float(y[tr].mean()), "y_std": float(y[tr].std()),
        "split_note": split_note(tr, va, te, "seeded shuffle") + sub + "; features standardised with train statistics",
        "options": dict(options),
    }
    meta.update(extra or {})
    return meta, out


# =========================================================================== Energy Efficiency
def _energy_candidates(raw_dir):
    root = Path(raw_dir) / "energy_efficiency"
    return root, [root / "ENB2012_data.xlsx", root / "ENB2012_data.csv", root / "energy+efficiency.zip"]


def energy_present(raw_dir) -> bool:
    return any(p.is_file() for p in _energy_candidates(raw_dir)[1])


def _clean_energy(df, src: Path):
    import pandas as pd
    df = df.rename(columns=lambda c: str(c).strip())
    df = df.loc[:, [c for c in df.columns if not c.startswith("Unnamed")]].dropna(how="all")
    need = list(ENERGY_FEATURES) + ["Y1", "Y2"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise DataCorruptError(f"Dataset 'energy_efficiency': {src} lacks columns {missing} (has {list(df.columns)}). "
                               f"Expected the UCI id 242 table with columns X1..X8, Y1, Y2.")
    try:
        df = df[need].apply(pd.to_numeric, errors="raise")
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'energy_efficiency': non-numeric values in {src}: {exc}") from exc
    if df.isna().any().any():
        raise DataCorruptError(f"Dataset 'energy_efficiency': missing values in {src}")
    return df


def load_energy(raw_dir, allow_unverified: bool = False, checks: Optional[Checks] = None):
    import pandas as pd
    root, (xlsx, csv, zp) = _energy_candidates(raw_dir)
    checks = checks if checks is not None else Checks("energy_efficiency", raw_dir, allow_unverified)
    src = next((p for p in (xlsx, csv, zp) if p.is_file()), None)
    if src is None:
        raise missing_error("energy_efficiency", raw_dir,
                            [("ENB2012_data.xlsx", "ENB2012_data.csv", "energy+efficiency.zip")])
    published = registry.CHECKSUMS["energy_efficiency"]["ENB2012_data.xlsx"][1]
    same_bytes = False
    try:
        if src == xlsx:
            same_bytes = sha256_of(xlsx) == published
            df = pd.read_excel(xlsx, engine="openpyxl")
        elif src == csv:
            df = pd.read_csv(csv)
        else:
            with zipfile.ZipFile(zp) as zf:
                name = next(n for n in zf.namelist() if n.lower().endswith(".xlsx"))
                data = zf.read(name)
            same_bytes = bytes_sha256(data) == published
            df = pd.read_excel(io.BytesIO(data), engine="openpyxl")
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'energy_efficiency': cannot read {src}: {type(exc).__name__}: {exc}. "
                               f"Expected layout: {registry.RAW_LAYOUT['energy_efficiency']}") from exc
    df = _clean_energy(df, src)
    content = table_sha256(df[list(ENERGY_FEATURES) + ["Y1", "Y2"]].to_numpy(dtype=np.float64))
    want = registry.CONTENT_SHA256["energy_efficiency"]["table"]
    if same_bytes:
        checks.record(src, "sha256 = UCI ENB2012_data.xlsx" + (" (inside the zip)" if src == zp else ""), True)
    elif content == want:
        checks.record(src, f"content sha256 of the {len(df)}x10 numeric table (X1..X8, Y1, Y2) = the UCI "
                           f"xlsx's ({want})", True)
    elif len(df) != ENERGY_ROWS:
        checks.unverified(src, f"{len(df)} rows", f"the UCI table has {ENERGY_ROWS} rows")
    else:
        checks.unverified(src, f"content sha256 of the numeric table is {content}",
                          f"expected {want} (the UCI table)")
    return df, {"file": str(src), "sha256": sha256_of(src), "rows": int(len(df)),
                "rows_match_official": int(len(df)) == ENERGY_ROWS, "checks": checks}


def download_energy(raw_dir) -> None:
    """UCI static archive (zip with ENB2012_data.xlsx), old direct xlsx URL as fallback."""
    root = Path(raw_dir) / "energy_efficiency"
    root.mkdir(parents=True, exist_ok=True)
    require_network("energy_efficiency", raw_dir, [("ENB2012_data.xlsx", "energy+efficiency.zip")])
    errors = []
    for fname, url in registry.URLS["energy_efficiency"].items():
        tmp = root / (fname + ".part")
        try:
            with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as fh:
                fh.write(r.read())
            if fname.endswith(".zip"):
                with zipfile.ZipFile(tmp) as zf:
                    name = next(n for n in zf.namelist() if n.lower().endswith(".xlsx"))
                    (root / "ENB2012_data.xlsx.part").write_bytes(zf.read(name))
                tmp.unlink()
                os.replace(root / "ENB2012_data.xlsx.part", root / "ENB2012_data.xlsx")
            else:
                os.replace(tmp, root / fname)
            load_energy(raw_dir)  # format check
            return
        except Exception as exc:
            errors.append(f"{url}: {type(exc).__name__}: {exc}")
            for p in (tmp, root / "ENB2012_data.xlsx.part"):
                if p.exists():
                    p.unlink()
    raise missing_error("energy_efficiency", raw_dir, ["ENB2012_data.xlsx"], note="Download failed: " + "; ".join(errors))


def preprocess_energy(raw_dir, options: Dict[str, Any]):
    df, info = load_energy(raw_dir, bool(options.get("allow_unverified", False)))
    checks = info.pop("checks")
    target = options.get("target", "heating_load")
    if target not in ENERGY_TARGETS:
        raise ValueError(f"energy_efficiency target must be one of {list(ENERGY_TARGETS)}, got {target!r}")
    X = df[list(ENERGY_FEATURES)].to_numpy(dtype=np.float64)
    y = df[ENERGY_TARGETS[target]].to_numpy(dtype=np.float64)
    return build_regression("energy_efficiency", X, y, list(ENERGY_FEATURES.values()), target, options,
                            {"source": info, "target_column": ENERGY_TARGETS[target], "target_units": "kWh/m^2",
                             "provenance": checks.provenance("UCI Energy Efficiency (id 242)")})


# =========================================================================== California Housing
CAL_FEATURES = ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude"]
CAL_MEMBER = "CaliforniaHousing/cal_housing.data"


def _cal_paths(raw_dir):
    root = Path(raw_dir) / "california_housing"
    return root, root / "cal_housing.data", root / "cal_housing.tgz"


def california_present(raw_dir) -> bool:
    _, data, tgz = _cal_paths(raw_dir)
    return data.is_file() or tgz.is_file()


def download_california(raw_dir) -> None:
    """The StatLib archive from scikit-learn's URL, SHA-256 checked (read by us, never unpickled)."""
    root, _, tgz = _cal_paths(raw_dir)
    require_network("california_housing", raw_dir, [("cal_housing.tgz", "cal_housing.data")])
    root.mkdir(parents=True, exist_ok=True)
    url = registry.URLS["california_housing"]["cal_housing.tgz"]
    part = tgz.with_name(tgz.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(part, "wb") as fh:
            shutil.copyfileobj(r, fh, 1 << 20)
        got = sha256_of(part)
        want = registry.CHECKSUMS["california_housing"]["cal_housing.tgz"][1]
        if got != want:
            raise DataCorruptError(f"downloaded {url}: sha256 {got}, expected {want}")
        os.replace(part, tgz)
    except Exception as exc:
        if part.exists():
            part.unlink()
        raise missing_error("california_housing", raw_dir, [("cal_housing.tgz", "cal_housing.data")],
                            note=f"Download of {url} failed: {type(exc).__name__}: {exc}") from exc


def california_from_statlib(arr: np.ndarray):
    """(X, y) exactly as scikit-learn's fetch_california_housing derives them from cal_housing.data.

    StatLib columns: longitude, latitude, housingMedianAge, totalRooms, totalBedrooms, population,
    households, medianIncome, medianHouseValue.  Features: MedInc, HouseAge, AveRooms = rooms/households,
    AveBedrms = bedrooms/households, Population, AveOccup = population/households, Latitude, Longitude;
    target = medianHouseValue / 100,000.
    """
    lon, lat, age, rooms, beds, pop, hh, inc, val = (arr[:, i] for i in range(9))
    X = np.column_stack([inc, age, rooms / hh, beds / hh, pop, pop / hh, lat, lon])
    return X, val / 100000.0


def load_california(raw_dir, allow_unverified: bool = False, checks: Optional[Checks] = None):
    root, data_path, tgz = _cal_paths(raw_dir)
    checks = checks if checks is not None else Checks("california_housing", raw_dir, allow_unverified)
    want_data = registry.CHECKSUMS["california_housing"]["cal_housing.data"][1]
    if data_path.is_file():
        src, raw = data_path, data_path.read_bytes()
        got = bytes_sha256(raw)
        if got == want_data:
            checks.record(src, "sha256 = StatLib cal_housing.data (inside scikit-learn's cal_housing.tgz)", True, got)
        else:
            checks.unverified(src, f"sha256 is {got}", f"expected sha256 {want_data}", got)
    elif tgz.is_file():
        src = tgz
        want_tgz = registry.CHECKSUMS["california_housing"]["cal_housing.tgz"][1]
        tgz_ok = sha256_of(tgz) == want_tgz
        try:
            with tarfile.open(tgz, mode="r:gz") as tf:
                member = tf.extractfile(CAL_MEMBER)
                if member is None:
                    raise KeyError(CAL_MEMBER)
                raw = member.read()
        except Exception as exc:
            raise DataCorruptError(f"Dataset 'california_housing': cannot read {CAL_MEMBER} from {tgz.resolve()}: "
                                   f"{type(exc).__name__}: {exc}") from exc
        if tgz_ok:
            checks.record(tgz, f"sha256 = published (scikit-learn ARCHIVE, {want_tgz})", True)
        elif bytes_sha256(raw) == want_data:
            checks.record(tgz, f"sha256 of {CAL_MEMBER} inside = StatLib cal_housing.data (repacked archive)", True)
        else:
            checks.unverified(tgz, f"sha256 is {sha256_of(tgz)}",
                              f"expected sha256 {want_tgz} (or a {CAL_MEMBER} with sha256 {want_data})")
    else:
        pkz = root / "cal_housing_py3.pkz"
        raise missing_error("california_housing", raw_dir, [("cal_housing.tgz", "cal_housing.data")],
                            note=(f"({pkz.resolve()} exists but is never read: it is a pickle, and unpickling a "
                                  "file runs code. Provide the archive or the data file.)" if pkz.exists() else ""))
    try:
        arr = np.loadtxt(io.BytesIO(raw), delimiter=",", ndmin=2, dtype=np.float64)
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'california_housing': {src.resolve()} is not a comma-separated numeric "
                               f"table: {type(exc).__name__}: {exc}") from exc
    if arr.shape[1] != 9 or not np.isfinite(arr).all() or (arr[:, 6] <= 0).any():
        raise DataCorruptError(f"Dataset 'california_housing': {src.resolve()} has shape {arr.shape} (expected "
                               "N x 9 StatLib columns, finite, households > 0)")
    X, y = california_from_statlib(arr)
    return X, y, {"file": str(src), "sha256": sha256_of(src), "rows": int(len(y)),
                  "rows_match_official": int(len(y)) == CAL_ROWS, "checks": checks}


def preprocess_california(raw_dir, options: Dict[str, Any]):
    X, y, info = load_california(raw_dir, bool(options.get("allow_unverified", False)))
    checks = info.pop("checks")
    return build_regression("california_housing", X, y, CAL_FEATURES, "MedHouseVal", options,
                            {"source": info, "target_units": "100,000 USD",
                             "provenance": checks.provenance("California Housing (StatLib, Pace & Barry 1997)")})


# =========================================================================== smoke: diabetes
def bundled_provenance(status: str, note: str, sklearn_files: List[str] = ()) -> Dict[str, Any]:
    """Provenance of a smoke set: ``stand-in`` (bundled real data, files listed) or ``generated``."""
    files = []
    if sklearn_files:
        import sklearn.datasets
        base = Path(sklearn.datasets.__file__).parent / "data"
        for f in sklearn_files:
            p = base / f
            files.append({"path": f"sklearn/datasets/data/{f}", "sha256": sha256_of(p) if p.is_file() else "",
                          "check": "bundled with the installed scikit-learn (not a published checksum)",
                          "verified": False})
    return {"status": status, "files": files, "note": note}



def preprocess_smoke_diabetes(options: Dict[str, Any]):
    """scikit-learn's bundled diabetes data, unscaled features, target in original units."""
    from sklearn.datasets import load_diabetes
    d = load_diabetes(scaled=False)
    return build_regression("smoke_diabetes", d.data, d.target, list(d.feature_names), "disease_progression",
                            options, {"source": {"sklearn": "load_diabetes(scaled=False)"},
                                      "provenance": bundled_provenance(
                                          "stand-in", "scikit-learn's bundled 'diabetes' data (Efron et al. "
                                          "2004), load_diabetes(scaled=False); stands in for the paper's tabular sets",
                                          ["diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"]),
                                      "target_units": "quantitative disease progression one year after baseline"})


# ------------------------------------------------------------------ the sources
ENERGY_EFFICIENCY = DatasetSource(
    build=lambda raw, opts: preprocess_energy(raw, opts),
    present=lambda raw, opts: energy_present(raw),
    verify=lambda raw, opts: load_energy(raw, bool(opts.get("allow_unverified", False)))[1]["checks"],
    fetch=lambda raw, opts: download_energy(raw),
    plan_from=plan_alternatives([("ENB2012_data.xlsx", "ENB2012_data.xlsx"), ("ENB2012_data.csv", "ENB2012_data.csv"),
                                 ("energy+efficiency.zip", "energy+efficiency.zip")], "energy_efficiency"),
    hints=("energy", "enb2012"))
CALIFORNIA_HOUSING = DatasetSource(
    build=lambda raw, opts: preprocess_california(raw, opts),
    present=lambda raw, opts: california_present(raw),
    verify=lambda raw, opts: load_california(raw, bool(opts.get("allow_unverified", False)))[2]["checks"],
    fetch=lambda raw, opts: download_california(raw),
    plan_from=plan_alternatives([("cal_housing.tgz", "cal_housing.tgz"), ("cal_housing.data", "cal_housing.data")],
                                "california_housing"),
    hints=("cal",),
    loader_verifies=("cal_housing.tgz",))  # a re-packed archive of the same data file verifies by content
SMOKE_DIABETES = DatasetSource(build=lambda raw, opts: preprocess_smoke_diabetes(opts))
