"""How wide AutoNorm's selectors are, how many a block has and what they cost: plain arithmetic (no
torch), so the norms, the blocks and the report ask the same definitions (the placements
themselves are facts of the method: ``autonorm.methods.PLACEMENTS``)."""
from __future__ import annotations

import math

from ..methods import PLACEMENTS


def selector_width(dim: int, hidden: int | None = None) -> int:
    """The MLP selector's hidden width: ``hidden`` (the config's ``autonorm.selector_hidden``) or
    (ours) d/2, since the paper gives none (its "< 1% parameters" needs <= 5 at d = 128)."""
    return max(dim // 2, 1) if hidden is None else int(hidden)


def selector_param_count(dim: int, choices: int = 2, hidden: int | None = None, capacity: str = "mlp") -> int:
    """Parameters of one selector: Linear(d, h) + Linear(h, n), or one Linear(d, n) (``linear``)."""
    if capacity == "linear":
        return dim * choices + choices
    h = selector_width(dim, hidden)
    return dim * h + h + h * choices + choices


def selectors_per_block(placement: str) -> int:
    """How many selectors one transformer block has under ``placement``."""
    if placement not in PLACEMENTS:
        raise ValueError(f"selector placement must be one of {PLACEMENTS}, got {placement!r}")
    return 2 if placement == "per_sublayer" else 1


def widest_selector_for_share(base_params: float, selectors: int, dim: int, choices: int = 2,
                              share: float = 0.01, fixed: float = 0.0) -> int:
    """The largest MLP selector hidden width h at which ``selectors`` selectors Linear(dim, h) -
    GELU - Linear(h, choices) add less than ``share`` of ``base_params`` parameters (each has
    (dim + 1 + choices) h + choices), beside ``fixed`` parameters the gated model adds whatever the width
    (the DyT branches' own)."""
    if selectors <= 0 or base_params <= 0:
        return 0
    return max(0, math.floor(((share * base_params - fixed) / selectors - choices) / (dim + 1 + choices) - 1e-12))
