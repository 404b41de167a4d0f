"""The methods the paper compares, each a (backbone, norm, freeze policy) triple.

A method name in the config maps to one entry here; adding a method is one line.
"""

from __future__ import annotations

from dataclasses import dataclass


#: where the selectors sit: one per residual sub-layer (each norm its own gate), or one per block
#: whose weights both sub-layers' norms use (the paper's "a lightweight two-layer MLP per block")
PLACEMENTS = ("per_sublayer", "per_block")
#: the placement of a run whose config names none: every run trained before the setting existed
#: (so their configs, and with them their identities, stay as they were)
UNNAMED_PLACEMENT = "per_sublayer"


@dataclass(frozen=True)
class AutoNormSettings:
    """The settings of AutoNorm's gate and AutoNorm-S's freeze rule (docs/method.md section 1),
    each default written once: the config's ``autonorm`` block overrides them, the norms take
    ``tau`` and ``drop_noise_when_frozen`` from the resolved run config."""

    tau: float = 0.5  # Gumbel-Softmax temperature (fixed)
    t_freeze: int = 10  # AutoNorm-S decides at the end of this epoch ...
    eps_h: float = 0.1  # ... and freezes the selectors if the mean gate entropy H >= eps_h
    drop_noise_when_frozen: bool = True  # (ours) a frozen selector uses plain softmax(logits / tau)
    # one selector per block, used by both sub-layers: the paper's "a lightweight two-layer MLP per
    # block" (docs/method.md section 9); per_sublayer gives each sub-layer's norm its own selector
    placement: str = "per_block"

    @classmethod
    def from_block(cls, block: dict | None) -> "AutoNormSettings":
        """The config's ``autonorm`` block over the defaults (other keys of the block are ignored)."""
        block = block or {}
        return cls(**{k: block[k] for k in cls.__dataclass_fields__ if k in block})


AUTONORM = AutoNormSettings()


@dataclass(frozen=True)
class Method:
    name: str
    norm: str | None  # registry name in autonorm.layers.norms; None for the norm-free teacher
    backbone: str = "transformer"  # or "mlp" (the Teacher)
    freeze_selectors: bool = False  # AutoNorm-S: entropy-gated freeze at T_freeze
    description: str = ""
    gate_choices: int = 0  # learned selectors mixing this many norms (0: no learned gate)
    gated: bool = False  # its norm mixes norms with per-sample weights (learned or random): placement applies


METHODS: dict[str, Method] = {
    m.name: m
    for m in [
        Method("frozen_ln", "ln", description="static LayerNorm everywhere (the paper's 'Disable Selector')"),
        Method("dyt", "dyt", description="static Dynamic Tanh everywhere (ours: the obvious ablation)"),
        Method("random", "random", gated=True,
               description="Random Selector: w_DyT ~ U(0,1) per sample in training, 0.5 in eval"),
        Method("autonorm", "autonorm", description="AutoNorm with learned selectors, never frozen",
               gate_choices=2, gated=True),
        Method("autonorm_s", "autonorm", freeze_selectors=True, gate_choices=2, gated=True,
               description="AutoNorm-S: selectors frozen after T_freeze epochs if mean H >= eps_H"),
        Method("adanorm", "adanorm", description="AdaNorm (Xu et al. 2019)"),
        Method("film", "film", description="FiLM-modulated LN conditioned on the token-mean (ours)"),
        Method("teacher_mlp", None, backbone="mlp", description="plain MLP on flattened input"),
        Method("autonorm3", "autonorm3", description="three-way gate LN / RMSNorm / DyT (optional)",
               gate_choices=3, gated=True),
    ]
}

#: the order methods are shown in (figures, their colours, the mechanism checks): the gated
#: methods first, the reference AutoNorm-S leading
DISPLAY_ORDER: tuple[str, ...] = ("autonorm_s", "autonorm", "autonorm3", "frozen_ln", "dyt", "random",
                                  "adanorm", "film", "teacher_mlp")
#: methods with learned gates (gate diagnostics, mechanism checks), in display order
GATED_METHODS: tuple[str, ...] = tuple(m for m in DISPLAY_ORDER if METHODS[m].gate_choices)
#: a learned gate's number of branches, by norm name (the largest entropy is ln of it)
GATE_CHOICES: dict[str, int] = {m.norm: m.gate_choices for m in METHODS.values() if m.gate_choices}
assert set(DISPLAY_ORDER) == set(METHODS), "every method has a place in DISPLAY_ORDER"


def get_method(name: str) -> Method:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; known: {sorted(METHODS)}")
    return METHODS[name]
