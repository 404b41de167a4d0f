"""Method variants (the paper's ablations) and runs that are the same training.

A *variant* is a base method plus config overrides, declared under ``variants:``::

    variants:
      tau_1:  {base: autonorm_s, axis: tau, value: 1.0, autonorm: {tau: 1.0}}
      distill: {base: autonorm_s, axis: distill, value: 0.5, families: [vision],
                distill: {temperature: 4, weight: 0.5}}

``ablations: {variants: [...], datasets: [...]}`` puts variants into the run grid, on
those datasets only (a variant's own ``datasets`` replaces the list, its ``families``
filters it). A variant run has its own run folder ``runs/<dataset>/<variant>/seed<k>``,
the same seeds as its base (paired with it), and its resolved run config carries
``"variant": {"name", "base", "axis", "value"}``; ``"method"`` stays the base method,
which is what the trainer builds.

Overrides: ``autonorm`` and ``norm_options`` are merged onto the workflow config before
the run config is resolved (so ``autonorm.tau`` reaches the selectors exactly as the
top-level key does); ``distill`` adds a distillation block naming the teacher run of the
same dataset and seed (see ``autonorm.run.distill``).

Same runs: two entries of the grid whose resolved run configs differ only in their
names (method or variant name, run folder) train the same model, e.g. AutoNorm-S on a
family whose freezing is disabled is AutoNorm. ``same_runs`` maps each such duplicate to
the one that trains (methods in registry order first, then variants in config order); the
workflow copies the trained one's eval file for it instead of training again.
"""

from __future__ import annotations

import math

import json
from pathlib import Path

from .run_config import DEFAULT_TEACHER, ConfigError, declared_variants, resolve_run_config, resolve_variant_run_config
from ..io_utils import write_json_atomic
from ..methods import METHODS, get_method

VARIANT_AXES = ("tau", "selector", "selector_width", "gumbel", "t_freeze", "eps_h", "distill", "gate3")
NORM_OPTION_DEFAULTS = {("selector", "mlp"), ("hard", False), ("gates", 2)}


def active_variants(cfg: dict) -> list[str]:
    """The variants the grid runs (``ablations.variants``), in config order."""
    return list((cfg.get("ablations") or {}).get("variants") or [])


def is_variant(cfg: dict, name: str) -> bool:
    return name not in METHODS and name in declared_variants(cfg)


def variant_datasets(cfg: dict, name: str) -> list[str]:
    """The datasets a variant runs on: its own ``datasets`` or ``ablations.datasets``,
    kept to its ``families`` when it names some."""
    v = declared_variants(cfg)[name]
    datasets = v.get("datasets") or (cfg.get("ablations") or {}).get("datasets") or []
    families = v.get("families")
    blocks = cfg.get("dataset_config", {})
    return [d for d in datasets if not families or blocks.get(d, {}).get("family") in families]


def run_names(cfg: dict, dataset: str) -> list[str]:
    """Every run name of one dataset in the grid: its methods, then the variants that run on it."""
    return list(cfg["methods"]) + [v for v in active_variants(cfg) if dataset in variant_datasets(cfg, v)]


# --------------------------------------------------------------------------- same runs
def training_signature(run: dict) -> str:
    """What the trainer does with a resolved run config, without the names.

    The method enters through what it builds (norm, backbone) and whether it freezes here;
    freeze settings that cannot act (no freezing) are left out, so AutoNorm-S on a family
    without freezing has AutoNorm's signature.
    """
    m = get_method(run["method"])
    sig = {k: v for k, v in run.items() if k not in ("method", "out_dir", "variant")}
    auto = dict(sig.get("autonorm", {}))
    freezes = bool(m.freeze_selectors and auto.get("freeze_enabled", True))
    if not freezes:
        for k in ("t_freeze", "eps_h", "drop_noise_when_frozen"):
            auto.pop(k, None)
    sig["autonorm"] = auto
    # ablation options set to their defaults build the default model
    opts = {k: v for k, v in (sig.get("norm_options") or {}).items() if (k, v) not in NORM_OPTION_DEFAULTS}
    sig["norm_options"] = opts
    sig["built"] = {"norm": m.norm, "backbone": m.backbone, "freezes": freezes}
    return json.dumps(sig, sort_keys=True, default=str)


def same_runs(cfg: dict, seed: int | None = None) -> dict[tuple[str, str], str]:
    """{(dataset, run name): the run name that trains it} for every duplicate in the grid.

    Candidates that train are taken in a fixed order (methods in registry order, so AutoNorm
    comes before AutoNorm-S whatever the config's order, then variants in config order); a run
    whose signature was seen before is a duplicate of the first one. Seeds change every entry
    alike, so one seed decides for all.
    """
    seed = int(cfg["seeds"][0] if seed is None else seed)
    out = {}
    for d in cfg["datasets"]:
        names = run_names(cfg, d)
        ordered = [m for m in METHODS if m in names] + [n for n in names if n not in METHODS]
        first: dict[str, str] = {}
        for n in ordered:
            sig = training_signature(resolve_run_config(cfg, d, n, seed))
            if sig in first:
                out[(d, n)] = first[sig]
            else:
                first[sig] = n
    return out


def write_same_run_eval(primary_eval: str | Path, out: str | Path, cfg: dict, name: str, primary: str) -> dict:
    """The eval file of a run that is the same training as ``primary``: the primary's results,
    under this run's own name, marked ``"same_run_as"``."""
    result = json.loads(Path(primary_eval).read_text())
    result.pop("variant", None)
    if is_variant(cfg, name):
        v = declared_variants(cfg)[name]
        result["method"] = v["base"]
        result["variant"] = {"name": name, "base": v["base"], "axis": v["axis"], "value": v.get("value")}
    else:
        result["method"] = name
    result["same_run_as"] = primary
    write_json_atomic(out, result)
    return result


# --------------------------------------------------------------------------- checks
def variant_problems(cfg: dict) -> list[str]:
    """Cross-key checks of ``variants`` and ``ablations`` (the schema checks each block's shape)."""
    from ..data import DATASETS

    problems: list[str] = []
    add = problems.append
    variants = declared_variants(cfg)
    datasets = list(cfg.get("datasets", []))
    for name, v in variants.items():
        if name in METHODS:
            add(f"config key variants.{name}: a variant cannot take a method's name")
        base = v.get("base")
        if base in METHODS and METHODS[base].backbone != "transformer":
            add(f"config key variants.{name}.base: {base!r} has no norms to vary; use a transformer method")
        if (v.get("axis") == "distill") != ("distill" in v):
            add(f"config key variants.{name}.distill: a distillation variant (axis: distill) needs a distill "
                f"block, and only it may have one")
        if (v.get("autonorm") or {}).get("gates") == 3 and base in METHODS and METHODS[base].norm != "autonorm":
            add(f"config key variants.{name}.autonorm.gates: base {base!r} has no DyT / LN gate to widen")
        teacher = (v.get("distill") or {}).get("teacher", DEFAULT_TEACHER)
        if "distill" in v and teacher not in METHODS:
            add(f"config key variants.{name}.distill.teacher: unknown method {teacher!r}")
        for d in v.get("datasets") or []:
            if d not in datasets:
                add(f"config key variants.{name}.datasets: {d!r} is not among datasets {datasets}")
    abl = cfg.get("ablations") or {}
    for d in abl.get("datasets") or []:
        if d not in datasets:
            add(f"config key ablations.datasets: {d!r} is not among datasets {datasets}")
    for name in active_variants(cfg):
        if name not in variants:
            add(f"config key ablations.variants: unknown variant {name!r}; declared: {sorted(variants)}")
    if problems:
        return problems
    for name in active_variants(cfg):
        v = variants[name]
        ds = variant_datasets(cfg, name)
        if not ds:
            add(f"config key ablations.variants: variant {name!r} runs on no dataset (ablations.datasets "
                f"{abl.get('datasets') or []}, its families {v.get('families')})")
        for d in ds:
            if "distill" in v and DATASETS[d].task == "regression":
                add(f"config key variants.{name}.distill: dataset {d} is a regression task; distillation "
                    f"needs class logits")
            run = resolve_variant_run_config(cfg, d, name, int(cfg["seeds"][0]))
            method = get_method(run["method"])
            epochs = run["train"].get("epochs")
            t_freeze = run["autonorm"]["t_freeze"]
            if (method.freeze_selectors and run["autonorm"]["freeze_enabled"] and epochs is not None
                    and t_freeze > epochs):
                where = (f"variants.{name}.autonorm.t_freeze" if "t_freeze" in (v.get("autonorm") or {})
                         else "autonorm.t_freeze")
                add(f"config key {where}: t_freeze={t_freeze} is after the last epoch ({epochs}) of dataset "
                    f"{d}: variant {name} would never decide to freeze")
            gates = 3 if (method.gate_choices == 3 or str((run.get("norm_options") or {}).get("gates", 2)) == "3") \
                else 2
            eps_h = run["autonorm"].get("eps_h")
            if (method.freeze_selectors and run["autonorm"]["freeze_enabled"] and eps_h is not None
                    and eps_h >= math.log(gates)):
                where = (f"variants.{name}.autonorm.eps_h" if "eps_h" in (v.get("autonorm") or {})
                         else "autonorm.eps_h")
                add(f"config key {where}: eps_h={eps_h:g} is not below ln {gates} = {math.log(gates):.4f}, "
                    f"the largest entropy of variant {name}'s {gates}-way gate on dataset {d}: its "
                    f"selectors would never freeze")
    return problems


def check_variants(cfg: dict) -> None:
    problems = variant_problems(cfg)
    if problems:
        raise ConfigError("\n".join(problems))
