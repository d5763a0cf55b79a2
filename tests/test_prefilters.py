"""Pre-filters are sound: turning every one off changes no output and no finding.

A pre-filter (a visitor's name, source or rule filter, the engine's skipped ``#define``
bodies, ``Context.may_contain``, the facts recording only what rules declared) may only
save work. With ``prefilters(False)`` everything runs everywhere; the converted bytes and
the findings must be the same, over the fixtures, the examples and a generated corpus,
for targets on both sides of every rule's version range.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from hipport.options import Options
from hipport.pipeline import transform
from hipport.registry import prefilters, prefilters_on
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".inl")
TARGETS = ("6.3", "7.0", "7.2.1")


def _corpus(tmp_path_factory) -> list[Path]:
    spec = importlib.util.spec_from_file_location("hipport_bench_corpus", ROOT / "bench" / "corpus.py")
    corpus = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = corpus  # dataclasses look the module up while the class is made
    spec.loader.exec_module(corpus)
    root = tmp_path_factory.mktemp("corpus")
    corpus.generate(root, ROOT, files=24, mean_lines=150, seed=7)
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> list[Path]:
    checked_in = sorted(p for d in ("fixtures/rules", "fixtures/convert", "fixtures/deep", "examples")
                        for p in (ROOT / d).rglob("*") if p.suffix in SUFFIXES)
    return checked_in + _corpus(tmp_path_factory)


def _outputs(paths: list[Path], options: Options) -> list:
    return [transform(p.read_bytes(), p.name, options) for p in paths]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("apply_fixes", [False, True], ids=["scan", "convert"])
def test_prefilters_change_nothing(sources: list[Path], target: str, apply_fixes: bool) -> None:
    options = Options(rocm=parse_version(target), apply_fixes=apply_fixes, launch_syntax="hip")
    filtered = _outputs(sources, options)
    with prefilters(False):
        assert not prefilters_on()
        unfiltered = _outputs(sources, options)
    assert prefilters_on()
    assert sum(len(findings) for _, findings, _ in filtered) > 100  # the inputs do exercise the rules
    for path, a, b in zip(sources, filtered, unfiltered):
        assert a == b, path


def test_prefilters_change_nothing_with_rules_ignored(sources: list[Path]) -> None:
    """Rule pruning is a pre-filter too: ignoring rules drops exactly their findings."""
    ignored = frozenset({"HP101", "HP110", "HP2XX"})  # none of them supersedes another finding
    options = Options(ignore=ignored)
    everything = _outputs(sources, Options())
    pruned = _outputs(sources, options)
    for path, (_, all_findings, _), (_, kept, _) in zip(sources, everything, pruned):
        assert kept == [f for f in all_findings
                        if f.code not in ignored and f.code[:3] + "XX" not in ignored], path
