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

import re
from importlib import resources
from pathlib import Path

import yaml

from ..methods import METHODS
from .run_config import ConfigError, deep_merge, resolve_run_config
from .run_config import run_settings_problems

#: the config schema, package data (importlib.resources: an installed package finds it from any
#: folder); workflow/schemas/config.schema.yaml, where the Snakemake catalog layout puts it, is a
#: link to this file
SCHEMA_PATH = Path(str(resources.files("autonorm") / "resources" / "config.schema.yaml"))


def read_yaml(path: str | Path) -> dict:
    """A config file as a dict; a syntax error names the file, line and column."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{where}: YAML syntax error: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file holds keys at its top level, not a {type(data).__name__}")
    return data


def load_config(path: str | Path, *extra: str | Path) -> dict:
    cfg = read_yaml(path)
    for e in extra:
        cfg = deep_merge(cfg, read_yaml(e))
    check_config(cfg)
    return cfg


def _key(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def _schema_problem(e) -> str:
    """One jsonschema error as 'config key <a.b.c>: <what is wrong>'."""
    import difflib

    where = list(e.absolute_path)
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        known = sorted(e.schema.get("properties", {}))
        extra = [k for k in e.instance if k not in known
                 and not any(re.search(pat, str(k)) for pat in e.schema.get("patternProperties", {}))]
        msgs = []
        for k in extra:
            close = difflib.get_close_matches(str(k), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msgs.append(f"config key {_key(where + [k])}: unknown key{hint}; known keys here: {', '.join(known)}")
        if msgs:
            return "\n".join(msgs)
    if e.validator == "required":
        missing = e.message.split("'")[1] if "'" in e.message else e.message
        return f"config key {_key(where + [missing])}: required key missing"
    return f"config key {_key(where)}: {e.message}"


def _first_existing_ancestor_file(path: Path) -> Path | None:
    """The first ancestor of ``path`` (or path itself) that exists and is not a folder."""
    for p in [path, *path.parents]:
        if p.exists():
            return None if p.is_dir() else p
    return None


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def load_schema(schema_path: str | Path | None = None) -> dict:
    """The config schema with its name lists filled in from the registries: ``dataset_name``
    from the dataset registry, ``method_name`` from the method registry (the file leaves them
    open, so a new dataset or method is one registry entry, not also a schema edit)."""
    from ..data import CORRUPTION_SETS, DATASETS

    schema = yaml.safe_load((Path(schema_path) if schema_path else SCHEMA_PATH).read_text())
    defs = schema.setdefault("$defs", {})
    defs["dataset_name"] = {"enum": [d for d in DATASETS if d not in CORRUPTION_SETS]}
    defs["method_name"] = {"enum": list(METHODS)}
    return schema


def check_config(cfg: dict, schema_path: str | Path | None = None, *, check_device: bool = False,
                 cuda_available: bool | None = None) -> None:
    """JSON-schema validation plus the checks a schema cannot express.

    Every problem found is reported at once, each naming its config key; raises
    ConfigError before any job runs. ``check_device``: also refuse
    ``runtime.device: cuda`` when this machine has no CUDA (the Snakefile asks
    for it when the jobs run on this machine).
    """
    import jsonschema

    if not isinstance(cfg, dict):
        raise ConfigError(f"config: expected a mapping of keys, got {type(cfg).__name__}")
    schema = load_schema(schema_path)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg), key=lambda e: list(map(str, e.path)))
    if errors:
        raise ConfigError("\n".join(dict.fromkeys(_schema_problem(e) for e in errors)))
    problems = _cross_key_problems(cfg)
    if not problems:  # method variants (ablations) and where they run
        from .variants import variant_problems

        problems += variant_problems(cfg)
    if check_device and cfg.get("runtime", {}).get("device") == "cuda":
        if not (_cuda_available() if cuda_available is None else cuda_available):
            problems.append("config key runtime.device: 'cuda' requested but CUDA is not available on this "
                            "machine; use device: auto (CUDA when present, else CPU) or run where a GPU is")
    if problems:
        raise ConfigError("\n".join(problems))


def _cross_key_problems(cfg: dict) -> list[str]:
    """The checks across keys: names the registries know, each dataset's block, the folders; then,
    when those hold, every dataset's training settings."""
    problems = _listed_name_problems(cfg) + _dataset_block_problems(cfg)
    ref = cfg.get("reference_method")
    if ref and cfg.get("methods") and ref not in cfg["methods"]:
        problems.append(f"config key reference_method: {ref!r} is not among methods {cfg['methods']}")
    problems += _folder_problems(cfg)
    if problems:
        return problems  # the per-run checks below assume the blocks they read exist
    return _training_setting_problems(cfg)


def _listed_name_problems(cfg: dict) -> list[str]:
    """Each listed dataset known and given a block; each listed method known."""
    from ..data import DATASETS

    problems: list[str] = []
    add = problems.append
    blocks = cfg.get("dataset_config", {})
    for d in cfg.get("datasets", []):
        if d not in DATASETS:
            add(f"config key datasets: unknown dataset {d!r}; known: {sorted(DATASETS)}")
        elif d not in blocks:
            add(f"config key dataset_config: no block for dataset {d!r} (it is listed in datasets)")
    for m in cfg.get("methods", []):
        if m not in METHODS:
            add(f"config key methods: unknown method {m!r}; known: {sorted(METHODS)}")
    return problems


def _dataset_block_problems(cfg: dict) -> list[str]:
    """Each dataset block's family, corruption set and data settings."""
    from ..data import CORRUPTION_SETS, DATASETS

    problems: list[str] = []
    add = problems.append
    families = cfg.get("families", {})
    for d, block in cfg.get("dataset_config", {}).items():
        fam = block.get("family")
        if fam not in families:
            add(f"config key dataset_config.{d}.family: family {fam!r} has no block under families")
        elif d in DATASETS and DATASETS[d].family != fam:
            add(f"config key dataset_config.{d}.family: {d} is a {DATASETS[d].family} dataset, not {fam}")
        cset = block.get("corruptions")
        if cset and CORRUPTION_SETS.get(cset, {}).get("source") not in (None, d):
            add(f"config key dataset_config.{d}.corruptions: {cset} is made from "
                f"{CORRUPTION_SETS[cset]['source']}'s test set, not {d}'s")
        data = block.get("data", {}) or {}
        if d in DATASETS:  # a data setting the dataset does not read would be silently dropped
            for key in sorted(set(data) - set(DATASETS[d].data_keys)):
                add(f"config key dataset_config.{d}.data.{key}: dataset {d} does not read {key!r} (it reads "
                    f"{', '.join(sorted(DATASETS[d].data_keys)) or 'no data settings'}); remove it")
        vf, tf = data.get("val_fraction"), data.get("test_fraction")
        if isinstance(vf, (int, float)) and isinstance(tf, (int, float)) and vf + tf >= 1:
            add(f"config key dataset_config.{d}.data.val_fraction: val_fraction + test_fraction = {vf + tf:g} "
                f"leaves no training data (must be below 1)")
    return problems


def _folder_problems(cfg: dict) -> list[str]:
    """results_dir and raw_dir that can be folders; raw_from folders that exist."""
    problems: list[str] = []
    add = problems.append
    for key in ("results_dir", "raw_dir"):
        value = str(cfg.get(key, ""))
        if "{" in value or "}" in value:
            add(f"config key {key}: {value!r} contains a brace, which Snakemake reads as a wildcard")
            continue
        blocker = _first_existing_ancestor_file(Path(value))
        if blocker is not None:
            add(f"config key {key}: {value!r} cannot be a folder: {str(blocker)!r} is a regular file")
    for d, src in (cfg.get("raw_from") or {}).items():
        if not Path(src).is_dir():
            add(f"config key raw_from.{d}: {src!r} is not a folder (the download step copies {d}'s files from it)")
    return problems


def _training_setting_problems(cfg: dict) -> list[str]:
    """Each listed dataset's merged settings: schedule, model shape, and the freezing methods' runs.
    A problem shared by datasets (a patch size, a family's t_freeze, a method's eps_h) is said once."""
    problems: list[str] = []
    methods = [m for m in cfg.get("methods", []) if m in METHODS]
    freeze = cfg.get("autonorm", {}).get("freeze", {})
    freezing = [m for m in methods if METHODS[m].freeze_selectors]
    said: set = set()  # (key, image size) already reported
    for d in sorted(set(cfg.get("datasets", []))):
        problems += _dataset_setting_problems(cfg, d, freezing, freeze, said)
    return problems


def _dataset_setting_problems(cfg: dict, d: str, freezing: list[str], freeze: dict, said: set) -> list[str]:
    from ..data import DATASETS

    problems: list[str] = []
    add = problems.append
    blocks, families = cfg.get("dataset_config", {}), cfg.get("families", {})
    block, fam_name = blocks[d], blocks[d]["family"]
    fam = families[fam_name]

    def where(section: str, key: str) -> str:
        # the key as written: the dataset's block overrides its family's block
        if key in (block.get(section) or {}):
            return f"dataset_config.{d}.{section}.{key}"
        return f"families.{fam_name}.{section}.{key}"

    train = deep_merge(fam.get("train", {}) or {}, block.get("train", {}) or {})
    model = deep_merge(fam.get("model", {}) or {}, block.get("model", {}) or {})
    lr, min_lr = train.get("lr"), train.get("min_lr")
    if lr is not None and min_lr is not None and min_lr > lr:
        add(f"config key {where('train', 'min_lr')}: min_lr={min_lr:g} is above lr={lr:g} "
            f"({where('train', 'lr')}) for dataset {d}; the cosine schedule would raise the rate")
    epochs, warmup = train.get("epochs"), train.get("warmup_epochs")
    if epochs is not None and warmup is not None and warmup > epochs:
        add(f"config key {where('train', 'warmup_epochs')}: warmup_epochs={warmup:g} exceeds "
            f"epochs={epochs} ({where('train', 'epochs')}) for dataset {d}")
    size, patch = DATASETS[d].image_size, model.get("patch_size")
    if size and patch and size % int(patch) and (where("model", "patch_size"), size) not in said:
        said.add((where("model", "patch_size"), size))
        add(f"config key {where('model', 'patch_size')}: patch_size={patch} does not divide the "
            f"{size}x{size} images (datasets "
            + ", ".join(x for x in cfg.get("datasets", [])
                        if blocks[x].get("family") == fam_name and DATASETS[x].image_size == size
                        and deep_merge(families[fam_name].get("model", {}) or {},
                                       blocks[x].get("model", {}) or {}).get("patch_size") == patch)
            + f"); use a divisor of {size}")
    dim, heads = model.get("dim"), model.get("heads")
    if dim and heads and dim % heads:
        add(f"config key {where('model', 'heads')}: dim={dim} ({where('model', 'dim')}) is not divisible "
            f"by heads={heads} for dataset {d}")
    # the run's own settings, by the one validation autonorm-train applies too
    for m in (freezing if freeze.get(fam_name, True) else []):
        run = resolve_run_config(cfg, d, m, int((cfg.get("seeds") or [0])[0]))
        for key, msg in run_settings_problems(run):
            if key == "autonorm.t_freeze" and ("t_freeze", fam_name) not in said:
                said.add(("t_freeze", fam_name))
                add(f"config key autonorm.t_freeze: {msg} ({where('train', 'epochs')}) of dataset {d}, "
                    f"whose family {fam_name} freezes: {', '.join(freezing)} would never decide; lower "
                    f"t_freeze or set autonorm.freeze.{fam_name}: false")
            elif key == "autonorm.eps_h" and ("eps_h", m) not in said:
                said.add(("eps_h", m))
                add(f"config key autonorm.eps_h: {msg} ({m}; to disable freezing set "
                    f"autonorm.freeze.<family>: false)")
    return problems


def check_report_grid(grid_file: str | Path, grid: dict, report_name: str | None) -> None:
    """Refuse to overwrite a report made for another grid.

    ``grid_file`` (<tables>/grid.json, written with the tables) records the
    datasets, methods and seeds a report was made from. The same grid, or a
    larger one that contains it (more seeds, another method), may replace it;
    a smaller or different grid may not: it would silently drop rows of the
    report. The error says how to write the subset report beside it.
    """
    import json

    grid_file = Path(grid_file)
    if not grid_file.exists():
        return
    try:
        recorded = json.loads(grid_file.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{grid_file}: unreadable grid record ({exc}); delete it to rebuild this report") from exc
    lost = {k: sorted(set(recorded.get(k, [])) - set(grid.get(k, []))) for k in sorted(set(recorded) | set(grid))}
    lost = {k: v for k, v in lost.items() if v}
    if not lost:
        return
    what = "; ".join(f"{k} {v}" for k, v in lost.items())
    report = f"report {report_name!r}" if report_name else "the main report"
    raise ConfigError(
        f"config key report_name: {report} ({grid_file.parent.parent}) was made for a larger grid: this run lacks "
        f"{what}, so its tables and report would replace the full ones. Write this grid's report separately with "
        f"--config report_name=<name> (e.g. report_name=subset; it lands in <results_dir>/reports/<name>/), "
        f"or delete {grid_file} to replace the report on purpose.")


def main(argv: list[str] | None = None) -> int:
    """``python -m autonorm.config.workflow config.yaml [preset.yaml ...]``: check config files
    merged in order, as Snakemake merges ``--configfile`` (Snakemake's own message for
    a YAML syntax error in a ``--configfile`` names neither the file nor the line)."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m autonorm.config.workflow", description=main.__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", help="config.yaml first, then presets, in Snakemake's order")
    p.add_argument("--check-device", action="store_true", help="also refuse device: cuda without CUDA here")
    args = p.parse_args(argv)
    try:
        load = [read_yaml(f) for f in args.files]
        cfg = load[0]
        for extra in load[1:]:
            cfg = deep_merge(cfg, extra)
        check_config(cfg, check_device=args.check_device)
    except ConfigError as exc:
        print(f"config error:\n{exc}", file=sys.stderr)
        return 2
    print(f"config ok: {' + '.join(args.files)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
