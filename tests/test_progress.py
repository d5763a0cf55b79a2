"""The progress line: drawn on a terminal for long runs, never otherwise."""

from __future__ import annotations

import io
from pathlib import Path

from click.testing import CliRunner

from hipport.cli import main
from hipport.progress import track


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_when_not_a_terminal() -> None:
    stream = io.StringIO()
    assert list(track(range(5), stream=stream, delay=0, interval=0)) == list(range(5))
    assert stream.getvalue() == ""


def test_nothing_is_drawn_before_the_delay() -> None:
    stream = _Terminal()
    assert list(track(range(5), stream=stream, delay=60)) == list(range(5))
    assert stream.getvalue() == ""


def test_quiet_wins_over_a_terminal() -> None:
    stream = _Terminal()
    list(track(range(5), stream=stream, enabled=False, delay=0, interval=0))
    assert stream.getvalue() == ""


def test_drawn_on_a_terminal_and_erased_at_the_end() -> None:
    stream = _Terminal()
    items = [f"src/k{i}.cu" for i in range(3)]
    assert list(track(items, stream=stream, delay=0, interval=0)) == items
    out = stream.getvalue()
    assert "hipport: 3 files" in out and "src/k2.cu" in out
    assert out.endswith("\r\x1b[K")


def test_cli_runs_print_no_progress(tmp_path: Path) -> None:
    """CliRunner's stderr is not a terminal: only the summary line appears."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(20):
        (src / f"k{i}.cu").write_text(f"void f{i}(float** p) {{ cudaMalloc(p, 4); }}\n")
    runner = CliRunner()
    for args in (["convert", str(src), "-o", str(tmp_path / "out")], ["scan", str(src), "-f", "json"]):
        res = runner.invoke(main, args, catch_exceptions=False)
        assert "\r" not in res.stderr and "\x1b[K" not in res.stderr
