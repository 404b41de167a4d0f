"""The package works installed, not only from an editable checkout: its data files (the config
schema, the paper's numbers) are package resources found from any folder.

Why: a pipeline package that reads files through ``parents[2]`` of its source breaks as soon as a
user runs ``pip install .`` (or a conda env installs it) and calls it from elsewhere.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_non_editable_install_validates_a_config_from_outside_the_repository(tmp_path):
    target, src = tmp_path / "site", tmp_path / "src_copy"  # a copy: the build writes beside its sources
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "src"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(
            ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__", "*.egg-info")}
                                        if (ROOT / name).is_dir() else {}))
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "--target", str(target), str(src)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (target / "autonorm" / "resources" / "config.schema.yaml").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.yaml").write_text((ROOT / "config.yaml").read_text())
    (elsewhere / "bad.yaml").write_text("seeds: [zero]\n")
    code = ("import autonorm, sys; from autonorm.config.workflow import main; "
            "assert autonorm.__file__.startswith(sys.argv[1]), autonorm.__file__; "
            "sys.exit(main(sys.argv[2:]))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    ok = subprocess.run([sys.executable, "-c", code, str(target), "mine.yaml"], cwd=elsewhere, env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "config ok" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-c", code, str(target), "mine.yaml", "bad.yaml"], cwd=elsewhere,
                         env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "seeds" in bad.stdout + bad.stderr
    # the paper's numbers are package data too
    ref = subprocess.run([sys.executable, "-c", "from autonorm.analysis.aggregate import load_reference; "
                          "print(len(load_reference(None)))"], cwd=elsewhere, env=env,
                         capture_output=True, text=True)
    assert ref.returncode == 0 and int(ref.stdout) > 50, ref.stderr


def test_the_workflow_schema_is_the_package_schema():
    link = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    assert link.resolve() == (ROOT / "src" / "autonorm" / "resources" / "config.schema.yaml").resolve()
