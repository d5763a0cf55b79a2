"""The report as a porting engineer works from it: output lines in convert, check's closing hint."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from hipport.cli import main
from hipport.edits import Edit, apply_edits, output_lines

KERNEL = (b"// no include yet\n"
          b"__global__ void k(float *v) {\n"
          b"  float x = v[0];\n"
          b"  x += __shfl_down_sync(0xffffffff, x, 16);\n"
          b"  v[0] = x;\n"
          b"}\n")


def test_output_lines_follow_inserted_and_replaced_lines() -> None:
    src = b"a\nb\nccc\nd\n"
    edits = [Edit(2, 2, b"new\nline\n"), Edit(4, 7, b"X"), Edit(8, 9, b"D1\nD2")]
    new = apply_edits(src, edits)
    assert new == b"a\nnew\nline\nb\nX\nD1\nD2\n"
    # line 1 stays; 2 moves by the two inserted lines; inside "ccc" maps to the X; 4 to D1
    assert output_lines(src, edits, new, [(1, 1), (2, 1), (3, 2), (4, 1)]) == [1, 4, 5, 6]


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.text("ab\n", max_size=4)),
                max_size=6))
def test_an_unedited_place_lands_on_a_line_with_the_same_text(raw) -> None:
    src = b"".join(b"line%d\n" % i for i in range(10))
    edits, taken = [], set()
    for start, length, text in raw:
        span = set(range(start, start + length)) | {start}
        if start + length <= len(src) and not span & taken:
            edits.append(Edit(start, start + length, text.encode()))
            taken |= span
    new = apply_edits(src, edits)
    starts = [0] + [i + 1 for i, c in enumerate(src) if c == 10]
    untouched = [n for n in range(10) if not set(range(starts[n], starts[n] + 6)) & taken]
    lines = output_lines(src, edits, new, [(n + 1, 1) for n in untouched])
    for n, out in zip(untouched, lines):
        assert b"line%d" % n in new.splitlines()[out - 1]


def test_convert_names_the_output_line_of_each_finding(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_bytes(KERNEL)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "src"), "-o", str(tmp_path / "out"),
                                       "--report", str(report), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = (tmp_path / "out" / "a.cu").read_bytes().splitlines()
    data = json.loads(report.read_text())
    ladder = next(f for f in data["findings"] if f["code"] == "HP214")
    assert ladder["line"] == 4 and ladder["output_line"] == 5  # the runtime include went in above
    assert b"__shfl_down_sync" in out[ladder["output_line"] - 1]
    assert data["files"][0]["output"] == str(tmp_path / "out" / "a.cu")


def test_check_ends_with_how_to_read_and_silence_a_rule(tmp_path: Path) -> None:
    f = tmp_path / "a.cu"
    f.write_bytes(KERNEL)
    result = CliRunner().invoke(main, ["check", str(f), "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "hipport rules HP201" in last and "hipport: ignore[HP201]" in last and "--ignore HP201" in last
    quiet = CliRunner().invoke(main, ["check", str(f), "--no-cache", "-q"], catch_exceptions=False)
    assert "hipport rules" not in quiet.stderr
