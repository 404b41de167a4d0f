"""The workflow config: load, merge presets, validate, and resolve one run's settings.

``config.yaml`` holds the paper's grid. A preset such as
``workflow/presets/smoke.yaml`` is merged on top (Snakemake does the same with
``--configfile``); then ``--config key=value`` overrides win.

A run's settings are the family block (``families.<vision|nlp|tabular>``)
overridden by the dataset's block (``dataset_config.<name>``), plus the shared
AutoNorm, norm, runtime and evaluation blocks. The Snakemake rule passes this
resolved dict as a param, so editing one dataset's block reruns only its jobs.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from .methods import METHODS

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in (override or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_config(path: str | Path, *extra: str | Path) -> dict:
    with open(path) as f:
        cfg = yaml.safe_load(f) or {}
    for e in extra:
        with open(e) as f:
            cfg = deep_merge(cfg, yaml.safe_load(f) or {})
    check_config(cfg)
    return cfg


class ConfigError(ValueError):
    pass


def check_config(cfg: dict, schema_path: str | Path | None = None) -> None:
    """JSON-schema validation plus the cross-key checks a schema cannot express.

    Raises ConfigError naming the offending key, before any job runs.
    """
    import jsonschema

    schema_path = Path(schema_path) if schema_path else SCHEMA_PATH
    if schema_path.exists():
        schema = yaml.safe_load(schema_path.read_text())
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg), key=lambda e: list(e.path))
        if errors:
            e = errors[0]
            where = ".".join(str(p) for p in e.absolute_path) or "<top level>"
            raise ConfigError(f"config key {where}: {e.message}")
    from .data import DATASETS

    for d in cfg.get("datasets", []):
        if d not in DATASETS:
            raise ConfigError(f"config key datasets: unknown dataset {d!r}; known: {sorted(DATASETS)}")
        if d not in cfg.get("dataset_config", {}):
            raise ConfigError(f"config key dataset_config: no block for dataset {d!r}")
    for m in cfg.get("methods", []):
        if m not in METHODS:
            raise ConfigError(f"config key methods: unknown method {m!r}; known: {sorted(METHODS)}")
    for d, block in cfg.get("dataset_config", {}).items():
        fam = block.get("family")
        if fam not in cfg.get("families", {}):
            raise ConfigError(f"config key dataset_config.{d}.family: unknown family {fam!r}")
    ref = cfg.get("reference_method")
    if ref and cfg.get("methods") and ref not in cfg["methods"]:
        raise ConfigError(f"config key reference_method: {ref!r} is not among methods {cfg['methods']}")


def results_dir(cfg: dict) -> str:
    return str(cfg.get("results_dir", "results")).rstrip("/")


def resolve_run_config(cfg: dict, dataset: str, method: str, seed: int) -> dict:
    """Everything one training run needs, as plain JSON-able data."""
    dcfg = cfg["dataset_config"][dataset]
    family = dcfg["family"]
    fam = cfg["families"][family]
    auto = dict(cfg.get("autonorm", {}))
    freeze_enabled = bool(auto.get("freeze", {}).get(family, True))
    norm_options = dict(cfg.get("norm_options", {}))
    norm_options.update(tau=auto.get("tau", 0.5),
                        drop_noise_when_frozen=auto.get("drop_noise_when_frozen", True))
    res = results_dir(cfg)
    return {
        "dataset": dataset,
        "method": method,
        "seed": int(seed),
        "family": family,
        "data_dir": f"{res}/data/{dataset}",
        "out_dir": f"{res}/runs/{dataset}/{method}/seed{seed}",
        "model": deep_merge(fam.get("model", {}), dcfg.get("model", {})),
        "train": deep_merge(fam.get("train", {}), dcfg.get("train", {})),
        "autonorm": {"tau": auto.get("tau", 0.5), "t_freeze": auto.get("t_freeze", 10),
                     "eps_h": auto.get("eps_h", 0.1), "freeze_enabled": freeze_enabled,
                     "drop_noise_when_frozen": auto.get("drop_noise_when_frozen", True)},
        "norm_options": norm_options,
        "runtime": dict(cfg.get("runtime", {})),
        "evaluation": dict(cfg.get("evaluation", {})),
    }
