"""The Snakemake workflow: lint, config validation, the paper grid's dry run,
a real end-to-end smoke run and a partial rerun (in temporary folders)."""

import json
import re
import subprocess

import pandas as pd
import pytest

from helpers.snakemake_runs import ROOT, SMOKE, copy_workflow, job_counts, planned_outputs, snakemake

pytestmark = pytest.mark.dag  # every test runs Snakemake


def test_lint_is_clean():
    p = snakemake("--lint", check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_paper_grid_dry_run_job_counts(tmp_path):
    p = snakemake("-n", "all", "--config", f"results_dir={tmp_path}/r", f"raw_dir={tmp_path}/raw")
    c = job_counts(p.stdout + p.stderr)
    n_runs = 9 * 8 * 5
    # AutoNorm-S on the NLP family (whose freeze is off) is the same training as AutoNorm:
    # trained once, its eval file copied and marked (same_run_eval)
    same = 2 * 5
    assert c["train"] == n_runs - same and c["evaluate"] == n_runs - same and c["same_run_eval"] == same
    assert c["download"] == 9 and c["preprocess"] == 9
    assert c["download_corruptions"] == 1 and c["make_corruptions"] == 1
    assert c["aggregate"] == c["figures"] == c["report"] == 1
    # every dataset x method x seed is evaluated once
    evals = set(re.findall(r"eval/(\w+)/(\w+)/seed(\d+).json", p.stdout + p.stderr))
    assert len(evals) == n_runs


def test_building_the_dag_imports_no_torch_scipy_or_matplotlib(tmp_path):
    """Every snakemake call (dry runs too) builds the DAG first: the Snakefile and rules import only
    light modules (torch alone is ~2 s of start-up; see autonorm/output_names.py)."""
    import sys

    heavy = ("torch", "scipy", "matplotlib")
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: print('HEAVY', [m for m in {heavy!r} if m in sys.modules]))\n"
            "from snakemake.cli import main\n"
            f"sys.argv = ['snakemake', '-n', '--quiet', '--config', 'results_dir={tmp_path}/r', "
            f"'raw_dir={tmp_path}/raw', '--', 'all']\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "HEAVY []" in p.stdout, p.stdout[-500:]


@pytest.mark.parametrize("override,key", [
    ("datasets=[mnist,imagenet]", "datasets"),
    ("methods=[frozen_ln,batchnorm]", "methods"),
    ("seeds=[-1]", "seeds"),
    ("autonorm={'tau': 'hot'}", "autonorm.tau"),
])
def test_bad_config_fails_before_any_job(tmp_path, override, key):
    p = snakemake("-n", "all", "--config", override, f"results_dir={tmp_path}/r", check=False)
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert key.split(".")[0] in out
    assert not (tmp_path / "r").exists()


def test_small_dag_end_to_end_with_a_quiet_console(tmp_path):
    """The default suite's end-to-end run: a small grid through every rule (download, preprocess,
    train, evaluate, aggregate, figures, report). The console shows progress, not commands, and
    ends with where the report is."""
    work = copy_workflow(tmp_path)
    p = snakemake("all", "--cores", "2", *SMOKE, "--config", "results_dir=results",
                  "datasets=[smoke_diabetes,smoke_pos]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                  cwd=work)
    out = p.stdout + p.stderr
    res = work / "results"
    assert (res / "report.md").is_file() and (res / "figures" / "method_comparison.png").is_file()
    assert "autonorm-train --run-config" not in out and len(out) < 20_000  # no 6,000-character commands
    # one line per job, not Snakemake's block of files and resources (autonorm.workflow_support.console)
    assert "] rule train: dataset=smoke_pos, method=frozen_ln, seed=0 (jobid " in out and "    output: " not in out
    tail = p.stdout.strip().splitlines()[-6:]  # Snakemake logs to stderr; the handler prints to stdout
    assert any(line.startswith("Report:") and "results/report.md" in line for line in tail), tail
    runs = pd.read_csv(res / "tables" / "runs.csv")
    assert len(runs) == 4 and (runs["status"] == "ok").all()
    # a deleted evaluation is remade, and the tables and report after it in the same invocation
    # (Snakemake alone leaves a missing intermediate file alone while the files after it exist)
    (res / "eval" / "smoke_pos" / "frozen_ln" / "seed0.json").unlink()
    dry = snakemake("-n", "all", "--cores", "2", *SMOKE, "--config", "results_dir=results",
                    "datasets=[smoke_diabetes,smoke_pos]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                    cwd=work)
    c = job_counts(dry.stdout + dry.stderr)
    assert c["train"] == 0 and c["evaluate"] == 1 and c["aggregate"] == c["report"] == 1, dict(c)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One real run of the whole smoke DAG in a temporary copy of the workflow."""
    work = copy_workflow(tmp_path_factory.mktemp("smoke"))
    p = snakemake("all", "--cores", "2", *SMOKE, "--config", "results_dir=results", cwd=work)
    return work, p


@pytest.mark.slow
def test_smoke_dag_end_to_end(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    report = (res / "report.md").read_text()
    assert "stand-in" in report.lower()
    for d in ["smoke_digits", "smoke_shapes32", "smoke_pos", "smoke_sentiment", "smoke_diabetes"]:
        assert d in report
    summary = pd.read_csv(res / "tables" / "summary.csv")
    assert set(summary["method"]) >= {"frozen_ln", "dyt", "random", "autonorm", "autonorm_s", "adanorm",
                                      "film", "teacher_mlp"}
    acc = summary[(summary.dataset == "smoke_digits") & (summary.metric == "accuracy")]
    assert (acc["n"] == 2).all() and (acc["mean"] > 30).all()  # 10 classes: well above chance
    runs = pd.read_csv(res / "tables" / "runs.csv")
    assert len(runs) == 5 * 8 * 2 and (runs["status"] == "ok").all()
    for f in ["method_comparison.png", "gate_entropy.png", "wdyt_heatmap.png", "corruptions.png"]:
        assert (res / "figures" / f).stat().st_size > 5000
    ev = json.loads((res / "eval" / "smoke_shapes32" / "autonorm_s" / "seed0.json").read_text())
    assert len(ev["corruptions"]) == 15 and ev["rotation"]["accuracy"] >= 0
    freeze = json.loads((res / "runs" / "smoke_digits" / "autonorm_s" / "seed0" / "freeze.json").read_text())
    assert freeze["enabled"] and freeze["entropy_at_decision"] is not None
    log = (res / "logs" / "train" / "smoke_digits" / "autonorm_s" / "seed0.log").read_text()
    assert "epoch 6/6" in log
    attempts = (res / "logs" / "train" / "smoke_digits" / "autonorm_s" / "seed0.attempts.log").read_text()
    assert attempts.count("=== attempt started") == 1 and "epoch 6/6" in attempts
    grid = json.loads((res / "tables" / "grid.json").read_text())
    assert grid["datasets"] == sorted(["smoke_digits", "smoke_shapes32", "smoke_pos", "smoke_sentiment",
                                       "smoke_diabetes"]) and grid["seeds"] == [0, 1]


@pytest.mark.slow
def test_a_deleted_status_json_retrains_its_run(smoke_run):
    """Deleting a run's status.json (by hand, or a cleanup script) retrains that run and only it,
    though the report after it exists.
    Runs before the partial-rerun test, which changes a dataset's config."""
    work, _ = smoke_run
    (work / "results" / "runs" / "smoke_digits" / "dyt" / "seed1" / "status.json").unlink()
    dry = snakemake("-n", "all", "--cores", "2", *SMOKE, "--config", "results_dir=results", cwd=work)
    c = job_counts(dry.stdout + dry.stderr)
    assert c["train"] == 1, dry.stdout[-3000:]
    assert planned_outputs(dry.stdout, "train") == ["results/runs/smoke_digits/dyt/seed1/status.json"]
    assert c["evaluate"] == 1 and c["aggregate"] == c["report"] == 1, dict(c)
    # and the real run retrains it (leaving the shared smoke results whole for the tests after it),
    # then evaluates it and remakes the tables and the report in the same invocation
    snakemake("all", "--cores", "2", *SMOKE, "--config", "results_dir=results", cwd=work)
    status_file = work / "results" / "runs" / "smoke_digits" / "dyt" / "seed1" / "status.json"
    assert json.loads(status_file.read_text())["status"] == "ok"
    assert (work / "results" / "report.md").stat().st_mtime >= status_file.stat().st_mtime


@pytest.mark.slow
def test_partial_rerun_touches_one_dataset(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    other = res / "eval" / "smoke_digits" / "frozen_ln" / "seed0.json"
    before = other.stat().st_mtime_ns
    # change one dataset's hyperparameters
    (work / "tweak.yaml").write_text("dataset_config:\n  smoke_diabetes:\n    family: tabular\n"
                                     "    train: {lr: 0.001}\n")
    args = ["all", "--cores", "2", *SMOKE, "tweak.yaml", "--config", "results_dir=results"]
    dry = snakemake("-n", *args, cwd=work)
    c = job_counts(dry.stdout + dry.stderr)
    assert c["train"] == 16 and c["evaluate"] == 16  # smoke_diabetes: 8 methods x 2 seeds
    trained = {re.search(r"runs/(\w+)/", o).group(1) for o in planned_outputs(dry.stdout, "train")}
    assert trained == {"smoke_diabetes"}, planned_outputs(dry.stdout, "train")
    snakemake(*args, cwd=work)
    assert other.stat().st_mtime_ns == before
    cfg = json.loads((res / "runs" / "smoke_diabetes" / "autonorm_s" / "seed1" / "config.json").read_text())
    assert cfg["train"]["lr"] == 0.001


