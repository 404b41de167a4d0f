"""The workflow under faults: hostile paths, failed attempts, partial grids, no network.

Each test runs Snakemake on a small part of the smoke DAG in a temporary copy
of the workflow (tests/test_workflow.py runs the whole smoke DAG once).
"""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.limits import limit
from helpers.snakemake_runs import copy_workflow, smoke_snakemake

pytestmark = pytest.mark.dag  # every test runs Snakemake

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ["--configfile", "workflow/presets/smoke.yaml"]
# Every HTTP(S) request fails at once (a closed local port): the tests never
# download, even on a machine with network.
OFFLINE_ENV = {k: "http://127.0.0.1:9" for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}


def snakemake(work: Path, *args, env=None, timeout=limit(300)):
    show = ["--quiet", "host"] if "-n" in args else []  # dry runs list their jobs, whatever a profile says
    return subprocess.run(["snakemake", *args, *show], cwd=work, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONUNBUFFERED": "1", **OFFLINE_ENV, **(env or {})})


def write_paths_config(path: Path, results: Path, raw: Path, extra: str = "") -> Path:
    # JSON strings are YAML: the paths go in verbatim, whatever characters they hold
    path.write_text(f"results_dir: {json.dumps(str(results))}\nraw_dir: {json.dumps(str(raw))}\n{extra}")
    return path


# ---- item 6: paths are never run as shell code -------------------------------------------------

@pytest.mark.slow
def test_hostile_paths_are_quoted_everywhere(tmp_path):
    work = copy_workflow(tmp_path / "work")
    hostile = tmp_path / "my results; $(touch pwned) it's `touch pwned2`"
    results, raw = hostile / "results", hostile / "raw data"
    one_epoch = "autonorm: {t_freeze: 1}\nfamilies:\n  tabular:\n    train: {epochs: 1, warmup_epochs: 0}\n"
    paths = write_paths_config(tmp_path / "paths.yaml", results, raw, one_epoch)
    target = results / "eval" / "smoke_diabetes" / "frozen_ln" / "seed0.json"
    # download -> preprocess -> train -> evaluate of one run, every path hostile
    p = snakemake(work, str(target), "--cores", "1", *SMOKE, str(paths))
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-5000:]
    assert json.loads(target.read_text())["dataset"] == "smoke_diabetes"
    for rule, name in [("download", "smoke_diabetes"), ("preprocess", "smoke_diabetes"),
                       ("train", "smoke_diabetes/frozen_ln/seed0"), ("evaluate", "smoke_diabetes/frozen_ln/seed0")]:
        log = results / "logs" / rule / f"{name}.log"
        assert log.exists() and log.stat().st_size > 0, f"no {rule} log at {log}"
    assert (results / "benchmarks" / "preprocess" / "smoke_diabetes.tsv").exists()
    assert (raw / "smoke_diabetes" / ".complete").exists()
    # nothing ran from the path, and no log landed outside the results folder
    strays = [f for f in tmp_path.rglob("*") if f.name.startswith("pwned")]
    strays += [f for f in ROOT.glob("pwned*")]
    assert not strays, strays
    logs_outside = [f for f in tmp_path.rglob("*.log") if results not in f.parents and ".snakemake" not in f.parts]
    assert not logs_outside, logs_outside


# ---- item 11: a failed attempt's log is kept ---------------------------------------------------

FAKE_TRAIN = r'''#!{python}
"""Stand-in for autonorm-train: fails on its first call, succeeds on the second."""
import json, pathlib, sys
cfg = json.loads(sys.argv[sys.argv.index("--run-config") + 1])
counter = pathlib.Path({counter!r})
calls = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(calls))
print(f"fake train call {{calls}}")
if calls == 1:
    print("attempt one fails: out of memory (simulated)", file=sys.stderr)
    sys.exit(1)
out = pathlib.Path(cfg["out_dir"])
out.mkdir(parents=True, exist_ok=True)
(out / "status.json").write_text(json.dumps({{"status": "ok"}}))
'''


def test_failed_attempt_log_is_kept_across_retries(tmp_path):
    work = copy_workflow(tmp_path / "work")
    results = work / "results"
    data = results / "data" / "smoke_diabetes"
    # a processed dataset made outside Snakemake counts as present: only the train job runs
    (work / "data" / "raw" / "smoke_diabetes").mkdir(parents=True)
    (work / "data" / "raw" / "smoke_diabetes" / ".complete").write_text("")
    data.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "autonorm-train"
    fake.write_text(FAKE_TRAIN.format(python=sys.executable, counter=str(tmp_path / "calls")))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    target = results / "runs" / "smoke_diabetes" / "frozen_ln" / "seed0" / "status.json"
    p = snakemake(work, str(target.relative_to(work)), "--cores", "1", "--retries", "1", *SMOKE,
                  "--config", "results_dir=results",
                  env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert target.exists()
    logs = results / "logs" / "train" / "smoke_diabetes" / "frozen_ln"
    latest = (logs / "seed0.log").read_text()
    assert "fake train call 2" in latest and "call 1" not in latest  # this attempt's log
    history = (logs / "seed0.attempts.log").read_text()
    # the failed first attempt, with its error, then the second
    assert history.count("=== attempt started") == 2
    assert history.index("attempt one fails: out of memory") < history.index("fake train call 2")


# ---- item 4: a partial grid does not overwrite the full report ---------------------------------

def test_partial_grid_refuses_to_overwrite_the_report(tmp_path):
    results = tmp_path / "results"
    tables = results / "tables"
    tables.mkdir(parents=True)
    full = {"datasets": ["smoke_diabetes", "smoke_digits"], "methods": ["autonorm_s", "frozen_ln"], "seeds": [0, 1],
            "variants": []}
    (tables / "grid.json").write_text(json.dumps(full))
    base = ["-n", "all", *SMOKE, "--config", f"results_dir={results}", f"raw_dir={tmp_path}/raw",
            "methods=[frozen_ln,autonorm_s]", "seeds=[0,1]"]
    # the subset: refused while the DAG is built, naming the way out
    p = snakemake(ROOT, *base, "datasets=[smoke_digits]")
    out = p.stdout + p.stderr
    assert p.returncode != 0 and "report_name=" in out and "lacks datasets ['smoke_diabetes']" in out, out[-3000:]
    assert "Job stats" not in out
    # the subset under its own name: its report lands beside the main one
    p = snakemake(ROOT, *base, "datasets=[smoke_digits]", "report_name=digits_only")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert f"{results}/reports/digits_only/report.md" in out and f"{results}/reports/digits_only/tables/grid.json" in out
    assert f"{results}/report.md" not in out.replace(f"{results}/reports/", "")
    # a larger grid (more seeds) may replace it (the same grid too: tests/test_config_validation.py)
    p = snakemake(ROOT, *base[:-1], "seeds=[0,1,2]", "datasets=[smoke_diabetes,smoke_digits]")
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]


# ---- issue 15: `snakemake --cores 8 all` offline fails fast and says what to place where --------

@pytest.mark.slow
def test_offline_run_fails_fast_naming_the_files(tmp_path):
    work = copy_workflow(tmp_path / "work")
    start = time.monotonic()
    p = snakemake(work, "--cores", "8", "all", "--config", f"results_dir={tmp_path}/results",
                  f"raw_dir={tmp_path}/raw", "datasets=[mnist,sst2]", timeout=limit(150))
    elapsed = time.monotonic() - start
    out = p.stdout + p.stderr
    assert p.returncode != 0
    assert elapsed < 120, f"offline failure took {elapsed:.0f} s"
    logs = {d: (tmp_path / "results" / "logs" / "download" / f"{d}.log") for d in ("mnist", "sst2")}
    failed = [d for d, log in logs.items() if log.exists() and "ERROR" in log.read_text()]
    assert failed, out[-4000:]
    for d in failed:
        text = logs[d].read_text()
        assert str(tmp_path / "raw" / d) in text, text  # where to put the files
    assert not list((tmp_path / "results").glob("runs/*/*/*/status.json"))  # nothing trained


# ---- item 1 (workflow side): evaluation is tied to the run's config hash -----------------------

def test_evaluate_is_given_the_run_config_hash(tmp_path):
    import yaml

    from autonorm.config.run_config import deep_merge, resolve_run_config
    from autonorm.provenance import run_config_hash

    target = f"{tmp_path}/results/eval/smoke_digits/autonorm_s/seed1.json"
    p = snakemake(ROOT, "-n", "-p", target, *SMOKE, "--config", f"results_dir={tmp_path}/results",
                  f"raw_dir={tmp_path}/raw")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    passed = [line.split("--expected-config-hash ")[1].split()[0].strip("'") for line in out.splitlines()
              if "autonorm-evaluate" in line and "--expected-config-hash" in line]
    cfg = deep_merge(yaml.safe_load((ROOT / "config.yaml").read_text()),
                     yaml.safe_load((ROOT / "workflow" / "presets" / "smoke.yaml").read_text()))
    assert passed == [run_config_hash(resolve_run_config(cfg, "smoke_digits", "autonorm_s", 1))]


# ---- item 10 (workflow side): an offline decision to generate CIFAR-10-C is revisited -----------

@pytest.mark.slow
def test_generated_corruption_set_is_revisited_when_the_release_appears(tmp_path):
    work = copy_workflow(tmp_path / "work")
    raw = tmp_path / "raw"
    marker = raw / "cifar10c" / ".complete"
    args = ["--cores", "1", "--config", f"results_dir={tmp_path}/results", f"raw_dir={raw}", "datasets=[cifar10]",
            "methods=[frozen_ln]", "reference_method=frozen_ln", "seeds=[0]"]
    # offline: the download fails fast, the marker says the set will be generated
    p = snakemake(work, str(marker), *args)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    log = (tmp_path / "results" / "logs" / "download" / "cifar10c.log").read_text()
    assert "planned source: generated" in log
    p = snakemake(work, "-n", str(marker), *args)
    assert "Nothing to be done" in p.stdout + p.stderr  # nothing changed: nothing reruns
    # the official release is placed by hand: the marker no longer stands for the decision
    (raw / "cifar10c" / "CIFAR-10-C.tar").write_bytes(b"")
    p = snakemake(work, "-n", str(marker), *args)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "rule download_corruptions" in out and "params" in out.lower(), out[-3000:]


def test_unwritable_results_folder_is_refused_in_one_paragraph(tmp_path):
    import subprocess

    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    (results / "runs" / "keep.json").write_text("{}")
    if subprocess.run(["chattr", "+i", str(results / "runs")], capture_output=True).returncode != 0:
        pytest.skip("chattr +i (an immutable folder, which stops root too) is not supported here")
    try:
        r = smoke_snakemake(tmp_path, "datasets=[smoke_digits]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                       'ablations={"datasets": [], "variants": []}')
    finally:
        subprocess.run(["chattr", "-i", str(results / "runs")])
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert f"results folder {results / 'runs'} is not writable" in out, out[-2000:]
    assert "Traceback" not in out
    assert (results / "runs" / "keep.json").exists()
