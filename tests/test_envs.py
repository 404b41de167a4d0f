"""The per-rule conda envs parse, their pins agree with pyproject.toml, and they exist on PyPI."""

import os
import re
import subprocess
import sys
import tomllib
import urllib.request
from functools import lru_cache
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


def _rule_blocks():
    """rule name -> its text (up to the next top-level statement), over workflow/rules/*.smk."""
    blocks = {}
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        name = None
        for line in path.read_text().splitlines():
            m = re.match(r"^rule (\w+):", line)
            if m:
                name = m.group(1)
                blocks[name] = ""
            elif line and not line[0].isspace() and not line.startswith("#"):
                name = None
            elif name:
                blocks[name] += line + "\n"
    return blocks


def test_every_rule_has_a_conda_env():
    """Every rule that runs a command has its env; a `run:` rule runs inside Snakemake's own
    Python, where Snakemake allows no conda env."""
    blocks = _rule_blocks()
    assert len(blocks) >= 8
    for name, text in blocks.items():
        in_process = re.search(r"^\s+run:", text, re.M) is not None
        has_conda = re.search(r"^\s+conda:", text, re.M) is not None
        assert has_conda != in_process, f"rule {name}: conda env {'given' if has_conda else 'missing'}"
        for ref in re.findall(r'"([^"]*envs/[^"]*)"', text):
            assert (ROOT / "workflow" / "rules" / ref).resolve().exists(), (name, ref)


# ---- the pins exist on the package index and resolve together (pip --dry-run) -------------------
# conda cannot be exercised offline, but the pip section of each env is what a user's
# `--sdm conda` build installs: a pin that does not exist or conflicts must fail here.
# The machine's pip configuration (local mirrors, find-links, constraints) is set aside, so the
# answer is the public index's, as on a user's cluster.

PIP_ISOLATING_ENV = ("PIP_CONFIG_FILE", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT",
                     "PIP_NO_INDEX", "PIP_REQUIRE_VIRTUALENV", "PIP_TARGET", "PIP_PREFIX", "PIP_USER")


def _all_pins() -> dict[str, set[Path]]:
    """pin string -> the env files that carry it."""
    out: dict[str, set[Path]] = {}
    for path in ENVS:
        for req in _pins(yaml.safe_load(path.read_text())):
            out.setdefault(str(req), set()).add(path)
    return out


def _pip_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PIP_ISOLATING_ENV}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@lru_cache(maxsize=1)
def _index_unreachable() -> str | None:
    """Why the package index cannot be used (None when it can)."""
    if sys.version_info[:2] != (3, 11):
        return f"the envs pin python=3.11; this is Python {sys.version.split()[0]}, whose wheels differ"
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        urllib.request.urlopen(f"{index}/pip/", timeout=10).close()
    except OSError as e:
        return f"package index {index} unreachable ({e})"
    return None


def _pip_dry_run(pins, *extra):
    reason = _index_unreachable()
    if reason:
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--only-binary=:all:", *extra, *sorted(pins)]
    p = subprocess.run(cmd, env=_pip_env(), capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        log = p.stdout + p.stderr
        if any(s in log for s in ("NewConnectionError", "Max retries exceeded", "Read timed out")):
            print(f"SKIP: the index failed mid-way:\n{log[-2000:]}")
            pytest.skip("the package index failed mid-way (network)")
        named = sorted({f"{pin} ({', '.join(sorted(p.name for p in paths))})"
                        for pin, paths in _all_pins().items() if pin.split("==")[0].lower() in log.lower()})
        pytest.fail(f"pip cannot install the envs' pins; mentioned in pip's answer: {named}\n{log[-4000:]}")


def test_env_pins_exist_on_the_index():
    """Every pin names a release with a wheel for CPython 3.11 on this platform. About 15 s:
    without PEP 658 metadata on the index, pip fetches each wheel (torch's is 0.55 GB)."""
    _pip_dry_run(_all_pins(), "--no-deps")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("AUTONORM_PIP_RESOLVE_DEPS") != "1",
                    reason="full resolution with dependencies takes 60-90 s and fetches ~3 GB of CUDA "
                           "wheels: set AUTONORM_PIP_RESOLVE_DEPS=1 to run it")
def test_env_pins_resolve_together_with_their_dependencies():
    """All pins of all envs at once, with their dependencies, so a conflict between pins (or with
    something they require, e.g. torch's and datasets' fsspec) fails here. Each env's pins are a
    subset of this set, and pins that resolve together resolve as a subset too; the union must
    resolve anyway, since each env also installs the package (`--editable ..`), which requires
    every pyproject dependency."""
    _pip_dry_run(_all_pins())


def test_envs_install_the_package_from_the_repository_root():
    for path in ENVS:
        env = yaml.safe_load(path.read_text())
        pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
        editable = [p for p in pip if p.startswith("-")]
        # conda runs pip from the env file's folder: `..` is the repository root
        assert editable == ["--editable .."], (path.name, editable)
        assert (path.parent / ".." / "pyproject.toml").resolve() == ROOT / "pyproject.toml"
