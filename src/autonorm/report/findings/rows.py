"""A row of the claims ledger and the tally over rows.

A claim of the paper may be tested in several studies: each study gets a row, and the tally
counts the claim once, by the row of its best evidence (:func:`counted_rows`): a study in the
paper's regime before one out of it, the paper's placement of the selectors (one per block, or a
model without selectors) before our alternative reading (one per sub-layer), more seeds before
fewer, then the study order. The other rows of the claim are supporting rows. Checks of our own
choices are observations, counted apart.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from autonorm.report.findings.rules import CATEGORIES, category


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
    counts: bool = True        # False: evidence that may only support (training wall times on shared cores)

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
    regime where any is, then at the paper's placement, then has the most seeds, then comes first;
    a row that may only support (``counts`` False) is never kept."""
    best: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r.observation or not r.counts:
            continue
        j = best.get(r.claim_key)
        if j is None or _rank(r) > _rank(rows[j]):
            best[r.claim_key] = i
    keep = set(best.values())
    return [r if r.observation or i in keep else replace(r, supporting=True) for i, r in enumerate(rows)]


#: the paper's placement of the selectors: "a lightweight two-layer MLP per block" (§3.5) that "processes the
#: block input" (Fig. 1); one selector per sub-layer is our alternative reading of Fig. 2's "replaces the
#: static LN in each residual sub-layer", whose rows support and are never preferred
PAPER_PLACEMENT = "per_block"
#: ours: the other reading
ALTERNATIVE_PLACEMENT = "per_sublayer"


def _rank(r: Row) -> tuple:
    return (r.in_regime is True, r.placement != ALTERNATIVE_PLACEMENT, r.n)


def placement_words(placement: str) -> str:
    """'per_block' -> 'per block', 'per_sublayer' -> 'per sub-layer (our alternative reading)'."""
    words = placement.replace("per_", "per ").replace("sublayer", "sub-layer")
    return words + (" (our alternative reading)" if placement == ALTERNATIVE_PLACEMENT else "")


def counted_claims(rows: list[Row]) -> list[Row]:
    """The rows the tally counts: one a claim of the paper (no observation, no supporting row)."""
    return [r for r in rows if not r.observation and not r.supporting]


def tally(rows: list[Row]) -> str:
    """The ledger in one line: claims by verdict (every category, zeros included), then
    observations and supporting rows, adding up to the number of rows."""
    claims = counted_claims(rows)
    counts = {c: 0 for c in CATEGORIES if c != "observation"}
    for r in claims:
        counts[r.word] = counts.get(r.word, 0) + 1
    obs = sum(r.observation for r in rows)
    sup = sum(r.supporting for r in rows)
    head = ", ".join(f"{v} {k}" for k, v in counts.items())
    return (f"{len(claims)} claims of the paper: {head}; besides them {obs} observations of our own "
            f"and {sup} supporting rows (the same claims in other studies, or of the other learned gate): "
            f"{len(claims) + obs + sup} rows")
