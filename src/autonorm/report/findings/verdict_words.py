"""The ledger's verdict words (docs/method.md section 11): what each means, the category a verdict string
starts with, and the seed rule every row passes through (a verdict needs seeds, and a study decides at the
seeds it planned)."""
from __future__ import annotations

from autonorm.analysis import stats

#: the verdict words and what each means (shown under the ledger; the tally counts by them)
VERDICTS = {
    "reproduced": "every part of the claim holds: a stated difference has the paper's sign at "
                  "Holm-adjusted p < 0.05, a stated equivalence holds within the margin (TOST), a "
                  "threshold is met; in the paper's regime only",
    "contradicted": "a part of the claim fails in the paper's regime: a significant difference of the "
                    "opposite sign (Holm), a difference beyond the margin against a stated "
                    "equivalence, the paper's stated number excluded with its spread and ours (at the "
                    "claim's one level, familywise 5%), a meaningful difference of no stated size excluded "
                    "at the margin, or a threshold not met",
    "inconclusive": "neither: no test decides at this power (the difference the test would detect "
                    "with 80% power is given), the study is out of the paper's regime, or it has fewer "
                    "seeds than it planned (interim)",
    "depends on our choice": "the verdict changes within the range of a setting the paper leaves open "
                             "(the margin, from half to twice it; the selector's width, which the paper does "
                             "not give; the tolerance of near chance); the range where it holds is given",
    "cannot be what it says": "arithmetic on the paper's own numbers (or on the dataset) rules out "
                              "what the paper says the number or statement is, whatever we trained, under every "
                              "reading (a row that concedes a reading that fits is ill-defined or an observation)",
    "ill-defined": "the paper's quantity is not defined well enough to compare with ours; a reading "
                   "that fits is given",
    "not met on this CPU": "a cost claim whose bound over the interleaved benchmark's rounds exceeds it on our "
                           "CPU; the paper's device is not stated",
    "not testable here": "no study here ran it (the command that would is given), or our runs do not "
                         "measure what it names (the reason is given)",
    "not testable at this resolution": "the metric's grid (whole epochs) cannot tell the arms apart",
    "observation": "a check of our own choices or of what our runs did, not a claim of the paper "
                   "(counted apart)",
}
#: the categories of the tally, in the order the page lists them
CATEGORIES = tuple(VERDICTS)


def category(verdict: str) -> str:
    """The verdict word a verdict string starts with (the tally's category)."""
    v = verdict.lstrip("*")
    for word in sorted(CATEGORIES, key=len, reverse=True):
        if v.startswith(word):
            return word
    return "inconclusive"


#: how an undecided row reports what its runs say
RUNS_SAY = "the runs say: "
#: how a row of a study short of the seeds it planned begins (:func:`decided_from_seeds`)
INTERIM = "inconclusive: interim"
#: an undecided row's words where its study misses the paper's regime (regime.out_of_regime writes them)
OUT_OF_REGIME = "inconclusive: out of the paper's regime"
#: ... and where no paper number lets the regime be judged
REGIME_UNKNOWN = "inconclusive: the regime cannot be judged"


def decided_from_seeds(verdict: str, n: int, planned: int = 0) -> str:
    """A verdict as the seed rule allows it: reproduced or contradicted only from at least
    ``stats.MIN_N_POWER`` seeds of each method the row reads, a difference (whose test has no power below
    that) and a level or a curve alike (a pilot's one run decides nothing); ``n`` 0 is a row that reads no
    seeds (the paper's own numbers, a benchmark's record, a model's parameter count). And where the
    study's plan fixed more seeds (``planned``, its study.json), only from all of them, a verdict that
    depends on our choice too (one of its readings is decided): a verdict read at every sitting while the
    seeds come in would be tested again and again, and could stop where it happened to cross. Else
    inconclusive, with what the runs say."""
    n = int(n)
    if 0 < n < stats.MIN_N_POWER and RUNS_SAY in verdict:
        # an undecided row (out of the regime, say) still reports what its runs say: from too few seeds, it says so
        verdict = verdict.replace(RUNS_SAY, f"the runs say (n={n}, too few seeds to decide anything): ")
    if n <= 0:
        return verdict
    if category(verdict) not in ("reproduced", "contradicted", "depends on our choice"):
        if n < planned and category(verdict) == "inconclusive" and INTERIM not in verdict \
                and OUT_OF_REGIME not in verdict:
            # undecided, and with seeds still to come: said, lest it read as the study's last word
            return f"{INTERIM}, n={n} of the {planned} seeds the study planned; " + verdict.split(": ", 1)[-1]
        return verdict
    if n < stats.MIN_N_POWER:
        return (f"inconclusive: n={n}; a verdict is decided from at least {stats.MIN_N_POWER} seeds of each "
                f"method it reads; the runs say: {verdict}")
    if n < planned:
        return (f"{INTERIM}, n={n} of the {planned} seeds the study planned; a study decides at its "
                f"planned seeds, not while they come in; the runs say: {verdict}")
    return verdict
