"""One place per fact: the config schema's name lists are the registries' (a dataset is a
`autonorm.data.registry.DATASETS` entry, a method a `autonorm.methods.METHODS` entry).

Why: a name list copied into the schema would let a new dataset or method pass the registry
and fail the schema (or the reverse); this test pins the copies to their source.
"""
from __future__ import annotations

import yaml

from autonorm.config.run_config import ConfigError
from autonorm.config.workflow import SCHEMA_PATH, check_config, load_schema
from autonorm.data import CORRUPTION_SETS, DATASETS
from autonorm.methods import DISPLAY_ORDER, GATE_CHOICES, GATED_METHODS, METHODS


def _schema():
    return yaml.safe_load(SCHEMA_PATH.read_text())


def test_schema_names_every_registered_dataset_and_method():
    defs = load_schema()["$defs"]
    assert set(defs["dataset_name"]["enum"]) == {d for d in DATASETS if d not in CORRUPTION_SETS}
    assert set(defs["method_name"]["enum"]) == set(METHODS)
    # the file itself keeps no copy of the lists
    raw = _schema()["$defs"]
    assert "enum" not in raw["dataset_name"] and "enum" not in raw["method_name"]


def test_a_new_registry_entry_passes_the_schema_and_a_typo_does_not(monkeypatch):
    import copy

    from autonorm import methods
    from autonorm.data import registry

    from pathlib import Path

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    cfg = copy.deepcopy(cfg)
    cfg["methods"] = cfg["methods"] + ["toy_s"]
    try:
        check_config(cfg)
        raise AssertionError("an unregistered method passed the config check")
    except ConfigError as e:
        assert "methods" in str(e) and "toy_s" in str(e)
    monkeypatch.setitem(methods.METHODS, "toy_s", methods.Method("toy_s", "autonorm", freeze_selectors=True))
    spec = registry.DATASETS["smoke_diabetes"]
    monkeypatch.setitem(registry.DATASETS, "toy_table", registry.DatasetSpec(
        "toy_table", "tabular", "regression", True, "toy", needs_download=False, source=spec.source))
    cfg["datasets"] = cfg["datasets"] + ["toy_table"]
    cfg["dataset_config"]["toy_table"] = {"family": "tabular"}
    check_config(cfg)  # no schema edit needed


def test_method_facts_come_from_the_registry():
    assert set(DISPLAY_ORDER) == set(METHODS) and len(DISPLAY_ORDER) == len(METHODS)
    assert GATED_METHODS == tuple(m for m in DISPLAY_ORDER if METHODS[m].gate_choices)
    assert GATE_CHOICES == {"autonorm": 2, "autonorm3": 3}
    found = [v["gates"] for v in _walk(_schema()) if "gates" in v and isinstance(v["gates"], dict)]
    assert found and all(sorted(f["enum"]) == sorted(set(GATE_CHOICES.values())) for f in found)


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_autonorm_defaults_are_written_once():
    """AutoNorm's settings have one home (methods.AutoNormSettings): a config without them gets
    those defaults in its run configs, the norms take them as their keyword defaults, and the
    paper grid's config.yaml states the same values."""
    import inspect
    from pathlib import Path

    from autonorm.config.run_config import resolve_run_config
    from autonorm.methods import AUTONORM
    from autonorm.layers.norms import AutoNorm, NormSelector

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    block = cfg["autonorm"]
    assert {k: block[k] for k in ("tau", "t_freeze", "eps_h", "drop_noise_when_frozen")} == {
        "tau": AUTONORM.tau, "t_freeze": AUTONORM.t_freeze, "eps_h": AUTONORM.eps_h,
        "drop_noise_when_frozen": AUTONORM.drop_noise_when_frozen}
    bare = dict(cfg, autonorm={"freeze": block.get("freeze", {})})
    run = resolve_run_config(bare, "mnist", "autonorm_s", 0)
    assert run["autonorm"]["tau"] == run["norm_options"]["tau"] == 0.5
    assert (run["autonorm"]["t_freeze"], run["autonorm"]["eps_h"]) == (10, 0.1)
    changed = resolve_run_config(dict(cfg, autonorm=dict(block, tau=2.0, t_freeze=3)), "mnist", "autonorm_s", 0)
    assert changed["norm_options"]["tau"] == 2.0 and changed["autonorm"]["t_freeze"] == 3
    for cls in (AutoNorm, NormSelector):
        assert inspect.signature(cls).parameters["tau"].default == AUTONORM.tau
