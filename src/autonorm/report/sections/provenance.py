"""Provenance of the report (config hash, versions, devices) and the statistics used."""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
from pathlib import Path

from autonorm.io_utils import read_json
from autonorm.report.context import ReportContext
from autonorm.report.fmt import md_table


def config_hash(config_json: str | None) -> str | None:
    """sha256 of the config json in canonical form: ``json.dumps(cfg, sort_keys=True)``.

    Canonical so that the same config passed with different whitespace or key
    order gets the same hash.  An unparsable string is hashed as given.
    """
    if config_json is None:
        return None
    try:
        canon = json.dumps(json.loads(config_json), sort_keys=True)
    except ValueError:
        canon = config_json
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _flatten(d, prefix: str = "") -> dict:
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif isinstance(d, list):
        out[prefix[:-1]] = ", ".join(map(str, d))
    else:
        out[prefix[:-1]] = d
    return out


def collect_env(runs_dir: str | Path | None) -> dict[str, dict[str, int]]:
    """Distinct values of version / device fields over all runs' env.json.

    env.json's exact keys are the trainer's business, so this is tolerant:
    any (nested) key whose name mentions a version, a package, python, torch,
    cuda, a device, a GPU/CPU or threads is kept; host names and times are not.
    """
    found: dict[str, dict[str, int]] = {}
    if runs_dir is None or not Path(runs_dir).is_dir():
        return found
    wanted = ("version", "versions", "packages", "python", "torch", "numpy", "cuda", "cudnn",
              "device", "gpu", "cpu", "threads", "platform", "git_commit")
    for p in sorted(Path(runs_dir).rglob("env.json")):
        try:
            env = read_json(p)
        except (OSError, ValueError):
            continue
        for k, v in _flatten(env).items():
            kl = k.lower()
            if any(w in kl for w in ("host", "time", "date", "pid", "user", "path", "cwd",
                                     "slurm")):
                continue
            if any(w in kl for w in wanted):
                found.setdefault(k, {})
                found[k][str(v)] = found[k].get(str(v), 0) + 1
    return found


def _local_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "seaborn"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            out[mod] = "not installed"
    return out


def _now() -> str:
    sde = os.environ.get("SOURCE_DATE_EPOCH")
    if sde and sde.isdigit():
        t = _dt.datetime.fromtimestamp(int(sde), tz=_dt.timezone.utc)
    else:
        t = _dt.datetime.now(tz=_dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


def run_config_view(cfg):
    """The config as it applies to this run: the per-dataset blocks (``dataset_config``,
    ``raw_from``) of datasets the run does not have are left out (the config hash above is of
    the whole config)."""
    if not isinstance(cfg, dict) or not isinstance(cfg.get("datasets"), list):
        return cfg
    keep = set(cfg["datasets"])
    out = dict(cfg)
    for key in ("dataset_config", "raw_from"):
        if isinstance(out.get(key), dict):
            out[key] = {d: v for d, v in out[key].items() if d in keep}
    return out


def provenance_section(ctx: ReportContext) -> str:
    config_json, runs_dir = ctx.config_json, ctx.provenance_from
    lines = ["## Provenance", "", f"- Report generated: {_now()}"]
    h = config_hash(config_json)
    lines.append("- Config hash (sha256 of the config json, keys sorted): "
                 + (f"`{h}`" if h else "not given (--config-json absent)"))
    lv = _local_versions()
    lines.append("- Report environment: " + ", ".join(f"{k} {v}" for k, v in lv.items()))
    env = collect_env(runs_dir)
    if runs_dir is None:
        lines.append("- Run environments: not collected (--provenance-from absent)")
    elif not env:
        lines.append(f"- Run environments: no env.json with version/device fields under "
                     f"{runs_dir}")
    else:
        lines += ["- Run environments (distinct values over all runs' env.json; count of runs):",
                  "", md_table(["field", "values"],
                               [[k, "; ".join(f"{val} ({c})" for val, c in vs.items())]
                                for k, vs in sorted(env.items())]), ""]
    if config_json:
        try:
            pretty_cfg = json.dumps(run_config_view(json.loads(config_json)), indent=2, sort_keys=True)
        except ValueError:
            pretty_cfg = config_json
        lines += ["", "<details><summary>Config (the datasets of this run)</summary>", "", "```json",
                  pretty_cfg, "```", "",
                  "</details>"]
    lines.append("")
    return "\n".join(lines)


def stats_notes(ctx: ReportContext) -> str:
    ref = ctx.reference_method
    return "\n".join([
        "## Statistical methods", "",
        "Described in docs/method.md section 5; in short:", "",
        "- Over seeds: mean, sample std (ddof = 1), two-sided 95% Student-t interval "
        "(mean ± t(0.975, n−1)·std/√n); n counts finished (ok) runs only.",
        f"- {ref} is compared with every other method by a paired t-test over the seeds "
        "present in both (seed i against seed i, same data order); d_z = mean difference / "
        f"sd of the differences; difference = {ref} − other (for ↓ metrics a negative "
        f"difference favours {ref}).",
        "- Power: the detectable Δ solves the noncentral-t power equation of a two-sided "
        "paired t-test (80% power; statsmodels TTestPower) for this n and the observed sd of "
        "the paired differences, in the metric's units, at the level the test faces in Holm's "
        "step-down procedure (α / (m − r + 1) for the r-th smallest of the family's m "
        "p-values), so it matches the Holm-adjusted p beside it. With fewer than 3 paired seeds "
        "no test is reported.",
        "- Holm correction per dataset and metric family: one family for the primary metrics "
        "(accuracy, tag perplexity, RMSE: every baseline × metric of that dataset), one for the "
        "secondary metrics (macro precision/recall/F1, MAE) and one for robustness "
        "(rotation, the three severity-3 corruption cells; their means `mean_s3` and "
        "`mean_all` are derived from the cells and shown with a raw p, outside Holm). Tests "
        "that could not be run are left out of the "
        "family. Cost figures are not tested. Methods that are the same training runs are "
        "not tested against each other.",
        "- Wilcoxon signed-rank p as a check only with n ≥ 6 pairs (with 5 or fewer its smallest "
        "exact two-sided p, 2/2^n, is at least 0.0625: it could never reject at 5%).",
        "- Source tables: `summary.csv`, `comparisons.csv`, `runs.csv`, `datasets.csv`, "
        "`baselines.csv`, `ablations.csv`, `gates.csv`, `history.csv`, `freeze.csv`, "
        "`corruptions.csv`.", ""])
