"""The paper's words, verbatim: every string the findings page puts in quotation marks as the
paper's is one of report.paper.QUOTES, and each of those occurs in the paper's final LaTeX after
the normalisation of docs/method.md section 11 (checked where a copy of the LaTeX is at hand)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autonorm.report.paper import QUOTES, normalise_quote

ROOT = Path(__file__).resolve().parents[1]
#: the paper's final LaTeX, where this checkout sits beside a copy of it
PAPER_TEX = ROOT.parent / "shared" / "paper" / "AutoNorm_Paper_Elsevier.tex"
#: words the ledger puts in quotation marks as its own, not the paper's (its verdict words)
OWN_WORDS = {"depends on our choice", "cannot be what it says", "not testable here", "observation",
             "ill-defined", "out of the paper's regime", "not met on this cpu"}


def paper_quotes(text: str) -> list[str]:
    """The quoted strings a page attributes to the paper: a quotation whose 80 characters before it
    name the paper, its abstract, a table, a section, a figure or a caption (as the checker of the
    paper's quotes reads a page)."""
    out = []
    for m in re.finditer(r'"([^"\n]{12,})"', text):
        before = text[max(0, m.start() - 80):m.start()].lower()
        q = m.group(1)
        if not re.search(r"paper|abstract|table|section|fig|caption|introduction|conclusion", before):
            continue
        if " " not in q or re.search(r"[_/={}`]", q) or q.lower().strip() in OWN_WORDS:
            continue
        if re.search(r"docs/|method\.md|readme", before[-30:]):
            continue  # the title of a section of our own docs
        out.append(q)
    return out


def test_normalisation_by_hand():
    assert normalise_quote(r"leads by 0.36\% (99.18\% vs.\ 98.82\%) within the 95\% CI") == \
        "leads by 0.36% (99.18% vs. 98.82%) within the 95% ci"
    assert normalise_quote(r"($w_{\text{LN}} > 0.85$) across") == "(w_ln > 0.85) across"
    assert normalise_quote(r"$H \to 0$ within") == "h -> 0 within"
    assert normalise_quote("H ≈ 0.45") == normalise_quote(r"$H \approx 0.45$") == "h 0.45"
    assert normalise_quote("0.4%\u20130.8%") == normalise_quote(r"0.4\%--0.8\%") == "0.4%-0.8%"


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason="the paper's LaTeX is not beside this checkout")
def test_every_quote_is_the_papers_verbatim():
    paper = normalise_quote(PAPER_TEX.read_text(encoding="utf-8"))
    missing = [k for k, (words, _) in QUOTES.items() if normalise_quote(words) not in paper]
    assert not missing, missing


def test_the_findings_page_quotes_the_paper_only_through_the_registry():
    page = (ROOT / "docs" / "findings.md").read_text()
    registry = [normalise_quote(words) for words, _ in QUOTES.values()]
    quotes = paper_quotes(page)
    assert len(quotes) > 20
    stray = [q for q in quotes if not any(normalise_quote(q) in r for r in registry)]
    assert not stray, stray[:5]


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason="the paper's LaTeX is not beside this checkout")
def test_the_readme_summary_quotes_the_paper_verbatim():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- findings:start", 1)[1].split("<!-- findings:end", 1)[0]
    paper = normalise_quote(PAPER_TEX.read_text(encoding="utf-8"))
    stray = [q for q in paper_quotes(block)
             if any(len(f) >= 6 and normalise_quote(f) not in paper for f in re.split(r"\.\.\.|\u2026", q))]
    assert not stray, stray


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason="the paper's LaTeX is not beside this checkout")
def test_every_doc_quotes_the_paper_verbatim():
    """docs/*.md and the study READMEs too: a paraphrase of the paper, or our own verdict words, sit
    outside quotation marks (or in bold), so that a reader never takes ours for the paper's."""
    paper = normalise_quote(PAPER_TEX.read_text(encoding="utf-8"))
    stray = []
    for doc in sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("studies/*/README.md")]):
        text = doc.read_text(encoding="utf-8")
        stray += [(doc.name, q) for q in paper_quotes(text)
                  if any(len(f) >= 6 and normalise_quote(f) not in paper
                         for f in (x.strip(" ,.;:") for x in re.split(r"\.\.\.|\u2026", q)))]
    assert not stray, stray[:8]
