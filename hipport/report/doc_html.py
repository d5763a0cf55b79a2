"""Just enough Markdown → HTML for rule docs inside the self-contained HTML report.

Rule docs use a small, known subset (paragraphs, ``#`` headings, ``-`` lists, fenced
code with before/after examples, inline code, bold, links), so a 60-line converter
beats a dependency. Every piece of text is escaped before any tag is added, so even a
hostile doc cannot inject markup; only http(s) links become anchors.
"""

from __future__ import annotations

import re
from html import escape

_FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM_RE = re.compile(r"^\s*[-*+]\s+(.*)$")
_INLINE_RE = re.compile(
    r"(?P<code>`+)(?P<code_body>.+?)(?P=code)"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|\[(?P<text>[^\]]+)\]\((?P<url>https?://[^)\s]+)\)"
)


def inline(text: str) -> str:
    """Escape ``text`` and render code spans, ``**bold**`` and http(s) links."""
    out, pos = [], 0
    for m in _INLINE_RE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m["code"]:
            out.append(f"<code>{escape(m['code_body'].strip())}</code>")
        elif m["bold"]:
            out.append(f"<strong>{inline(m['bold'])}</strong>")
        else:
            out.append(f'<a href="{escape(m["url"])}">{escape(m["text"])}</a>')
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def to_html(markdown: str, heading_offset: int = 3) -> str:
    """Render a rule doc; its ``#`` headings start at ``<h{heading_offset}>``."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            out.append(f"<p>{inline(' '.join(para))}</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    lines = iter(markdown.splitlines())
    for line in lines:
        if fence := _FENCE_RE.match(line):
            flush()
            body = []
            for inner in lines:
                if inner.strip().startswith(fence[1]):
                    break
                body.append(inner)
            lang = f' class="language-{escape(fence[2])}"' if fence[2] else ""
            out.append(f"<pre><code{lang}>{escape(chr(10).join(body))}</code></pre>")
        elif heading := _HEADING_RE.match(line):
            flush()
            level = min(len(heading[1]) + heading_offset - 1, 6)
            out.append(f"<h{level}>{inline(heading[2])}</h{level}>")
        elif item := _ITEM_RE.match(line):
            if para:
                flush()
            items.append(item[1])
        elif not line.strip():
            flush()
        elif items:
            items[-1] += " " + line.strip()
        else:
            para.append(line.strip())
    flush()
    return "\n".join(out)
