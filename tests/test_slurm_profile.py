"""Cheap checks of the shipped SLURM profile (profiles/slurm/config.yaml).

The live-cluster test is .ci/slurm/run_slurm_test.sh; nothing here talks to
SLURM or runs Snakemake.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "profiles" / "slurm" / "config.yaml"
CI_SCRIPT = ROOT / ".ci" / "slurm" / "run_slurm_test.sh"
RULES = {
    "download",
    "preprocess",
    "make_corruptions",
    "train",
    "evaluate",
    "aggregate",
    "figures",
    "report",
}


@pytest.fixture(scope="module")
def profile():
    data = yaml.safe_load(PROFILE.read_text())
    assert isinstance(data, dict)
    return data


def _eval_resource(value, attempt):
    """Evaluate a resource value the way Snakemake does for profile strings."""
    if isinstance(value, str):
        return eval(value, {"attempt": attempt})  # noqa: S307 - our own file
    return value


def test_executor_and_basics(profile):
    assert profile["executor"] == "slurm"
    assert int(profile["jobs"]) >= 1
    assert int(profile["retries"]) >= 1
    assert int(profile["latency-wait"]) > 0
    assert profile["slurm-logdir"]
    assert profile["slurm-keep-successful-logs"] is True


def test_partition_and_account_are_commented_placeholders(profile):
    defaults = profile["default-resources"]
    assert "slurm_partition" not in defaults
    assert "slurm_account" not in defaults
    text = PROFILE.read_text()
    block = text.split("default-resources:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"^\s*#\s*slurm_partition:", block, re.M)
    assert re.search(r"^\s*#\s*slurm_account:", block, re.M)


def test_set_resources(profile):
    sr = profile["set-resources"]
    assert set(sr) <= RULES, set(sr) - RULES
    for rule in ("train", "evaluate"):
        assert int(sr[rule]["gpu"]) >= 1
        # cpus_per_task would silently override cpus_per_gpu in the plugin
        assert "cpus_per_task" not in sr[rule]
        if "cpus_per_gpu" in sr[rule]:
            assert int(sr[rule]["cpus_per_gpu"]) >= 1
    for rule, res in sr.items():
        if "mem_mb" in res:
            assert int(res["mem_mb"]) > 0, rule
        if "runtime" in res:
            first, second = (_eval_resource(res["runtime"], a) for a in (1, 2))
            assert second > first > 0, rule
    # a retry gets more runtime also for rules without their own runtime
    runtime = profile["default-resources"]["runtime"]
    assert _eval_resource(runtime, 2) > _eval_resource(runtime, 1) > 0


def test_group_components(profile):
    gc = profile["group-components"]
    assert gc and all(isinstance(v, int) and v >= 1 for v in gc.values())
    # a group job never asks for more than one node's CPUs / one GPU
    assert int(profile["cores"]) >= 1
    assert profile["set-resource-scopes"]["gpu"] == "local"
    assert int(profile["resources"]["gpu"]) == 1


def test_snakemake_profile_parser_accepts_it():
    profiles = pytest.importorskip("snakemake.profiles")
    with PROFILE.open() as fh:
        parsed = profiles.ProfileConfigFileParser().parse(fh)
    assert parsed["executor"] == "slurm"
    assert "train:gpu=1" in parsed["set-resources"]
    assert "runtime=30 * attempt" in parsed["default-resources"]
    assert parsed["group-components"]


def test_plugin_option_names_exist():
    """Profile keys slurm-<x> must be fields of the installed plugin's settings."""
    spec = importlib.util.find_spec("snakemake_executor_plugin_slurm")
    if spec is None or spec.origin is None:
        pytest.skip("snakemake-executor-plugin-slurm not installed")
    # read the source instead of importing it: importing runs scontrol/sacct probes
    source = Path(spec.origin).read_text()
    keys = [k for k in yaml.safe_load(PROFILE.read_text()) if k.startswith("slurm-")]
    commented = re.findall(r"^#\s*(slurm-[a-z-]+):", PROFILE.read_text(), re.M)
    for key in keys + commented:
        field = key[len("slurm-"):].replace("-", "_")
        assert re.search(rf"^\s+{field}: .*= field\(", source, re.M), key


def test_ci_script_is_valid_bash():
    assert CI_SCRIPT.stat().st_mode & 0o111, "run_slurm_test.sh not executable"
    subprocess.run(["bash", "-n", str(CI_SCRIPT)], check=True)


# ---- `snakemake --profile slurm` after `autonorm-install-profile slurm` --------------------------

def _home_env(home: Path) -> dict:
    """The environment of a user whose home is ``home`` (no XDG override, so ~/.config is used)."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    return env


def _install(env, *args, check=True):
    # the documented command when the package's scripts are installed, else the same module
    script = shutil.which("autonorm-install-profile")
    cmd = [script] if script else [sys.executable, "-m", "autonorm.workflow_support.profile_install"]
    p = subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def test_installer_is_a_console_script():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["autonorm-install-profile"] == "autonorm.workflow_support.profile_install:main"


@pytest.mark.dag  # runs Snakemake
def test_profile_slurm_by_name_after_install(tmp_path):
    pytest.importorskip("snakemake")
    pytest.importorskip("snakemake_executor_plugin_slurm")
    home = tmp_path / "home"
    home.mkdir()
    env = _home_env(home)
    work = tmp_path / "repo"
    work.mkdir()
    for name in ["Snakefile", "config.yaml", "workflow", "profiles", "envs"]:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    cmd = ["snakemake", "all", "--profile", "slurm", "-n", "--quiet", "host",  # list the jobs
           "--config", f"results_dir={tmp_path}/results", f"raw_dir={tmp_path}/raw"]

    before = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert before.returncode != 0 and "profile" in (before.stdout + before.stderr).lower(), \
        "without the installed profile `--profile slurm` should fail (is ./slurm or /etc/xdg/snakemake/slurm present?)"

    out = _install(env, "slurm").stdout
    dest = home / ".config" / "snakemake" / "slurm"
    assert str(dest) in out
    assert (dest / "config.yaml").read_text() == PROFILE.read_text()

    after = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    log = after.stdout + after.stderr
    assert after.returncode == 0, log[-6000:]
    # the profile found by name, and the workflow profile profiles/default, both applied
    assert "Using profiles slurm and workflow specific profile profiles/default" in log, log[:2000]
    assert re.search(r"^train\s+\d+$", log, re.M), log[-3000:]
    # the profile's settings took effect: group-components packed several runs into each group job
    # (without the profile every train/evaluate pair is a group job of its own)
    groups = log.count("Group job small")
    grouped_evaluations = len(re.findall(r"^    rule evaluate:", log, re.M))
    assert 1 <= groups < grouped_evaluations, (groups, grouped_evaluations)


def test_install_profile_keeps_user_edits_unless_forced(tmp_path):
    home = tmp_path / "home"
    env = _home_env(home)
    dest = home / ".config" / "snakemake" / "slurm"
    _install(env, "slurm")
    assert "already installed" in _install(env, "slurm").stdout  # identical copy: nothing to do

    edited = (dest / "config.yaml").read_text() + "\n# my partition\n"
    (dest / "config.yaml").write_text(edited)
    refused = _install(env, "slurm", check=False)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert (dest / "config.yaml").read_text() == edited

    _install(env, "slurm", "--force")
    assert (dest / "config.yaml").read_text() == PROFILE.read_text()
    assert (dest.parent / "slurm.bak" / "config.yaml").read_text() == edited
    assert sorted(p.name for p in dest.parent.iterdir()) == ["slurm", "slurm.bak"]  # no staging left


@pytest.mark.parametrize("name", ["default", "nosuch", "../slurm"])
def test_install_profile_rejects_unknown_names(tmp_path, name):
    p = _install(_home_env(tmp_path), name, check=False)
    assert p.returncode == 2, p.stdout
    assert name in p.stderr
    assert not (tmp_path / ".config" / "snakemake").exists() or \
        not any((tmp_path / ".config" / "snakemake").iterdir())
