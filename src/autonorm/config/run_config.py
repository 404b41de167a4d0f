"""One training run's config, resolved from the workflow config: the layer below both the
config checks (``config``) and the ablation variants (``variants``), so neither imports the other.

``resolve_run_config(cfg, dataset, method_or_variant, seed)`` gives everything the trainer needs
as plain JSON-able data (what ``config.json`` of a run holds): the method's norm options, the
family's model and training settings with the dataset's overrides, AutoNorm's settings
(``methods.AutoNormSettings``, each default written once) and, for a variant, its overrides.
"""
from __future__ import annotations

import copy

from ..methods import METHODS, UNNAMED_PLACEMENT, AutoNormSettings
from ..provenance import run_config_hash


class ConfigError(ValueError):
    """A config key that cannot work; the message names the key."""


# Blocks merged onto the workflow config before resolution (the rest of a variant is metadata).
CONFIG_OVERRIDES = ("autonorm", "norm_options")
DEFAULT_TEACHER = "teacher_mlp"


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in (override or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def results_dir(cfg: dict) -> str:
    return str(cfg.get("results_dir", "results")).rstrip("/")


def declared_variants(cfg: dict) -> dict:
    return cfg.get("variants") or {}


def resolve_run_config(cfg: dict, dataset: str, method: str, seed: int) -> dict:
    """Everything one training run needs, as plain JSON-able data."""
    if method not in METHODS and method in declared_variants(cfg):  # a method variant (an ablation)
        return resolve_variant_run_config(cfg, dataset, method, seed)
    dcfg = cfg["dataset_config"][dataset]
    family = dcfg["family"]
    fam = cfg["families"][family]
    auto = dict(cfg.get("autonorm", {}))
    settings = AutoNormSettings.from_block(auto)
    freeze_enabled = bool(auto.get("freeze", {}).get(family, True))
    norm_options = dict(cfg.get("norm_options", {}))
    norm_options.update(tau=settings.tau, drop_noise_when_frozen=settings.drop_noise_when_frozen)
    # ablation options, written only when set: default run configs unchanged
    for key in ("selector", "hard", "gates", "selector_hidden"):
        if key in auto:
            norm_options[key] = auto[key]
    # the selectors' placement, only where a gate has one and only when it is not the layout of a
    # config that names none: every run trained before the setting keeps its config and identity
    if METHODS[method].gated and settings.placement != UNNAMED_PLACEMENT:
        norm_options["placement"] = settings.placement
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
        # AutoNorm's settings as one block for the reader of config.json; the norms read tau and
        # drop_noise_when_frozen from norm_options only. The copy stays because this dict is each
        # run's identity (provenance.run_config_hash): dropping a key would retrain every result.
        "autonorm": {"tau": settings.tau, "t_freeze": settings.t_freeze, "eps_h": settings.eps_h,
                     "freeze_enabled": freeze_enabled, "drop_noise_when_frozen": settings.drop_noise_when_frozen},
        "norm_options": norm_options,
        # runs_per_gpu only packs jobs onto GPUs (the Snakefile hands it to jobs as
        # AUTONORM_RUNS_PER_GPU): kept out so that changing it retrains nothing.
        "runtime": {k: v for k, v in cfg.get("runtime", {}).items() if k != "runs_per_gpu"},
        "evaluation": dict(cfg.get("evaluation", {})),
    }


def resolve_variant_run_config(cfg: dict, dataset: str, name: str, seed: int) -> dict:
    """The resolved run config of variant ``name``: its base's, with the overrides applied."""
    v = declared_variants(cfg)[name]
    overrides = {k: v[k] for k in CONFIG_OVERRIDES if k in v}
    run = resolve_run_config(deep_merge(cfg, overrides), dataset, v["base"], seed)
    res = results_dir(cfg)
    run["out_dir"] = f"{res}/runs/{dataset}/{name}/seed{seed}"
    run["variant"] = {"name": name, "base": v["base"], "axis": v["axis"], "value": v.get("value")}
    if "distill" in v:
        teacher = v["distill"].get("teacher", DEFAULT_TEACHER)
        # The teacher's identity is part of the student's: a teacher trained with other settings
        # changes the student's config (so its job and its checkpoint are not reused), and the
        # trainer refuses a teacher folder whose recorded hash is not this one.
        run["distill"] = {"temperature": float(v["distill"]["temperature"]),
                          "weight": float(v["distill"]["weight"]), "teacher": teacher,
                          "teacher_run_dir": f"{res}/runs/{dataset}/{teacher}/seed{seed}",
                          "teacher_config_hash": run_config_hash(resolve_run_config(cfg, dataset, teacher, seed))}
    return run


def teacher_run_dir(cfg: dict, dataset: str, name: str, seed: int) -> str | None:
    """The run folder a variant distils from, or None (the workflow makes its status.json an input)."""
    if name in METHODS or "distill" not in declared_variants(cfg).get(name, {}):
        return None
    return resolve_variant_run_config(cfg, dataset, name, seed)["distill"]["teacher_run_dir"]


def gate_choices_of(run: dict) -> int:
    """How many norms a run's learned gate mixes (0: no learned gate)."""
    from ..methods import get_method

    method = get_method(run["method"])
    if not method.gate_choices:
        return 0
    return 3 if method.gate_choices == 3 or str((run.get("norm_options") or {}).get("gates", 2)) == "3" else 2


def run_settings_problems(run: dict) -> list[tuple[str, str]]:
    """The one validation of a resolved run config's AutoNorm settings: (key in the run config,
    problem) for each setting no training can honour. The workflow's config check names each
    problem by the config key that set it (config.workflow, config.variants); ``autonorm-train``
    refuses a run config with any, so both refuse the same settings."""
    import math

    from ..methods import get_method

    out: list[tuple[str, str]] = []
    auto = run.get("autonorm") or {}
    tau, eps_h, t_freeze = auto.get("tau"), auto.get("eps_h"), auto.get("t_freeze")
    gates = gate_choices_of(run)
    if gates and not (isinstance(tau, (int, float)) and tau > 0):
        out.append(("autonorm.tau", f"tau={tau!r} must be a number above 0 (the Gumbel-Softmax temperature)"))
    freezes = get_method(run["method"]).freeze_selectors and bool(auto.get("freeze_enabled", True))
    if not (freezes and gates):
        return out
    if not (isinstance(eps_h, (int, float)) and eps_h > 0):
        out.append(("autonorm.eps_h", f"eps_h={eps_h!r} must be a number above 0: a mean entropy is never "
                                      "below 0, so the selectors would always freeze"))
    elif eps_h >= math.log(gates):
        out.append(("autonorm.eps_h", f"eps_h={eps_h:g} is not below ln {gates} = {math.log(gates):.4f}, the "
                                      f"largest entropy of a {gates}-way gate: its selectors would never freeze"))
    epochs = (run.get("train") or {}).get("epochs")
    if not (isinstance(t_freeze, int) and not isinstance(t_freeze, bool) and t_freeze >= 1):
        out.append(("autonorm.t_freeze", f"t_freeze={t_freeze!r} must be an epoch number (1 or more)"))
    elif epochs is not None and t_freeze > epochs:
        out.append(("autonorm.t_freeze", f"t_freeze={t_freeze} is after the last epoch ({epochs}): "
                                         "the freeze rule would never decide"))
    return out
