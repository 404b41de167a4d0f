"""Figures render from hand-written run outputs, and every promised file always exists.

Why: Snakemake names ``FIGURE_NAMES`` as the outputs of the figures rule, so
every file must be written on every call (also when its data is absent), and
a figure must actually contain a drawing (a blank or single-colour PNG would
pass a plain existence check).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from autonorm.output_names import FIGURE_NAMES, FIGURE_STEMS
from autonorm.report import ablation_figures, figures
from helpers.hand_results import build_results, run_aggregate


def _check_png(path: Path, min_kb: float = 8.0) -> None:
    assert path.stat().st_size > min_kb * 1024, f"{path.name} is only {path.stat().st_size} bytes"
    img = mpimg.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    flat = img[..., :3].reshape(-1, 3)
    assert flat.std(axis=0).max() > 0.01, f"{path.name} is (almost) a single colour"
    assert len(np.unique((flat[::7] * 255).astype(np.uint8), axis=0)) > 10


@pytest.fixture(scope="module")
def figure_dir(tmp_path_factory):
    root = build_results(tmp_path_factory.mktemp("results"))
    run_aggregate(root)
    out = root / "figures"
    written = figures.make_figures(root / "tables", out, strict=True)
    assert sorted(p.name for p in written) == sorted(FIGURE_NAMES)
    return out


def test_figure_names_fixed():
    assert FIGURE_NAMES == [f"{s}.{e}" for s in FIGURE_STEMS for e in ("png", "pdf")]
    assert set(FIGURE_STEMS) == {"method_comparison", "gate_entropy", "wdyt_heatmap",
                                         "metric_vs_entropy", "corruptions"}


def test_every_registered_figure_is_drawn_by_a_function_of_figures_from_tables_it_names():
    # one registry (output_names.FIGURES): the workflow's outputs, the drawing and the report's captions
    from autonorm.output_names import FIGURES, TABLE_NAMES

    assert list(FIGURES) == FIGURE_STEMS
    for stem, spec in FIGURES.items():
        assert callable(getattr(figures, spec["draw"], None)), stem
        assert set(spec["tables"]) <= set(TABLE_NAMES) and spec["caption"], stem


@pytest.mark.parametrize("stem", FIGURE_STEMS)
def test_figures_render_nonempty(figure_dir, stem):
    _check_png(figure_dir / f"{stem}.png")
    pdf = figure_dir / f"{stem}.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 4 * 1024


def test_the_report_theme_stays_in_the_report(tmp_path):
    """Drawing the report sets seaborn's theme for its own figures only: the process's matplotlib
    settings are as before (a later figure, the findings page's, is drawn as if alone)."""
    import matplotlib

    tables = tmp_path / "tables"
    tables.mkdir()
    before = dict(matplotlib.rcParams)
    figures.make_figures(tables, tmp_path / "figs")
    after = dict(matplotlib.rcParams)
    assert {k for k in before if before[k] != after[k]} == set()


def test_no_data_still_writes_every_file(tmp_path):
    """Empty tables folder (nothing trained yet): all files exist with a no-data panel."""
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "summary.csv").write_text("")  # an empty csv must not crash either
    rc = figures.main(["--tables", str(tables), "--out-dir", str(tmp_path / "figs")])
    assert rc == 0
    for name in FIGURE_NAMES:
        p = tmp_path / "figs" / name
        assert p.is_file() and p.stat().st_size > 1000
    _check_png(tmp_path / "figs" / "gate_entropy.png", min_kb=4)


# --------------------------------------------------------------------------- layout, measured
from itertools import combinations  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

from autonorm.analysis import stats  # noqa: E402
from autonorm.io_utils import read_table  # noqa: E402
from helpers.paper_results import build_paper_results, run_paper_aggregate  # noqa: E402


def _tables(root):
    return {n: read_table(root / "tables", f"{n}.csv")
            for n in ("summary", "history", "gates", "freeze", "corruptions", "ablations")}


@pytest.fixture(scope="module")
def many(paper_results):
    """9 datasets, 8 methods, a 12-layer model (24 selectors), variants, same runs on NLP."""
    return _tables(paper_results)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """One dataset, a 2-layer model (4 selectors), no variants."""
    root = build_paper_results(tmp_path_factory.mktemp("single"), datasets=("mnist",), blocks=2,
                               variants=False)
    run_paper_aggregate(root, datasets=("mnist",))
    return _tables(root)


def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _no_overlap(texts, renderer, what):
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts
             if t.get_visible() and t.get_text()]
    for (a, ba), (b, bb) in combinations(boxes, 2):
        inter_w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        inter_h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        assert inter_w <= 0.5 or inter_h <= 0.5, f"{what}: '{a}' overlaps '{b}'"


def _legend_clear_of_axes(fig, renderer):
    assert fig.legends, "expected one figure-level legend"
    lb = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        ab = ax.get_window_extent(renderer)
        overlap = (min(lb.x1, ab.x1) - max(lb.x0, ab.x0) > 0
                   and min(lb.y1, ab.y1) - max(lb.y0, ab.y0) > 0)
        assert not overlap, f"legend covers the panel '{ax.get_title()}'"


def _legend_labels(fig):
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def test_heatmap_sized_from_selectors_and_readable(many, single):
    big = figures.fig_wdyt_heatmap(many["gates"])
    small = figures.fig_wdyt_heatmap(single["gates"])
    (wb, hb), (ws, hs) = big.get_size_inches(), small.get_size_inches()
    assert hb > hs + 0.25 * 20 and wb > ws  # 24 rows vs 4, many columns vs 2
    renderer = _drawn(big)
    ax = big.axes[0]
    ylabels = ax.get_yticklabels()
    assert len(ylabels) == 24 and ylabels[0].get_text() == "block0.attn"
    assert ylabels[-1].get_text() == "block11.mlp"  # numeric order, not block1, block10, ...
    _no_overlap(ylabels, renderer, "heatmap y labels")
    _no_overlap(ax.get_xticklabels(), renderer, "heatmap x labels")
    # every cell value is printed, at a readable size, inside its own cell
    values = [t for t in ax.texts if t.get_text()]
    n_cells = int(np.isfinite(ax.collections[0].get_array()).sum())
    assert len(values) == n_cells and min(t.get_fontsize() for t in values) >= 6
    cell_h = ax.get_window_extent(renderer).height / 24
    assert max(t.get_window_extent(renderer).height for t in values) < cell_h
    # the same runs (autonorm_s = autonorm on NLP) are one column carrying both names
    xt = [t.get_text() for t in ax.get_xticklabels()]
    assert "ptb_pos / autonorm_s = autonorm" in xt and "mnist / autonorm" in xt
    plt.close("all")


def test_method_comparison_layout(many, single):
    for tables in (many, single):
        fig = figures.fig_method_comparison(tables["summary"])
        renderer = _drawn(fig)
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert panels
        for ax in panels:
            _no_overlap(ax.get_xticklabels(), renderer, f"{ax.get_title()} x labels")
            metric = ax.get_ylabel().split()[0]
            lo, hi = stats.metric_range(metric)
            y0, y1 = ax.get_ylim()
            assert lo <= y0 < y1 <= hi, (ax.get_title(), (y0, y1))
            assert ("higher is better" in ax.get_ylabel()) != ("lower is better" in ax.get_ylabel())
            # n sits in the tick label, never on the error bars
            assert all("(n=" in t.get_text() for t in ax.get_xticklabels())
        _legend_clear_of_axes(fig, renderer)
        assert "x = paper" not in fig._suptitle.get_text()
        plt.close("all")
    # panels grouped by family: vision rows before NLP before tabular
    fig = figures.fig_method_comparison(many["summary"])
    titles = [ax.get_title().split("\n")[0] for ax in fig.axes if ax.get_visible()]
    assert titles.index("svhn") < titles.index("ptb_pos") < titles.index("energy_efficiency")
    # the trivial baseline: a dashed line near the results (SST-2, 50.9), named when far (MNIST)
    sst2 = next(ax for ax in fig.axes if ax.get_title().startswith("sst2"))
    assert any(line.get_linestyle() == "--" and line.get_ydata()[0] == pytest.approx(50.9)
               for line in sst2.get_lines())
    mnist = next(ax for ax in fig.axes if ax.get_title().startswith("mnist"))
    assert "trivial baseline 11.35, off the axis" in mnist.get_title()
    # the doubtful Energy "RMSE" is not drawn as a paper cross but flagged
    energy = next(ax for ax in fig.axes if ax.get_title().startswith("energy_efficiency"))
    assert any("not comparable" in t.get_text() for t in energy.texts)
    assert not any(line.get_marker() == "x" for line in energy.get_lines())
    plt.close("all")


def test_method_comparison_paper_legend_only_with_paper_marker(many):
    s = many["summary"].copy()
    s["paper_mean"] = np.nan
    fig = figures.fig_method_comparison(s)
    assert not any("paper" in t for t in _legend_labels(fig))
    clipped = many["summary"].copy()
    clipped.loc[clipped.metric == "accuracy", "ci95_high"] = 130.0  # a CI past 100%
    fig = figures.fig_method_comparison(clipped)
    assert any("clipped" in t for t in _legend_labels(fig)) and "clipped" in fig._suptitle.get_text()
    for ax in fig.axes:
        if ax.get_visible() and ax.get_ylabel().startswith("accuracy"):
            assert ax.get_ylim()[1] <= 100
    plt.close("all")


def test_gate_entropy_layout(many, single):
    for tables in (many, single):
        fig = figures.fig_gate_entropy(tables["history"], tables["freeze"])
        renderer = _drawn(fig)
        _legend_clear_of_axes(fig, renderer)
        labels = _legend_labels(fig)
        assert any(t.startswith("ln 2 = 0.693") for t in labels)
        assert any(t.startswith("freeze epoch") for t in labels)
        for ax in (a for a in fig.axes if a.get_visible()):
            assert not any(t.get_rotation() == 90 for t in ax.texts)  # no rotated freeze labels
            assert all(float(v).is_integer() for v in ax.get_xticks())
        plt.close("all")
    fig = figures.fig_gate_entropy(many["history"], many["freeze"])
    assert "autonorm (identical to autonorm_s: same runs)" in _legend_labels(fig)
    plt.close("all")


def test_metric_vs_entropy_layout(many, single):
    for tables in (many, single):
        fig = figures.fig_metric_vs_entropy(tables["history"])
        renderer = _drawn(fig)
        _legend_clear_of_axes(fig, renderer)
        for ax in (a for a in fig.axes if a.get_visible()):
            assert "better" in ax.get_ylabel()
            box = ax.get_window_extent(renderer)
            for t in ax.texts:  # the epoch labels stay inside the frame
                tb = t.get_window_extent(renderer)
                assert box.x0 <= tb.x0 and tb.x1 <= box.x1 and box.y0 <= tb.y0 and tb.y1 <= box.y1, \
                    (ax.get_title(), t.get_text())
            assert not any(m.startswith("tau_") for m in _legend_labels(fig))
        plt.close("all")
    fig = figures.fig_metric_vs_entropy(many["history"])
    assert "autonorm (identical to autonorm_s: same runs)" in _legend_labels(fig)
    plt.close("all")


def test_corruptions_layout(many):
    fig = figures.fig_corruptions(many["corruptions"])
    renderer = _drawn(fig)
    _legend_clear_of_axes(fig, renderer)
    bars, sev = fig.axes[0], fig.axes[1]
    assert list(sev.get_xticks()) == [1, 2, 3, 4, 5]
    _no_overlap(bars.get_xticklabels(), renderer, "corruption names")
    assert 0 <= bars.get_ylim()[0] and bars.get_ylim()[1] <= 100
    assert 0 <= sev.get_ylim()[0] and sev.get_ylim()[1] <= 100
    assert "official CIFAR-10-C" in fig._suptitle.get_text()
    plt.close("all")


def test_ablation_figures_written_when_ablations_exist(many, tmp_path):
    written = ablation_figures.make_ablation_figures(many["ablations"], tmp_path, strict=True)
    names = sorted(p.name for p in written)
    assert names == ["ablation_gate3.pdf", "ablation_gate3.png", "ablation_selector.pdf",
                     "ablation_selector.png", "ablation_tau.pdf", "ablation_tau.png"]
    _check_png(tmp_path / "ablation_tau.png")
    fig = ablation_figures.fig_ablation(many["ablations"], "tau")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.25", "0.5", "1"]
    plt.close("all")
    assert ablation_figures.make_ablation_figures(many["ablations"].iloc[0:0], tmp_path) == []
