"""The findings page (`autonorm-report --findings`): a claims ledger over the studies that exist.

Why: a reader of the repository should find what holds of the paper without running anything;
the page must name every claim, say where it was tested, and give a verdict that follows from
the numbers by the rule it states, never a verdict the numbers do not support.
"""
from __future__ import annotations

import math

import pytest

from autonorm import report
from autonorm.report.findings import page as findings


def test_a_paired_difference_by_the_stated_rule():
    from autonorm.report.findings.rules import Claim, Paired, judge

    base = {"n": 3, "mean_diff": 0.5, "sd_diff": 0.1, "p_holm": 0.01, "mdd80_holm": 0.3}
    p = Paired.of(base)
    # the 95% CI of the paired difference by hand: 0.5 +- t(0.975, 2) * 0.1 / sqrt(3)
    half = 4.302652729911275 * 0.1 / math.sqrt(3)
    assert p.text() == f"+0.5 [{0.5 - half:+.3g}, {0.5 + half:+.3g}] (95% CI, unadjusted; n=3)"
    assert judge(p, Claim(+1), math.nan).startswith("reproduced: the lead holds (the paper's sign, p (Holm) = 0.01)")
    assert judge(p, Claim(-1), math.nan).startswith("contradicted (the lead): the lead is reversed")
    v = judge(Paired.of(dict(base, p_holm=0.2)), Claim(+1), math.nan)
    assert v.startswith("inconclusive: the lead is not shown (p (Holm) = 0.2; detectable Δ 0.3)")
    assert judge(Paired.of(dict(base, n=2)), Claim(+1), math.nan) == "inconclusive: 2 paired seed(s), no test has power"


@pytest.fixture(scope="module")
def page(paper_results, tmp_path_factory):
    root = paper_results  # shared and read-only: the page is written elsewhere
    here = tmp_path_factory.mktemp("findings")
    out = here / "docs" / "findings.md"
    figs = here / "docs" / "findings"
    assert report.main(["--findings", "--study", f"paper={root}", "--study",
                        f"depth={here / 'nowhere'}", "--out", str(out),
                        "--figures-dir", str(figs)]) == 0
    return out.read_text(), figs


def test_ledger_has_a_row_per_claim(page):
    text, _ = page
    ledger = text[text.index("## Claims ledger"):]
    for claim in ("MNIST accuracy: AutoNorm-S 99.18 vs frozen_ln 98.82",
                  "PTB tag perplexity", "Energy Efficiency RMSE",
                  "MNIST: w_LN > 0.85 in every selector within 5 epochs",
                  "PTB: deep layers (blocks 7-11: paper layers 8-12) prefer DyT",
                  "CIFAR-10: freezing the selectors after epoch 10",
                  "Selector capacity", "Distillation from the Teacher MLP",
                  "the selectors add < 1% parameters and < 0.1% FLOPs"):
        assert claim in ledger, claim
    # the doubtful numbers are contradicted on their face, with the reason
    row = next(r for r in ledger.splitlines() if r.startswith("| Energy Efficiency RMSE"))
    assert "cannot be what it says: the paper's Energy" in row
    # selectors at our width d/2: +12.8% parameters; the paper gives no width, and < 1% holds up to 5
    row = next(r for r in ledger.splitlines() if "< 1% parameters and < 0.1% FLOPs" in r)
    assert "depends on our choice" in row  # the fake runs record no model width (the widths: test_ledger_rules)


def test_provenance_staleness_and_missing_studies(page):
    text, _ = page
    assert "Commit " in text and "autonorm-report --findings" in text
    assert "go stale when the code" in text
    assert "not found here (no record, no results folder): depth, laptop." in text
    assert "docs/history/findings-2026-12-01.md" in text  # the earlier page, kept for its numbers


def test_figures_are_small_pngs(page):
    text, figs = page
    pngs = sorted(figs.glob("*.png"))
    assert {p.name for p in pngs} >= {"gates_per_selector.png", "entropy_over_epochs.png",
                                       "method_comparison.png"}
    for p in pngs:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size <= 300_000
        assert f"](findings/{p.name})" in text


def test_no_study_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no study found"):
        findings.main(["--study", f"x={tmp_path}", "--out", str(tmp_path / "f.md")])


def test_committed_findings_and_the_readme_summary_agree():
    """The README's "What we found" block is the generated summary of the committed docs/findings.md:
    at most 6 lines and 1,600 characters, a link to the page, and its one-line tally (the byte-for-byte
    regeneration test below rebuilds the block itself)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "findings.md").read_text()
    readme = (root / "README.md").read_text()
    block = re.search(r"<!-- findings:start[^>]*-->\n(.*?)<!-- findings:end -->", readme, re.S).group(1)
    lines = [ln for ln in block.splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 6 and len(block.strip()) <= 1600, lines
    assert "(docs/findings.md)" in block
    tally = re.search(r"^In one line: (\d+) claims of the paper: (.*?); besides", page, re.M)
    assert tally, "docs/findings.md has no tally line"
    # the block's last line counts the same claims, each nonzero category
    assert lines[-1].startswith(f"- Over {tally.group(1)} statements of the paper: "), (tally.group(1), lines[-1])
    for n, word in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", tally.group(2)):
        assert (f"{n} {word}" in lines[-1]) == (n != "0"), (n, word, lines[-1])
    for png in re.findall(r"\]\((findings/[\w.]+\.png)\)", page):
        assert (root / "docs" / png).stat().st_size < 300_000, png


def test_the_page_itself_is_not_an_uncommitted_change(tmp_path, monkeypatch):
    """Regenerating the page over an older committed version must not stamp it "with uncommitted
    changes"; a changed source file must."""
    import subprocess
    from pathlib import Path

    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "docs" / "findings").mkdir(parents=True)
    (tmp_path / "docs" / "findings.md").write_text("old\n")
    (tmp_path / "docs" / "findings" / "a.png").write_bytes(b"old")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    monkeypatch.setattr(findings, "_git", lambda *a: subprocess.run(
        ["git", *a], cwd=tmp_path, capture_output=True, text=True).stdout.strip())
    (tmp_path / "docs" / "findings.md").write_text("new\n")
    (tmp_path / "docs" / "findings" / "a.png").write_bytes(b"new")
    out, figs = tmp_path / "docs" / "findings.md", tmp_path / "docs" / "findings"
    assert findings._code_changes(out, figs) == []
    (tmp_path / "code.py").write_text("x = 2\n")
    assert [Path(p).name for p in findings._code_changes(out, figs)] == ["code.py"]


def test_committed_page_regenerates_from_the_committed_records_byte_for_byte(tmp_path, monkeypatch):
    """docs/findings.md, its figures and the README's findings block are a function of studies/,
    benchmarks/records/ and the code: a fresh clone (here: the records alone, in a folder with no
    results) rebuilds them byte for byte. Fails when the
    code's page changed and the committed page was not regenerated, or a figure is not reproducible."""
    import shutil
    from pathlib import Path

    import matplotlib

    from autonorm.report import plotting

    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "studies", tmp_path / "studies")
    shutil.copytree(root / "benchmarks" / "records", tmp_path / "benchmarks" / "records")
    shutil.copy(root / "README.md", tmp_path / "README.md")
    monkeypatch.chdir(tmp_path)
    # a style set earlier in the process (the report's seaborn theme: CI's full suite draws the
    # report first) must not reach the page's figures
    with matplotlib.rc_context():
        plotting.style()
        matplotlib.rcParams["lines.linewidth"] = 7.0
        assert findings.main(["--findings"]) == 0
    assert (tmp_path / "docs" / "findings.md").read_text() == (root / "docs" / "findings.md").read_text()
    assert (tmp_path / "README.md").read_text() == (root / "README.md").read_text()  # its generated block too
    ours = sorted(p.name for p in (tmp_path / "docs" / "findings").iterdir())
    assert ours == sorted(p.name for p in (root / "docs" / "findings").iterdir())
    for name in ours:
        assert (tmp_path / "docs" / "findings" / name).read_bytes() == (root / "docs" / "findings" / name).read_bytes(), name


def test_a_page_written_elsewhere_leaves_the_readme_alone(tmp_path, monkeypatch):
    """The README's block is rewritten only beside the docs/ folder the page goes into: a page written
    anywhere else (a test's, a user's copy) never touches the repository's README."""
    import shutil
    from pathlib import Path

    from autonorm.report.findings import figures

    root = Path(__file__).resolve().parents[1]
    # one small study: the README's handling is the point, not the page (which the test above rebuilds whole)
    shutil.copytree(root / "studies" / "depth", tmp_path / "studies" / "depth")
    (tmp_path / "README.md").write_text("x\n<!-- findings:start -->\nold\n<!-- findings:end -->\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(figures, "FIGURES", ())  # the README's block is the point here, not the figures
    assert findings.main(["--findings", "--out", str(tmp_path / "elsewhere" / "f.md"),
                          "--figures-dir", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "README.md").read_text() == "x\n<!-- findings:start -->\nold\n<!-- findings:end -->\n"
    assert findings.main(["--findings"]) == 0  # docs/findings.md: the README beside it
    assert "statements of the paper" in (tmp_path / "README.md").read_text()


def test_the_forest_draws_every_in_regime_comparison_of_an_rmse_too(tmp_path):
    """The forest plot holds every comparison of the primary metric the ledger judges in the paper's
    regime: California's learned-vs-random rows (an RMSE) were left out when it drew accuracy alone,
    though the ledger decides them (california_depth, 12 x 128)."""
    from pathlib import Path

    from autonorm.analysis.collect import load_reference
    from autonorm.report.findings.figures import forest_rows
    from autonorm.report.findings.studies import find_studies

    root = Path(__file__).resolve().parents[1]
    folder = root / "studies" / "california_depth"
    studies = find_studies([("california_depth", str(folder))], root / "studies", tmp_path)
    rows = forest_rows(studies, load_reference(None))
    labels = {r[0].split(", n=")[0]: r for r in rows}
    assert "california_depth, California Housing: autonorm_s − frozen_ln (stated lead and equivalence)" in labels
    lvr = [r for k, r in labels.items() if k.endswith("autonorm − random")]
    assert len(lvr) == 1 and lvr[0][-1] == "rmse"
    label, diff, lo90, hi90, lo95, hi95, m, paper, metric = lvr[0]
    # the thick bar is the interval the verdict reads: 90% alone, the family's Bonferroni level (here 2 tests:
    # 95%, the thin bar's) in a family
    assert lo95 <= lo90 < diff < hi90 <= hi95 and m == pytest.approx(0.004 * 0.4905) and math.isnan(paper)


def test_a_best_of_fewer_seeds_than_the_study_names_its_n():
    """"How far each study's models got": the best mean of a method with fewer finished seeds than the
    study's most (California's AdaNorm, its first seed beside five of frozen_ln) names its n; an equal n
    does not."""
    from collections import Counter
    from pathlib import Path

    from autonorm.analysis.record_runs import finished_runs
    from autonorm.analysis.study_folders import load_study

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "findings.md").read_text(encoding="utf-8")
    for study, dataset in (("california_depth", "California Housing"), ("mnist_patch4", "MNIST")):
        (row,) = [r for r in text.splitlines() if r.startswith(f"| {study} | {dataset} |")]
        best = row.split(" | ")[3]
        seeds = Counter(m for _, m, _ in finished_runs(load_study(root / "studies" / study)))
        n, most = seeds[best.split()[0]], max(seeds.values())
        assert (f"(n={n} of {most})" in best) == (n < most) and ("(n=" in best) == (n < most), (study, best)


def test_the_static_ceiling_row_reads_each_methods_own_seeds(tmp_path):
    """§3.2's row (frozen_ln − DyT, Welch): each method's own n goes into the interval, and a method with one
    seed gets no interval (not "[nan, nan]"). California's DyT began with one seed beside five of frozen_ln;
    the interval once took frozen_ln's n for both."""
    from pathlib import Path

    from scipy import stats as sps

    from autonorm.analysis.collect import load_reference
    from autonorm.report.findings.statement_rows import _static_ceiling_rows
    from autonorm.report.findings.studies import find_studies

    root = Path(__file__).resolve().parents[1]
    (st,) = find_studies([("california_depth", str(root / "studies" / "california_depth"))], root / "studies", tmp_path)
    s = st.ctx.summary
    at = (s.dataset == "california_housing") & (s.metric == "rmse")
    fl, dyt = (s[at & (s.method == m)].index[0] for m in ("frozen_ln", "dyt"))
    reference = load_reference(None)

    s.loc[fl, ["mean", "std", "n"]] = [0.46, 0.004, 5]
    s.loc[dyt, ["mean", "std", "n"]] = [0.56, 0.02, 1]
    (row,) = _static_ceiling_rows([st], reference)
    assert "nan" not in row.ours.lower() and "no interval (it needs 2 seeds of each)" in row.ours
    assert "frozen_ln 0.46 (n=5), dyt 0.56 (n=1)" in row.ours and row.where.endswith("n=1")

    s.loc[dyt, ["std", "n"]] = [0.02, 2]
    (row,) = _static_ceiling_rows([st], reference)
    # by hand: va = 0.004²/5 = 3.2e-6, vb = 0.02²/2 = 2e-4; se = sqrt(2.032e-4) = 0.014255;
    # Welch df = (2.032e-4)² / ((3.2e-6)²/4 + (2e-4)²/1) = 1.0322; -0.1 ± t(0.95, df) * se
    va, vb = 0.004 ** 2 / 5, 0.02 ** 2 / 2
    df = (va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 1)
    assert df == pytest.approx(1.0322, abs=1e-4)
    half = sps.t.ppf(0.95, df) * math.sqrt(va + vb)
    assert f"[{-0.1 - half:+.3g}, {-0.1 + half:+.3g}]" in row.ours
    # frozen_ln's n for both (the old call) would give a far narrower interval: df 4.32, half 0.019
    assert half > 0.08


def test_the_static_ceiling_verdict_names_its_datasets(tmp_path):
    """The paper's ceiling names no dataset, so it is every dataset's: a decided row says which datasets it rests
    on and how many of the paper's nine trained datasets (CIFAR-10-C is a test set) have no DyT run in the regime."""
    from pathlib import Path

    from autonorm.analysis.collect import load_reference
    from autonorm.report.findings.statement_rows import _static_ceiling_rows
    from autonorm.report.findings.studies import find_studies

    root = Path(__file__).resolve().parents[1]
    (st,) = find_studies([("california_depth", str(root / "studies" / "california_depth"))], root / "studies", tmp_path)
    s = st.ctx.summary
    at = (s.dataset == "california_housing") & (s.metric == "rmse")
    fl, dyt = (s[at & (s.method == m)].index[0] for m in ("frozen_ln", "dyt"))
    s.loc[fl, ["mean", "std", "n"]] = [0.46, 0.004, 5]
    s.loc[dyt, ["mean", "std", "n"]] = [0.56, 0.004, 5]
    (row,) = _static_ceiling_rows([st], load_reference(None))
    assert row.in_regime
    assert row.verdict.startswith("reproduced (on California Housing only; the paper's ceiling is every dataset's, "
                                  "and 8 of its 9 datasets have no DyT run in its regime): frozen_ln above DyT")
    assert row.word == "reproduced"   # the tally still reads the verdict's word
    s.loc[dyt, "mean"] = 0.40         # DyT below frozen_ln's RMSE: above the ceiling
    (row,) = _static_ceiling_rows([st], load_reference(None))
    assert row.verdict.startswith("contradicted (on California Housing only;") and row.word == "contradicted"


def test_the_learning_table_keeps_a_means_trailing_zero(tmp_path):
    """"How far each study's models got" prints a mean to about 4 figures with its trailing zero: an RMSE of
    0.4560 reads 0.4560 beside frozen_ln's 0.4624, not 0.456 (as if known to 3 figures)."""
    from pathlib import Path

    from autonorm.analysis.collect import load_reference
    from autonorm.report.findings.main_table import learning_rows
    from autonorm.report.findings.studies import find_studies

    root = Path(__file__).resolve().parents[1]
    (st,) = find_studies([("california_depth", str(root / "studies" / "california_depth"))], root / "studies", tmp_path)
    s = st.ctx.summary
    at = (s.dataset == "california_housing") & (s.metric == "rmse")
    s.loc[at, "mean"] = 0.50
    s.loc[at & (s.method == "frozen_ln"), "mean"] = 0.46238
    s.loc[at & (s.method == "film"), "mean"] = 0.45598
    (row,) = [r for r in learning_rows([st], load_reference(None)) if r[1] == "California Housing"]
    assert row[3] == "film 0.4560" and row[4] == "0.4624"
