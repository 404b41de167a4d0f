"""The report says only what its run supports (trust round 4, item 8).

Why: the smoke report, read by every new user first, spoke of data it did not have: a "Freeze
effect (CIFAR-10)" heading and "No paper claim for CIFAR-10" under a stand-in, an opening that
promised paired tests beside two seeds and no test, a Teacher MLP as "best of ours" with no word
that it is not a transformer of the same size, and "± 0.00" where two seeds tied, unexplained.
This builds a smoke-shaped results folder (stand-ins only, two seeds, the Teacher MLP best, a tie)
and reads what a person would read.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_aggregate import build_results, run_aggregate
from test_report import _render, _section

DATASETS = ["smoke_shapes32", "smoke_pos"]
METHODS = ["autonorm_s", "frozen_ln", "autonorm", "teacher_mlp"]
TEACHER_PARAMS = 101_770


def _set_accuracy(root: Path, d: str, m: str, s: int, acc: float, params: int | None = None) -> None:
    """Rewrite one run's test accuracy (and size) in its metrics.json and eval json alike."""
    for path in (root / "runs" / d / m / f"seed{s}" / "metrics.json", root / "eval" / d / m / f"seed{s}.json"):
        if not path.exists():
            continue
        obj = json.loads(path.read_text())
        obj["test"]["accuracy"] = acc
        if params is not None:
            obj["cost"]["params"] = params
        path.write_text(json.dumps(obj))


def copy_run(root: Path, d: str, src_method: str, dst_method: str, s: int, acc: float,
             params: int | None = None) -> None:
    """A run of ``dst_method``: ``src_method``'s files under its own name, with its own accuracy
    (and size); a method without a learned gate gets no gate history and no freeze."""
    src, dst = root / "runs" / d / src_method / f"seed{s}", root / "runs" / d / dst_method / f"seed{s}"
    dst.mkdir(parents=True, exist_ok=True)
    gated = dst_method in ("autonorm", "autonorm_s")
    for f in src.iterdir():
        obj = json.loads(f.read_text())
        if isinstance(obj, dict) and "method" in obj:
            obj["method"] = dst_method
        if f.name == "freeze.json":
            obj["enabled"] = dst_method == "autonorm_s" and obj["enabled"]
        if f.name == "history.json" and not gated:
            obj = [dict(h, gates=None) for h in obj]
        (dst / f.name).write_text(json.dumps(obj))
    ev = json.loads((root / "eval" / d / src_method / f"seed{s}.json").read_text())
    ev["method"] = dst_method
    (root / "eval" / d / dst_method).mkdir(parents=True, exist_ok=True)
    (root / "eval" / d / dst_method / f"seed{s}.json").write_text(json.dumps(ev))
    _set_accuracy(root, d, dst_method, s, acc, params)


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
