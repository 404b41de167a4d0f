"""The ledger's verdict rules (docs/method.md section 11), each a small function on a study's
tables, so that every row of the page and its tests apply one rule:

* **regime**: a study's runs on a dataset may reproduce or contradict a claim only when they train
  the setup the paper states (its backbone's depth and width, and on vision its 4 x 4 patch) and
  their LayerNorm reference (frozen_ln) reached the paper's: within 2 points of the paper's FrozenLN
  accuracy (10% for an RMSE), either side, and above the dataset's trivial baseline by at least half the paper's
  own margin over it. Out of regime a row reads "inconclusive: out of the paper's regime", with the
  element that differs and what the runs say.
* **both arms by one band, both ways**: an arm of a comparison (AutoNorm-S or a baseline) outside the
  band frozen_ln must meet of the paper's number for it, below it or above it, decides nothing where its
  deviation points the way the result went: the deviation, not the method, may be the difference.
* **the claim as stated, every part of it**: a stated lead ("leads by", "outperforms", a bolded
  best) is a signed difference, tested by the paired t-test with Holm's correction over the claim's
  family; the paper's stated number is a part of it, held with the paper's own spread (its ± SD over 5
  seeds) and ours: where it is excluded, on either side (a larger effect than stated, or a smaller one),
  that part is contradicted; every reading is at one level, familywise 5% over the claim's family.
  A table's other columns of the same runs are parts of its primary metric's claim. "Within the 95% CI",
  "competitive", "comparable" or "not statistically significant" is an equivalence, decided by the
  90% interval against the margin, both ways (TOST). "Reproduced" needs every part to hold; one
  contradicted part contradicts the claim.
* **one margin**: the smallest difference the paper itself calls an improvement
  (:data:`MARGIN_SHARE`). It is the equivalence margin, and the threshold of a meaningful difference
  the paper states without a number ("outperform"). A verdict whose equivalence part changes
  between half and twice the margin reads "depends on our choice (margin)"; the band never moves the
  threshold a stated number is held against. Every row prints the exact margins over which it holds.

The rules live in three modules, by kind: :mod:`.verdict_words` (the verdict words and the seed rule),
:mod:`.regime` (the regime and the band, the paper's numbers) and :mod:`.judging` (a paired difference
against a claim); this module is the one name the rows ask.
"""
from __future__ import annotations

from autonorm.report.findings.judging import (  # noqa: F401
    MARGIN_METRICS, MARGIN_RANGE, MARGIN_SHARE, Claim, Paired, difference_text, equivalence_edges, exclusion, judge,
    judge_at, margin, margin_range, margin_text, non_superiority, spread_part, threshold)
from autonorm.report.findings.regime import (  # noqa: F401
    PAPER_DEPTH, PAPER_PATCH, PAPER_SEEDS, PAPER_WIDTH, REGIME_ACCURACY_POINTS, REGIME_MARGIN_SHARE,
    REGIME_RMSE_RELATIVE, ahead_of_paper, arm_band, both_arms, departures, depth_ok, judged_on, out_of_regime,
    paper_std, paper_value, regime, study_regime, summary_mean, trained_on, trivial_value)
from autonorm.report.findings.verdict_words import (  # noqa: F401
    CATEGORIES, INTERIM, RUNS_SAY, VERDICTS, category, decided_from_seeds)
