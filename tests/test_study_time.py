"""benchmarks/study_time.py: reading a study's benchmark files and comparing two studies' jobs."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "study_time.py"


@pytest.fixture(scope="module")
def study_time():
    spec = importlib.util.spec_from_file_location("study_time", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _study(root: Path, jobs: dict[str, float]) -> Path:
    """A results folder whose benchmarks/ holds one Snakemake benchmark TSV per job (wall time s)."""
    for job, wall in jobs.items():
        tsv = root / "benchmarks" / f"{job}.tsv"
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text("s\th:m:s\tmax_rss\tcpu_time\n"
                       f"{wall}\t0:00:00\t1.0\t{wall / 2}\n")
    return root


def test_compare_sums_only_the_jobs_both_studies_ran(study_time, tmp_path):
    before = _study(tmp_path / "before", {"train/mnist/dyt/seed0": 60.0, "train/mnist/dyt/seed1": 40.0,
                                          "train/sst2/dyt/seed0": 100.0, "preprocess/mnist": 5.0,
                                          "train/mnist/film/seed0": 70.0})   # not in "after": left out
    after = _study(tmp_path / "after", {"train/mnist/dyt/seed0": 54.0, "train/mnist/dyt/seed1": 36.0,
                                        "train/sst2/dyt/seed0": 45.0, "preprocess/mnist": 5.0,
                                        "train/energy_efficiency/dyt/seed0": 9.0})  # not in "before"
    rows = study_time.compare(study_time.read_benchmarks(after), study_time.read_benchmarks(before))
    by = {(r[0], r[1]): r[2:] for r in rows}
    assert by[("train", "mnist")] == (2, 100.0, 90.0)
    assert by[("train", "sst2")] == (1, 100.0, 45.0)
    assert by[("preprocess", "mnist")] == (1, 5.0, 5.0)
    assert ("train", "energy_efficiency") not in by
    assert rows[-1] == ("all", "", 4, 205.0, 140.0)


def test_against_prints_the_ratio_and_refuses_an_empty_study(study_time, tmp_path, capsys):
    before = _study(tmp_path / "before", {"train/mnist/dyt/seed0": 80.0})
    after = _study(tmp_path / "after", {"train/mnist/dyt/seed0": 60.0})
    assert study_time.main([str(after), "--against", str(before)]) == 0
    out = capsys.readouterr().out
    assert "| train | mnist | 1 | 80 | 60 | 0.75 |" in out
    assert "**0.75**" in out
    (tmp_path / "empty" / "benchmarks").mkdir(parents=True)
    with pytest.raises(SystemExit, match="no benchmark TSVs under .*empty"):
        study_time.main([str(after), "--against", str(tmp_path / "empty")])
