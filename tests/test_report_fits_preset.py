"""The report says only what its run supports (trust round 4, item 8).

Why: the smoke report, read by every new user first, spoke of data it did not have: a "Freeze
effect (CIFAR-10)" heading and "No paper claim for CIFAR-10" under a stand-in, an opening that
promised paired tests beside two seeds and no test, a Teacher MLP as "best of ours" with no word
that it is not a transformer of the same size, and "± 0.00" where two seeds tied, unexplained.
This builds a smoke-shaped results folder (stand-ins only, two seeds, the Teacher MLP best, a tie)
and reads what a person would read.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers.hand_results import TEACHER_PARAMS, build_results, copy_run, run_aggregate
from helpers.hand_results import set_accuracy as _set_accuracy
from helpers.reports import render as _render
from helpers.reports import section as _section

DATASETS = ["smoke_shapes32", "smoke_pos"]
METHODS = ["autonorm_s", "frozen_ln", "autonorm", "teacher_mlp"]


def _teacher_from(root: Path, d: str, s: int, acc: float) -> None:
    copy_run(root, d, "frozen_ln", "teacher_mlp", s, acc, TEACHER_PARAMS)


@pytest.fixture(scope="module")
def smoke_like(tmp_path_factory):
    root = build_results(tmp_path_factory.mktemp("smoke_like"), datasets=DATASETS,
                         methods=["autonorm_s", "frozen_ln", "autonorm"], seeds=[0, 1])
    for s in (0, 1):
        _teacher_from(root, "smoke_shapes32", s, 96.38)
        _set_accuracy(root, "smoke_shapes32", "frozen_ln", s, 70.00)     # two seeds tie
        _set_accuracy(root, "smoke_shapes32", "autonorm_s", s, 68.80 + s)
        _set_accuracy(root, "smoke_shapes32", "autonorm", s, 68.80 + s)  # Δ exactly 0
    run_aggregate(root, datasets=tuple(DATASETS), methods=tuple(METHODS), seeds=(0, 1))
    text = _render(root, {"seeds": [0, 1], "datasets": DATASETS, "preset": "smoke"})
    return text


def test_opening_promises_no_test_at_two_seeds_and_no_paper_numbers(smoke_like):
    opening = smoke_like.split("How to read the tables")[0]
    assert "on stand-in data only, so no paper number is set beside them" in opening
    assert "at most 2 paired seeds, so no test is run and every difference is descriptive" in opening
    assert "paired tests of" not in opening and "beside the paper's" not in opening
    assert "**paper Δ**" not in smoke_like  # no paper difference to explain


def test_no_heading_or_line_names_a_dataset_the_run_does_not_have(smoke_like):
    mech = _section(smoke_like, "## Mechanism checks")
    assert "CIFAR-10)" not in mech.replace("stand-in for CIFAR-10", "")
    assert "No paper claim" not in mech and "The paper states no gate claim" not in mech
    assert "Values only (stand-in data: nothing is judged): final mean H" in mech
    assert "### Freeze effect (AutoNorm-S − AutoNorm) on smoke_shapes32 (stand-in" in mech
    assert "The paper says +" not in mech  # the paper's CIFAR-10 number is not set beside a stand-in


def test_teacher_mlp_says_what_it_is_wherever_it_is_compared(smoke_like):
    label = "teacher_mlp (a plain MLP, 102k parameters; not a transformer)"
    glance = _section(smoke_like, "## At a glance")
    row = next(r for r in glance.splitlines() if r.startswith("| smoke_shapes32"))
    assert row.rstrip(" |").endswith(label)  # "best of ours"
    vision = _section(smoke_like, "## Vision")
    assert f"| {label} | accuracy ↑ | 96.38 ± 0.00 (tie) |" in vision
    # never the bare name beside the transformers (the run list is bookkeeping, not a comparison)
    compared = smoke_like.split("## Runs")[0]
    assert "| teacher_mlp |" not in compared
    assert "| teacher_mlp (a plain MLP; not a transformer) | 101,770 |" in vision  # cost: size beside
    # the transformers keep their plain names
    assert "| frozen_ln | accuracy ↑ |" in vision


def test_a_tie_is_said_to_be_a_tie(smoke_like):
    vision = _section(smoke_like, "## Vision")
    assert "| frozen_ln | accuracy ↑ | 70.00 ± 0.00 (tie) |" in vision
    row = next(r for r in vision.splitlines() if r.startswith("| autonorm | accuracy"))
    assert "| 0.00 (tie) |" in row and "| +0.00 |" not in vision
    assert "**(tie)**" in smoke_like.split("## At a glance")[0]  # explained before the tables


def test_a_paper_dataset_keeps_its_paper_wording():
    from autonorm.report.fmt import fmt_diff, fmt_ms
    assert fmt_ms(98.25, 0.0, 1) == "98.25 ± 0.00"   # one seed: no spread to speak of, no tie
    assert fmt_ms(98.25, 0.004, 2) == "98.25 ± 0.00 (tie)"
    assert fmt_ms(98.25, 0.2, 2) == "98.25 ± 0.20"
    assert fmt_diff(-0.004, 98.25) == "0.00 (tie)" and fmt_diff(0.006, 98.25) == "+0.01"
