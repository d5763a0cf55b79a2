"""The HTML report: escaping of hostile input, self-containment, order, and a real browser.

The browser test loads the page in headless Chromium (Debian package ``chromium``) and
reads the DOM back: it is skipped when Chromium is absent, except under CI=true where a
missing browser is a broken CI setup and must fail.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hipport.report import render
from hipport.report.doc_html import to_html
from test_report import sample_report

class _Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


@pytest.fixture(scope="module")
def page() -> str:
    return render(sample_report(), "html")


def test_hostile_text_is_escaped_everywhere(page):
    tags = tags_of(page)
    assert not {t for t, _ in tags} & {"script", "img", "iframe", "object", "embed", "link"}
    assert not [a for _, attrs in tags for a in attrs if a.startswith("on")]
    assert "<mark>&lt;script&gt;</mark>document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "src/evil &lt;b&gt;.cu" in page
    assert "Inline PTX assembly | &lt;b&gt;not portable&lt;/b&gt;" in page


def test_page_is_self_contained(page):
    assert page.startswith("<!DOCTYPE html>")
    for tag, attrs in tags_of(page):
        assert "src" not in attrs, tag
        href = attrs.get("href")
        assert href is None or href.startswith(("#", "https://")), href
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "@import" not in style and "url(" not in style
    assert "default-src 'none'" in page  # CSP: even an escaping bug could not load anything


def test_riskiest_file_comes_first_and_fixed_findings_come_apart(page):
    files = re.findall(r'<h3 class="file mono" id="file-\d+" title="[^"]*">([^<]*)<', page)
    # reduce.cu: blocker + high; evil: medium; setup.py: low; main.cu has only a fixed info
    assert [f.strip() for f in files] == ["src/reduce.cu", "src/evil &lt;b&gt;.cu", "setup.py"]
    fixed = page[page.index('id="fixed"'):]
    assert fixed.count('<article class="finding fixed"') == 1 and "src/main.cu:3:5" in fixed
    assert '<article class="finding fixed"' not in page[:page.index('id="fixed"')]


def test_the_page_opens_with_a_row_per_rule_whose_box_filters_its_findings(page):
    glance = page[page.index('id="rules-at-a-glance"'):page.index('id="summary"')]
    assert re.findall(r'id="only-(HP\d+)" checked', glance) == ["HP301", "HP201", "HP401", "HP501", "HP101"]
    for code in ("HP101", "HP201", "HP301", "HP401", "HP501"):
        assert f"body:has(#only-{code}:not(:checked)) .finding[data-code={code}]" in page
    assert "Score: the open findings weighted by severity" in page
    assert "blocker 27, high 9, medium 3, low 1" in page


def test_paths_are_short_and_relative_to_the_common_root():
    report = sample_report()
    deep = [dataclasses.replace(f, path="/home/me/proj/src/" + f.path.rsplit("/", 1)[-1]) for f in report.findings]
    files = [dataclasses.replace(f, path="/home/me/proj/src/" + f.path.rsplit("/", 1)[-1]) for f in report.files]
    page = render(dataclasses.replace(report, findings=deep, files=files), "html")
    assert "paths relative to <code>/home/me/proj/src</code>" in page
    assert '<span class="loc mono">reduce.cu:12:12</span>' in page
    assert "/home/me/proj/src/reduce.cu:12" not in page


def test_every_link_has_a_target_and_rule_docs_are_included(page):
    ids = set(re.findall(r'id="([^"]+)"', page))
    hrefs = set(re.findall(r'href="#([^"]+)"', page))
    assert hrefs <= ids
    assert {"rule-HP201", "rule-HP301", "rule-HP401"} <= ids
    assert '<pre><code class="language-cuda">unsigned long long m = __ballot(p);</code></pre>' in page


def test_source_line_is_highlighted_at_the_column(page):
    assert '<span class="ln">12</span>    mask = <mark>__ballot_sync</mark>(0xffffffff, p);' in page


def test_backtick_spans_in_messages_become_code(page):
    assert "inline PTX <code>asm(&quot;...&quot;)</code> | cannot run on AMD" in page


def test_severity_filter_is_pure_css(page):
    for sev in ("blocker", "high", "medium", "low", "info"):
        assert f'id="show-{sev}" checked' in page
        assert f"body:has(#show-{sev}:not(:checked)) .finding[data-severity={sev}]" in page


def test_rule_doc_markdown_is_escaped():
    out = to_html("Use `a<b>` **now** [x](javascript:alert(1)) <script>\n\n```\n</pre><script>\n```")
    assert "<script" not in out and "javascript:" not in out.split("[x]")[0]
    assert "<code>a&lt;b&gt;</code>" in out and "<strong>now</strong>" in out
    assert "<pre><code>&lt;/pre&gt;&lt;script&gt;</code></pre>" in out


# -- a real browser ----------------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        reason = "chromium is not installed (Debian: apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must install it")
        pytest.skip(reason)
    return exe


def _run_chromium(exe: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180, check=True,
    )


def test_page_loads_in_headless_chromium(tmp_path):
    exe = _chromium()
    report = sample_report()
    html_file = tmp_path / "report.html"
    html_file.write_text(render(report, "html"), encoding="utf-8")
    url = html_file.as_uri()

    dom = _run_chromium(exe, tmp_path, "--dump-dom", url).stdout
    count = re.search(r'id="finding-count">(\d+)<', dom)
    assert count and int(count[1]) == len(report.findings)
    codes = re.findall(r'<article class="finding[^"]*" id="finding-\d+" data-severity="\w+" '
                       r'data-code="(HP\d+)"', dom)
    assert sorted(codes) == sorted(f.code for f in report.findings)
    # The hostile source line was text, not a script: the title is still ours.
    assert "<title>hipport report: ROCm 7.2.1</title>" in dom
    assert "pwned" not in dom.split("<body", 1)[0]

    png = tmp_path / "report.png"
    _run_chromium(exe, tmp_path, f"--screenshot={png}", "--window-size=1280,2000", url)
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


def test_outputs_elsewhere_have_their_own_root_and_rule_pages_nest():
    # convert SRC -o /elsewhere: inputs and outputs share only "/", which made every path
    # absolute; each side is now relative to its own root, in both formats.
    report = sample_report()
    src, out = "/home/me/proj/src/", "/tmp/ported/"
    files = [dataclasses.replace(f, path=src + f.path.rsplit("/", 1)[-1], output=out + f.path.rsplit("/", 1)[-1])
             for f in report.files]
    deep = [dataclasses.replace(f, path=src + f.path.rsplit("/", 1)[-1]) for f in report.findings]
    moved = dataclasses.replace(report, findings=deep, files=files)
    page, md = render(moved, "html"), render(moved, "markdown")
    assert "paths relative to <code>/home/me/proj/src</code>, outputs to <code>/tmp/ported</code>" in page
    assert "Paths are relative to `/home/me/proj/src`, outputs to `/tmp/ported`." in md
    assert "· output `reduce.cu`" in md and "/tmp/ported/reduce.cu" not in md
    assert "· output reduce.cu" in page

def test_a_rule_page_in_the_markdown_report_nests_under_its_rule():
    from hipport.report.markdown import _demoted

    # its "## Why" is a level below the report's "### HP…"; a code block is left alone
    page = "## Why\nText.\n\n```python\n# a comment\n```\n## Fix\n"
    assert _demoted(page) == "#### Why\nText.\n\n```python\n# a comment\n```\n#### Fix"
