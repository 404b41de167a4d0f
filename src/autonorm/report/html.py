"""report.md as one self-contained HTML page (images inlined).

Why: Snakemake's HTML report (``snakemake --report``) shows HTML results
inline but offers markdown only as a download; this page lets report.md open
inside it. The markdown is read by markdown-it-py (CommonMark with tables; the
report's own ``<details>`` markup passes through); the figures are inlined as
data URIs so the page stands alone.
"""
from __future__ import annotations

import base64
import html
import mimetypes
import re
from pathlib import Path

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;line-height:1.45;color:#222}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3} blockquote{border-left:4px solid #c00;background:#fff4f4;margin:1em 0;
padding:.4em 1em} code{background:#f4f4f4;padding:0 .2em} pre{background:#f7f7f7;padding:.6em;
overflow:auto} img{max-width:100%} h2{border-bottom:1px solid #ddd;padding-bottom:.2em}
"""


def _data_uri(src: str, base: Path | None) -> str:
    """The image inlined as a data URI when readable (the page must stand alone)."""
    if base is not None and not re.match(r"^[a-z]+:", src):
        p = (base / src)
        if p.is_file():
            mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
            return f"data:{mime};base64,{base64.b64encode(p.read_bytes()).decode('ascii')}"
    return src


def markdown_to_html(md: str, base: Path | None = None, title: str = "report") -> str:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    tokens = parser.parse(md)
    for token in tokens:
        for child in token.children or ():
            if child.type == "image":
                child.attrSet("src", _data_uri(str(child.attrGet("src")), base))
    body = parser.renderer.render(tokens, parser.options, {})
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + body + "</body></html>\n")
