"""The answer first (report.findings.answer), the scorecard (report.scorecard), the paper's spread and the one
level of every reading (report.findings.rules), and which runs are one training (analysis.trainings)."""
from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from autonorm.analysis import trainings
from autonorm.report import scorecard
from autonorm.report.findings import answer, rules
from autonorm.report.findings.rules import Claim, Paired

ROOT = Path(__file__).resolve().parents[1]
LEAD = Claim(+1, True, 0.36, ("AutoNorm-S", "frozen_ln"), ("the lead", "\"within the 95% CI\""))


# --------------------------------------------------------------------------- the paper's spread
def test_a_stated_number_is_held_with_both_spreads():
    """MNIST (Table 1): AutoNorm-S 99.18 ± 0.10, FrozenLN 98.82 ± 0.13 over 5 seeds, the stated lead +0.36.
    By hand: the paper's SE = sqrt(0.10²/5 + 0.13²/5) = sqrt(0.002 + 0.00338) = 0.07335, its Welch df
    0.00538² / (0.002²/4 + 0.00338²/4) = 7.506. Ours (mnist_patch4): -0.062 over 5 paired seeds with SE
    0.0897 (its 95% CI half-width 0.249 / t(0.975, 4) 2.7764). Together: SE sqrt(0.0897² + 0.07335²) =
    0.1159, df (0.01343)² / (0.0897⁴/4 + 0.07335⁴/7.506) = 8.99; one family of 3 tests, so the bound is
    one-sided 0.05/3: t(0.98333, 8.996) = 2.5098, and -0.062 + 2.5098 x 0.11586 = +0.2288 < 0.36: excluded."""
    se_p = math.sqrt(0.10 ** 2 / 5 + 0.13 ** 2 / 5)
    assert se_p == pytest.approx(0.07335, abs=1e-5)
    df_p = (0.002 + 0.00338) ** 2 / (0.002 ** 2 / 4 + 0.00338 ** 2 / 4)
    assert df_p == pytest.approx(7.506, abs=1e-3)
    se_o = 0.249 / 2.7764451051977987
    p = Paired(5, -0.062, se_o * math.sqrt(5), 0.53, family=3)
    claim = Claim(+1, True, 0.36, LEAD.sides, LEAD.parts, paper_se=se_p, paper_df=df_p)
    v = rules.judge(p, claim, 0.3953)
    assert v.startswith("contradicted (the lead): the lead of the paper's +0.36 is excluded with both spreads "
                        "(ours -0.062; bound +0.229; SE 0.12 of ours and the paper's together, 9 df, one-sided "
                        "98.3%, Bonferroni over 3 tests")
    # a paper SE of 0.155 (t = 2.32 > t(0.975, 8) 2.306: its own test significant) held with ours no longer excludes its +0.36
    wide = Claim(+1, True, 0.36, LEAD.sides, LEAD.parts, paper_se=0.155, paper_df=8.0)
    assert "is not excluded with both spreads" in rules.judge(p, wide, 0.3953)


def test_a_stated_number_its_own_spread_cannot_tell_from_zero_contradicts_nothing():
    """California (Table 2): AutoNorm-S 0.4892 ± 0.05, FrozenLN 0.4905 ± 0.06 RMSE: the stated lead 0.0013 over
    an SE of sqrt(0.05²/5 + 0.06²/5) = 0.03493, t = 0.037, far below t(0.975, ~8) 2.3: the paper's own
    numbers cannot tell it from zero (it calls it "not statistically significant" itself). Ours, +0.0037
    [-0.0024, +0.0098] over 5 seeds, excluded -0.0013 by 0.0003 when the number was held as exact; now the
    number is not held and the row is inconclusive (the lead not shown, the equivalence not shown)."""
    se_p = math.sqrt(0.05 ** 2 / 5 + 0.06 ** 2 / 5)
    assert se_p == pytest.approx(0.03493, abs=1e-5) and 0.0013 / se_p == pytest.approx(0.0372, abs=1e-4)
    sd = (0.00983 - 0.00371) / 2.7764451051977987 * math.sqrt(5)
    p = Paired(5, 0.00371, sd, 0.34, family=4)
    claim = Claim(-1, True, 0.0013, ("AutoNorm-S", "frozen_ln"), ("the lead", "\"not statistically significant\""),
                  higher_is_better=False, paper_se=se_p, paper_df=8.0)
    v = rules.judge(p, claim, 0.00196)
    assert v.startswith("inconclusive: the lead is not shown")
    assert "the paper's own spread cannot tell its -0.0013 from zero (SE 0.035" in v
    # held as exact (no spread), the same data exclude it at one-sided 95% (a family of one)
    exact = Claim(-1, True, 0.0013, claim.sides, claim.parts, higher_is_better=False)
    assert rules.judge(Paired(5, 0.00371, sd, 0.34, family=1), exact, 0.00196).startswith("contradicted (the lead)")


def test_one_level_for_every_reading():
    """A family of k tests reads every interval at 1 - 0.10/k (its ends one-sided at 0.05/k): 90% alone,
    96.67% for 3. By hand: n=5, mean 1.0, sd 1.0: t(0.95, 4) 2.1318 x 0.4472 = 0.9534 alone; t(0.98333, 4)
    3.1863 x 0.4472 = 1.4250 in a family of 3."""
    one, three = Paired(5, 1.0, 1.0, 0.1, family=1), Paired(5, 1.0, 1.0, 0.1, family=3)
    assert one.level == pytest.approx(0.90) and three.level == pytest.approx(1 - 0.1 / 3)
    assert one.bounds()[0] == pytest.approx(1.0 - 0.9534, abs=1e-4)
    assert three.bounds()[0] == pytest.approx(1.0 - 1.4250, abs=1e-4)
    assert three.level_text() == "96.7% CI (Bonferroni, 3 tests)" and one.bound_text() == "one-sided 95%"


# --------------------------------------------------------------------------- one training
def test_one_training_is_one_run_folder():
    runs = pd.DataFrame([
        {"dataset": "ptb_pos", "method": "autonorm", "seed": 0, "status": "ok", "path": "runs/ptb_pos/autonorm/seed0"},
        # AutoNorm-S with freezing disabled: read through AutoNorm's run
        {"dataset": "ptb_pos", "method": "autonorm_s", "seed": 0, "status": "ok", "path": "runs/ptb_pos/autonorm/seed0"},
        {"dataset": "mnist", "method": "autonorm", "seed": 0, "status": "ok", "path": "runs/mnist/autonorm/seed0"},
        {"dataset": "mnist", "method": "autonorm_s", "seed": 0, "status": "ok", "path": "runs/mnist/autonorm_s/seed0"},
        {"dataset": "mnist", "method": "autonorm", "seed": 1, "status": "failed", "path": "runs/mnist/autonorm/seed1"},
        {"dataset": "mnist", "method": "autonorm_s", "seed": 1, "status": "ok", "path": "runs/mnist/autonorm/seed1"},
    ])
    assert trainings.one_training(runs, "ptb_pos", "autonorm_s", "autonorm", 0)
    assert not trainings.one_training(runs, "mnist", "autonorm_s", "autonorm", 0)   # trained apart
    assert not trainings.one_training(runs, "mnist", "autonorm_s", "autonorm", 1)   # one arm not finished
    assert trainings.seeds(runs, "ptb_pos", "autonorm_s", "autonorm") == ([0], [])
    assert trainings.seeds(runs, "mnist", "autonorm_s", "autonorm") == ([], [0])


# --------------------------------------------------------------------------- the scorecard
def _summary(standin: bool) -> pd.DataFrame:
    rows = [("frozen_ln", 98.59, 0.22, 98.32, 98.87, 98.82, 0.13), ("autonorm_s", 98.53, 0.065, 98.45, 98.61, 99.18, 0.10),
            ("random", 98.12, 0.17, 97.91, 98.33, math.nan, math.nan), ("dyt", 97.0, 0.3, 96.6, 97.4, math.nan, math.nan)]
    return pd.DataFrame([{"dataset": "mnist", "source_dataset": "mnist", "method": m, "metric": "accuracy", "n": 5,
                          "mean": mean, "std": sd, "ci95_low": lo, "ci95_high": hi,
                          "paper_mean": math.nan if standin else pm, "paper_std": math.nan if standin else ps,
                          "standin": standin} for m, mean, sd, lo, hi, pm, ps in rows])


def test_the_scorecard_sets_the_papers_numbers_beside_ours():
    c = scorecard.card(_summary(False), "mnist")
    assert c.with_paper and [ln.method for ln in c.lines] == ["frozen_ln", "autonorm_s", "random"]  # no dyt: not in
    a = c.lines[1]
    assert a.diff == pytest.approx(98.53 - 98.59) and a.paper_diff == pytest.approx(99.18 - 98.82)
    table = scorecard.card_table(c)
    assert "| autonorm_s | 99.18 ± 0.1 | 98.53 ± 0.065 | [98.45, 98.61] | 5 | -0.06 | +0.36 |" in table
    assert "random (not in the paper's tables)" in table


def test_a_standin_scorecard_shows_ours_alone(tmp_path):
    c = scorecard.card(_summary(True), "mnist")
    assert not c.with_paper and [ln.method for ln in c.lines] == ["frozen_ln", "autonorm_s", "dyt", "random"]
    table = scorecard.card_table(c)
    assert "the paper" not in table.split("\n\n")[1] and "no paper number" in table
    assert scorecard.draw([c], tmp_path / "s.png") and (tmp_path / "s.png").stat().st_size > 1000


# --------------------------------------------------------------------------- the block
def test_a_block_past_its_limits_is_an_error_not_a_cut():
    assert answer.check_block("- a\n- b") == "- a\n- b"
    with pytest.raises(answer.BlockTooLong, match="7 lines"):
        answer.check_block("\n".join("- x" for _ in range(7)))
    with pytest.raises(answer.BlockTooLong, match="1601 characters"):
        answer.check_block("x" * 1601)


@pytest.fixture(scope="module")
def committed():
    """The committed study records as the page reads them, with the ledger's rows."""
    from autonorm.analysis.collect import load_reference
    from autonorm.report.findings import page
    from autonorm.report.findings.studies import find_studies

    reference = load_reference(None)
    with tempfile.TemporaryDirectory() as scratch:
        studies = find_studies(None, ROOT / "studies", Path(scratch))
        judged = [j for st in studies if (j := st.judged()) is not None]
        rows = [r for _, rs in page.ledger(judged, reference) for r in rs]
        yield judged, reference, rows


def test_the_answer_says_our_numbers_first_in_plain_words(committed):
    judged, reference, rows = committed
    block = answer.answer_block(judged, reference, rows)
    lines = block.splitlines()
    assert len(lines) <= answer.MAX_LINES and len(block) <= answer.MAX_CHARS
    assert all(ln.startswith("- ") and ln.rstrip().endswith((".", ")")) for ln in lines)  # whole sentences
    for term in answer.JARGON:
        assert term not in block, term
    assert lines[0].startswith("- We trained the paper's own design") and "MNIST (8 x 128, 4 x 4 patches)" in lines[0]
    # ours first, the paper's beside: MNIST accuracy 98.53 vs 98.59, then the paper's 99.18 vs 98.82
    mnist = re.search(r"on MNIST, accuracy (\S+) vs (\S+), .*?the paper: 99\.18 vs 98\.82", block)
    assert mnist and (mnist.group(1), mnist.group(2)) == ("98.53", "98.59,"[:-1])
    assert "Learned gates beat random ones: on MNIST by 0.41 accuracy points (95% CI 0.24 to 0.58)" in block
    assert lines[-1].startswith("- Over ") and "(docs/findings.md)" in lines[-1]


def test_the_tables_other_columns_are_parts_of_one_claim(committed):
    """MNIST's accuracy, precision, recall and F1 against frozen_ln are one comparison of the same ten runs: one
    claim, its verdict the accuracy's, the row naming the others."""
    _, _, rows = committed
    keys = {r.claim_key for r in rows}
    assert "main:mnist:accuracy:frozen_ln" in keys
    assert not any(k.startswith(("main:mnist:precision", "main:mnist:recall", "main:mnist:f1", "main:california_housing:mae"))
                   for k in keys)
    row = next(r for r in rows if r.claim_key == "main:mnist:accuracy:frozen_ln" and not r.supporting)
    assert "precision Δ" in row.ours and "F1 Δ" in row.ours


def test_the_pipeline_report_opens_with_the_scorecard():
    """A run's report (results/<preset>/report.md): the scorecard comes first among the result sections; on a
    stand-in dataset (the smoke preset's) ours alone, on real data the paper's mean ± SD beside ours."""
    from types import SimpleNamespace

    from autonorm.report.sections import SECTIONS
    from autonorm.report.sections.scorecard import scorecard_section

    names = [n for n, _ in SECTIONS]
    assert names.index("scorecard") < names.index("glance") < names.index("results")
    smoke = scorecard_section(SimpleNamespace(summary=_summary(True)))
    assert smoke.startswith("## Scorecard") and "the paper: mean" not in smoke and "no paper number" in smoke
    real = scorecard_section(SimpleNamespace(summary=_summary(False)))
    assert "| autonorm_s | 99.18 ± 0.1 | 98.53 ± 0.065 |" in real
    assert scorecard_section(SimpleNamespace(summary=pd.DataFrame())) == ""


def test_every_study_that_ran_an_ablation_has_its_row(committed):
    """laptop ran the tau grid first in the page's order; california_ablations (the paper's design) ran it too:
    each study gets its row of the claim, counted once by its best evidence (before, the first study's alone)."""
    _, _, rows = committed
    tau = [r for r in rows if r.claim_key == "ablation:tau"]
    studies = {r.where.split(":")[0] for r in tau}
    assert {"laptop", "california_ablations"} <= studies
    assert sum(not r.supporting for r in tau) == 1
