"""A row of the claims ledger and the tally over rows.

A claim of the paper may be tested in several studies: each study gets a row, and the tally
counts the claim once, by the row of its best evidence (:func:`counted_rows`): a study in the
paper's regime before one out of it, more seeds before fewer, then the study order. The other
rows of the claim are supporting rows. Checks of our own choices are observations, counted apart.
Where a claim was judged in the paper's regime under both placements of the selectors and the
verdicts differ, one more row says so (:func:`placement_rows`), and it is the one counted: which
placement is the paper's is a reading of its words, not a fact.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from autonorm.report.findings.rules import CATEGORIES, category
from autonorm.report.paper import quote


@dataclass(frozen=True)
class Row:
    claim: str           # the claim, in our words, with the paper's own words in quotation marks
    section: str         # where the paper says it (its section, table, figure or abstract)
    where: str           # where we tested it (study, dataset, model, epochs, n)
    ours: str            # our number
    paper: str           # the paper's number
    verdict: str         # starts with a verdict word (rules.VERDICTS)
    key: str = ""        # the claim's identity across studies (empty: the claim text)
    in_regime: bool | None = None
    n: int = 0
    observation: bool = False  # a check of our own choices, not a claim of the paper
    supporting: bool = False   # another study's row of a claim counted elsewhere
    placement: str = ""        # the gated model's selector placement (methods.PLACEMENTS); "" where none

    @property
    def claim_key(self) -> str:
        return self.key or self.claim

    @property
    def word(self) -> str:
        return "observation" if self.observation else category(self.verdict)

    def cells(self) -> list[str]:
        where = self.where + (" (supporting row)" if self.supporting else "")
        return [self.claim, self.section, where, self.ours, self.paper, self.verdict]


def counted_rows(rows: list[Row]) -> list[Row]:
    """``rows`` with every claim's rows but one marked supporting: the one kept is in the paper's
    regime where any is, then has the most seeds, then comes first."""
    best: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r.observation:
            continue
        j = best.get(r.claim_key)
        if j is None or _rank(r) > _rank(rows[j]):
            best[r.claim_key] = i
    keep = set(best.values())
    return [r if r.observation or i in keep else replace(r, supporting=True) for i, r in enumerate(rows)]


def _rank(r: Row) -> tuple:
    return (r.in_regime is True, r.placement == BOTH, r.n)


#: the placement of a row that judges a claim under both placements
BOTH = "both"


def placement_words(placement: str) -> str:
    """'per_block' -> 'per block', 'per_sublayer' -> 'per sub-layer'."""
    return placement.replace("per_", "per ").replace("sublayer", "sub-layer")


def placement_rows(rows: list[Row]) -> list[Row]:
    """One row per claim judged in the paper's regime with one selector per block and with one per
    sub-layer whose verdicts differ: the claim depends on the placement, which the paper's own words
    leave open (a per-block MLP that reads the block input; a selector replacing each sub-layer's LN).
    Several studies of one placement: the one with the most seeds speaks for it."""
    out = []
    for key in dict.fromkeys(r.claim_key for r in rows if not r.observation):
        by: dict[str, Row] = {}
        for r in rows:
            if r.claim_key == key and r.in_regime is True and r.placement in ("per_block", "per_sublayer") \
                    and (r.placement not in by or r.n > by[r.placement].n):
                by[r.placement] = r
        if len(by) == 2 and by["per_block"].word != by["per_sublayer"].word:
            pb, ps = by["per_block"], by["per_sublayer"]
            out.append(Row(pb.claim, pb.section, "both placements, in the paper's regime", "see the two rows above",
                           pb.paper, f"depends on our choice (placement: {quote('per_block')}, read with "
                           f"{quote('block_input')}, against {quote('per_sublayer')}): {pb.word} with one selector "
                           f"per block (n={pb.n}), {ps.word} with one per sub-layer (n={ps.n})", key=key,
                           in_regime=True, n=max(pb.n, ps.n), placement=BOTH))
    return out


def tally(rows: list[Row]) -> str:
    """The ledger in one line: claims by verdict (every category, zeros included), then
    observations and supporting rows, adding up to the number of rows."""
    claims = [r for r in rows if not r.observation and not r.supporting]
    counts = {c: 0 for c in CATEGORIES if c != "observation"}
    for r in claims:
        counts[r.word] = counts.get(r.word, 0) + 1
    obs = sum(r.observation for r in rows)
    sup = sum(r.supporting for r in rows)
    head = ", ".join(f"{v} {k}" for k, v in counts.items())
    return (f"{len(claims)} claims of the paper: {head}; besides them {obs} observations of our own "
            f"and {sup} supporting rows (the same claims in other studies, or of the other learned gate): "
            f"{len(claims) + obs + sup} rows")
