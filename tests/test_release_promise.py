"""The promise of a target release, over every converter golden: no line hipport wrote
uses a HIP spelling that is not valid on that release without a finding at the line.

A spelling is valid on a target when some CUDA name resolves to it there and is applied
(``cublasScnrm2_v2`` → ``hipblasScnrm2_v2`` on 6.3); the spellings of other releases
(``hipblasScnrm2`` on 6.3, ``HIP_MEMSET_NODE_PARAMS`` on 7.2.1) and names newer than the
target must not appear unannounced.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import pytest

from hipport.mapping import load_table
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("update_goldens", ROOT / "tools" / "update_goldens.py")
goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(goldens)

TARGETS = {"rocm-6.3": "6.3", "rocm-7.2.1": "7.2.1"}
_WORD = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=None)
def valid_spellings(rocm: str) -> frozenset[str]:
    """Every HIP/ROC name an applied resolution writes on ``rocm``."""
    table = load_table()
    view = table.view(parse_version(rocm))
    out = set()
    for name in table.entries:
        res = view.resolve(name)
        if res is not None and res.apply and res.target:
            out.add(res.target)
    return frozenset(out)


@lru_cache(maxsize=1)
def known_spellings() -> frozenset[str]:
    """Every HIP/ROC spelling the tables know for any release."""
    return frozenset(load_table().reverse_index())


def _introduced(src: list[str], out: list[str]) -> list[tuple[int, str]]:
    """Output lines (1-based number, text) that differ from the input line they replace."""
    changed = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, src, out, autojunk=False).get_opcodes():
        if tag != "equal":
            changed.extend((j + 1, out[j]) for j in range(j1, j2))
    return changed


@pytest.mark.parametrize("variant", sorted(TARGETS))
def test_no_spelling_of_another_release_without_a_finding(variant: str) -> None:
    rocm = TARGETS[variant]
    valid, known = valid_spellings(rocm), known_spellings()
    checked = 0
    for path in goldens.inputs():
        src = path.read_text(encoding="utf-8", errors="replace").splitlines()
        out = (goldens.FIXTURES / "expected" / variant / path.name).read_text(
            encoding="utf-8", errors="replace").splitlines()
        findings = (goldens.FIXTURES / "expected" / variant / (path.name + ".findings")).read_text()
        flagged = {int(m.group(1)) for m in re.finditer(r"^(\d+):\d+ ", findings, re.M)}
        original = set(_WORD.findall("\n".join(src)))
        for line, text in _introduced(src, out):
            bad = {w for w in _WORD.findall(text) if w in known and w not in valid and w not in original}
            checked += 1
            assert not bad or line in flagged, (variant, path.name, line, sorted(bad))
    assert checked > 100  # the goldens do rewrite lines


def test_the_check_catches_a_7x_spelling_on_63() -> None:
    assert "hipblasScnrm2" in known_spellings() and "hipblasScnrm2" not in valid_spellings("6.3")
    assert "hipblasScnrm2_v2" in valid_spellings("6.3")
    assert "HIP_MEMSET_NODE_PARAMS" not in valid_spellings("7.2.1")
    assert "hipGraphAddBatchMemOpNode" not in valid_spellings("6.3")
