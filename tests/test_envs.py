"""The per-rule conda envs parse, and their pins agree with pyproject.toml."""

import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
ENVS = sorted((ROOT / "envs").glob("*.yaml"))


def _declared():
    pp = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(pp["dependencies"]) + [r for rs in pp["optional-dependencies"].values() for r in rs]
    out = {}
    for r in map(Requirement, reqs):
        out[r.name.lower()] = r.specifier
    return out


def _pins(env):
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return [Requirement(p) for p in pip if not p.startswith("-")]


def test_one_env_per_rule_family():
    assert {p.stem for p in ENVS} == {"data", "train", "stats", "plots"}


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.stem)
def test_env_parses_and_pins_agree(path):
    env = yaml.safe_load(path.read_text())
    assert env["name"] == f"autonorm-{path.stem}"
    assert any(str(d).startswith("python=3.11") for d in env["dependencies"])
    declared = _declared()
    pins = _pins(env)
    assert pins, "no pinned packages"
    for req in pins:
        (spec,) = list(req.specifier)
        assert spec.operator == "==", f"{req} is not pinned exactly"
        assert req.name.lower() in declared, f"{req.name} is not declared in pyproject.toml"
        assert declared[req.name.lower()].contains(spec.version), \
            f"{path.name}: {req} is outside pyproject's {req.name}{declared[req.name.lower()]}"


def test_same_package_same_pin_across_envs():
    seen = {}
    for path in ENVS:
        for req in _pins(yaml.safe_load(path.read_text())):
            seen.setdefault(req.name.lower(), set()).add(str(req.specifier))
    assert all(len(v) == 1 for v in seen.values()), seen


def test_every_rule_has_a_conda_env():
    rules = (ROOT / "workflow" / "rules").glob("*.smk")
    text = "\n".join(p.read_text() for p in rules)
    n_rules = text.count("\nrule ") + text.startswith("rule ")
    assert n_rules >= 8
    assert text.count("conda:") == n_rules
    for ref in set(l.strip().strip('"') for l in text.splitlines() if "envs/" in l):
        assert (ROOT / "workflow" / "rules" / ref).resolve().exists(), ref
