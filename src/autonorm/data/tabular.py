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
"""
from __future__ import annotations

import io
import os
import tarfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from . import registry
from .errors import DataCorruptError
from .integrity import missing_error, sha256_of, verify_file
from .storage import three_way

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
        "split_note": f"seeded shuffle split val={options.get('val_fraction')} test={options.get('test_fraction')}; "
                      "features standardised with train statistics",
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


def load_energy(raw_dir):
    import pandas as pd
    root, (xlsx, csv, zp) = _energy_candidates(raw_dir)
    src = next((p for p in (xlsx, csv, zp) if p.is_file()), None)
    if src is None:
        raise missing_error("energy_efficiency", raw_dir, ["ENB2012_data.xlsx"],
                            note="(UCI publishes no checksum; the .csv or the UCI zip are accepted too)")
    try:
        if src == xlsx:
            df = pd.read_excel(xlsx, engine="openpyxl")
        elif src == csv:
            df = pd.read_csv(csv)
        else:
            with zipfile.ZipFile(zp) as zf:
                name = next(n for n in zf.namelist() if n.lower().endswith(".xlsx"))
                df = pd.read_excel(io.BytesIO(zf.read(name)), engine="openpyxl")
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'energy_efficiency': cannot read {src}: {type(exc).__name__}: {exc}. "
                               f"Expected layout: {registry.RAW_LAYOUT['energy_efficiency']}") from exc
    df = _clean_energy(df, src)
    return df, {"file": str(src), "sha256": sha256_of(src), "rows": int(len(df)),
                "rows_match_official": int(len(df)) == ENERGY_ROWS}


def download_energy(raw_dir) -> None:
    """UCI static archive (zip with ENB2012_data.xlsx), old direct xlsx URL as fallback."""
    root = Path(raw_dir) / "energy_efficiency"
    root.mkdir(parents=True, exist_ok=True)
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
    df, info = load_energy(raw_dir)
    target = options.get("target", "heating_load")
    if target not in ENERGY_TARGETS:
        raise ValueError(f"energy_efficiency target must be one of {list(ENERGY_TARGETS)}, got {target!r}")
    X = df[list(ENERGY_FEATURES)].to_numpy(dtype=np.float64)
    y = df[ENERGY_TARGETS[target]].to_numpy(dtype=np.float64)
    return build_regression("energy_efficiency", X, y, list(ENERGY_FEATURES.values()), target, options,
                            {"source": info, "target_column": ENERGY_TARGETS[target], "target_units": "kWh/m^2"})


# =========================================================================== California Housing
CAL_FEATURES = ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude"]


def _cal_paths(raw_dir):
    root = Path(raw_dir) / "california_housing"
    return root, root / "cal_housing_py3.pkz", root / "cal_housing.tgz"


def california_present(raw_dir) -> bool:
    _, pkz, tgz = _cal_paths(raw_dir)
    return pkz.is_file() or tgz.is_file()


def _pkz_from_tgz(tgz: Path, pkz: Path) -> None:
    """What scikit-learn does after downloading (same column order), leaving the user's archive in place."""
    import joblib
    with tarfile.open(tgz, mode="r:gz") as f:
        arr = np.loadtxt(f.extractfile("CaliforniaHousing/cal_housing.data"), delimiter=",")
    arr = arr[:, [8, 7, 2, 3, 4, 5, 6, 1, 0]]
    tmp = pkz.with_name(pkz.name + ".part")
    joblib.dump(arr, tmp, compress=6)
    os.replace(tmp, pkz)


def download_california(raw_dir) -> None:
    """scikit-learn's fetch_california_housing (it verifies the archive's SHA-256)."""
    from sklearn.datasets import fetch_california_housing
    root, _, _ = _cal_paths(raw_dir)
    root.mkdir(parents=True, exist_ok=True)
    try:
        fetch_california_housing(data_home=str(root), download_if_missing=True)
    except Exception as exc:
        raise missing_error("california_housing", raw_dir, ["cal_housing.tgz"],
                            note=f"scikit-learn download failed: {type(exc).__name__}: {exc}") from exc


def load_california(raw_dir):
    from sklearn.datasets import fetch_california_housing
    root, pkz, tgz = _cal_paths(raw_dir)
    info: Dict[str, Any] = {}
    if not pkz.is_file():
        if not tgz.is_file():
            raise missing_error("california_housing", raw_dir, ["cal_housing.tgz"],
                                note=f"(or scikit-learn's cache {pkz.resolve()})")
        info["archive_sha256"] = verify_file("california_housing", raw_dir, "cal_housing.tgz")
        try:
            _pkz_from_tgz(tgz, pkz)
        except Exception as exc:
            raise DataCorruptError(f"Dataset 'california_housing': cannot read {tgz}: {exc}") from exc
    try:
        X, y = fetch_california_housing(data_home=str(root), download_if_missing=False, return_X_y=True)
    except Exception as exc:
        raise DataCorruptError(f"Dataset 'california_housing': scikit-learn cannot load {pkz}: "
                               f"{type(exc).__name__}: {exc}. Delete it and place cal_housing.tgz "
                               f"(sha256 {registry.CHECKSUMS['california_housing']['cal_housing.tgz'][1]}) "
                               f"in {root.resolve()}.") from exc
    if X.ndim != 2 or X.shape[1] != 8 or len(y) != len(X):
        raise DataCorruptError(f"Dataset 'california_housing': unexpected shape {X.shape} in {pkz}")
    info.update({"file": str(pkz), "sha256": sha256_of(pkz), "rows": int(len(y)),
                 "rows_match_official": int(len(y)) == CAL_ROWS})
    return X, y, info


def preprocess_california(raw_dir, options: Dict[str, Any]):
    X, y, info = load_california(raw_dir)
    return build_regression("california_housing", X, y, CAL_FEATURES, "MedHouseVal", options,
                            {"source": info, "target_units": "100,000 USD"})


# =========================================================================== smoke: diabetes
def preprocess_smoke_diabetes(options: Dict[str, Any]):
    """scikit-learn's bundled diabetes data, unscaled features, target in original units."""
    from sklearn.datasets import load_diabetes
    d = load_diabetes(scaled=False)
    return build_regression("smoke_diabetes", d.data, d.target, list(d.feature_names), "disease_progression",
                            options, {"source": {"sklearn": "load_diabetes(scaled=False)"},
                                      "target_units": "quantitative disease progression one year after baseline"})
