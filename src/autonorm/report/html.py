"""report.md as one self-contained HTML page (images inlined).

Why: Snakemake's HTML report (``snakemake --report``) shows HTML results
inline but offers markdown only as a download; this page lets report.md open
inside it.  The converter covers exactly the markdown the report writes
(headings, paragraphs, lists, block quotes, tables, fenced code, <details>,
bold, code, links, images), so it needs no markdown package.
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

_IMG = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def _inline(s: str, base: Path | None) -> str:
    codes: list[str] = []

    def keep_code(m):
        codes.append(f"<code>{html.escape(m.group(1))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    s = _CODE.sub(keep_code, s)
    s = html.escape(s, quote=False)

    def img(m):
        alt, src = m.group(1), m.group(2)
        return f'<img alt="{html.escape(alt)}" src="{_data_uri(src, base)}">'

    s = _IMG.sub(img, s)
    s = _LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', s)
    s = _BOLD.sub(r"<strong>\1</strong>", s)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], s)


def _data_uri(src: str, base: Path | None) -> str:
    """The image inlined as a data URI when readable (the page must stand alone)."""
    if base is not None and not re.match(r"^[a-z]+:", src):
        p = (base / src)
        if p.is_file():
            mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
            return f"data:{mime};base64,{base64.b64encode(p.read_bytes()).decode('ascii')}"
    return html.escape(src)


def _cells(line: str) -> list[str]:
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    cells, cur, i = [], "", 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if body[i] == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += body[i]
        i += 1
    cells.append(cur.strip())
    return cells


def markdown_to_html(md: str, base: Path | None = None, title: str = "report") -> str:
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    para: list[str] = []

    def flush():
        if para:
            out.append(f"<p>{_inline(' '.join(para), base)}</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s:
            flush()
            i += 1
            continue
        if s.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            out.append("<pre><code>" + html.escape("\n".join(lines[i + 1:j])) + "</code></pre>")
            i = j + 1
            continue
        if s.startswith("<details") or s.startswith("</details") or s.startswith("<summary"):
            flush()
            out.append(s)  # our own markup, passed through
            i += 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", s)
        if m:
            flush()
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2), base)}</h{n}>")
            i += 1
            continue
        if s.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s\-|:]+\|?$",
                                                                  lines[i + 1].strip()):
            flush()
            head = _cells(s)
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append(_cells(lines[j]))
                j += 1
            t = ["<table><thead><tr>" + "".join(f"<th>{_inline(c, base)}</th>" for c in head)
                 + "</tr></thead><tbody>"]
            for r in rows:
                t.append("<tr>" + "".join(f"<td>{_inline(c, base)}</td>" for c in r) + "</tr>")
            out.append("".join(t) + "</tbody></table>")
            i = j
            continue
        if s.startswith("> "):
            flush()
            quote = []
            while i < len(lines) and lines[i].strip().startswith(">"):
                quote.append(lines[i].strip()[1:].strip())
                i += 1
            out.append(f"<blockquote>{_inline(' '.join(quote), base)}</blockquote>")
            continue
        if s.startswith("- "):
            flush()
            items = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(f"<li>{_inline(lines[i].strip()[2:], base)}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        para.append(s)
        i += 1
    flush()
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(out) + "\n</body></html>\n")
