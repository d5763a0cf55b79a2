"""Registry-wide invariants: every visitor declares the rules it reports.

The engine leaves a visitor out of a run when every rule it declares is ignored or out of
the target's range, so a visitor that reports an undeclared rule would lose findings
silently. Every visitor is wrapped, every fixture and example file is analysed for
several targets with pre-filters off (so that every visitor meets every node), and each
finding is charged to the visitor that reported it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipport import analyze, facts, rewrite, rules
from hipport.context import Context
from hipport.options import Options
from hipport.registry import prefilters
from hipport.rules.warp import functions as warp_functions
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for d in ("fixtures/rules", "fixtures/convert", "examples") for p in (ROOT / d).rglob("*")
                 if p.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc"))
TARGETS = ("6.3", "7.0", "7.2.1")


def _charged_codes(monkeypatch) -> tuple[dict, dict]:
    """(visitor name -> codes it reported, visitor name -> codes it declares)."""
    current: list[str] = []
    reported: dict[str, set[str]] = defaultdict(set)
    declared: dict[str, set[str]] = {}

    def wrap(name: str, fn):
        def wrapped(*args):
            current.append(name)
            try:
                fn(*args)
            finally:
                current.pop()
        return wrapped

    wrapped_visitors: dict = {}

    def wrapped_visitor(v):
        if v not in wrapped_visitors:
            name = f"{v.fn.__module__}.{v.fn.__qualname__}"
            declared[name] = {r.code for r in v.codes}
            wrapped_visitors[v] = replace(v, fn=wrap(name, v.fn))
        return wrapped_visitors[v]

    for reg in (rewrite.load(), facts.REGISTRY, rules.load()):
        for node_type, visitors in list(reg.visitors.items()):
            monkeypatch.setitem(reg.visitors, node_type, [wrapped_visitor(v) for v in visitors])
        monkeypatch.setattr(reg, "file_visitors", [wrapped_visitor(v) for v in reg.file_visitors])
    for table in ("_DISPATCH_TABLES", "_CONDITIONAL", "_OPTIONS_KEYS", "_NAME_MEMOS"):
        monkeypatch.setattr(analyze, table, {})
    original = Context.report

    def report(self, rule, *args, **kwargs):
        reported[current[-1] if current else "<no visitor>"].add(rule.code)
        return original(self, rule, *args, **kwargs)

    monkeypatch.setattr(Context, "report", report)
    with prefilters(False):
        for target in TARGETS:
            for apply_fixes in (False, True):
                options = Options(rocm=parse_version(target), apply_fixes=apply_fixes)
                for path in SOURCES:
                    analyze.analyze(path.read_bytes(), path.name, options)
    return reported, declared


def test_every_visitor_declares_what_it_reports(monkeypatch) -> None:
    """Rewriters may report (an argument rewrite it is not sure of is a finding) but declare
    nothing: leaving one out for its rules' sake would lose its edits, so it never is."""
    rewriters = {f"{v.fn.__module__}.{v.fn.__qualname__}" for vs in rewrite.load().visitors.values() for v in vs}
    assert all(not v.codes for vs in rewrite.load().visitors.values() for v in vs)
    reported, declared = _charged_codes(monkeypatch)
    undeclared = {name: sorted(codes - declared.get(name, set())) for name, codes in reported.items()
                  if codes - declared.get(name, set()) and name not in rewriters}
    assert undeclared == {}
    assert "<no visitor>" not in reported
    assert any(name.startswith("hipport.rules.warp.") for name in reported)  # the wrapping took


def test_function_checks_declare_their_rules() -> None:
    """Warp function checks are judged inside one visitor, which carries all their rules."""
    visitor_codes = {r.code for reg in (rules.load(),) for vs in reg.visitors.get("function_definition", [])
                     for r in (vs.codes if vs.fn is warp_functions.check_function else ())}
    assert visitor_codes == {r.code for check in warp_functions.CHECKS for r in check.codes}
    assert visitor_codes  # the checks exist


@pytest.mark.parametrize("code", ["HP201", "HP2XX"])
def test_ignored_rules_leave_their_visitors_out(code: str) -> None:
    """Dispatch-time pruning: with HP201 (or the family) ignored, the literal-mask visitor
    is not in the file's dispatch table at all."""
    from hipport.rules.warp.masks import check_literal_mask

    registries = (rewrite.load(), facts.REGISTRY, rules.load())
    src = b"__global__ void k(float v) { v = __shfl_sync(0xffffffff, v, 0); }"
    kept = analyze._dispatch(registries, Options(), src)
    pruned = analyze._dispatch(registries, Options(ignore=frozenset({code})), src)
    functions = lambda table: {fn for entry in table.values() for fn in entry[0]}  # noqa: E731
    assert check_literal_mask in functions(kept)
    assert check_literal_mask not in functions(pruned)


def test_fact_recorders_are_left_out_when_no_reader_is_enabled() -> None:
    """The recorders serve the rules declared with ``facts.need(by=...)``: with those
    ignored they are not in the dispatch table, and a reader asking after the walk gets
    the same facts from a query of the tree."""
    registries = (rewrite.load(), facts.REGISTRY, rules.load())
    src = b"#define FULL 0xffffffff\nint g;\n__global__ void k(unsigned m) { int x = m & 1; f(x); }\n"
    readers = frozenset(r.code for r in facts.Needs.readers)
    assert readers  # the warp function checks declare themselves
    functions = lambda table: {fn for entry in table.values() for fn in entry[0]}  # noqa: E731
    assert {facts.record, facts.record_call} <= functions(analyze._dispatch(registries, Options(), src))
    pruned = Options(ignore=readers)
    assert not {facts.record, facts.record_call} & functions(analyze._dispatch(registries, pruned, src))
    kept_ctx, pruned_ctx = analyze.analyze(src, "k.cu", Options()), analyze.analyze(src, "k.cu", pruned)
    assert facts.Recorded in pruned_ctx.states and not pruned_ctx.state(facts.Recorded).nodes
    for ctx in (kept_ctx, pruned_ctx):
        file = facts.file_facts(ctx)
        assert list(file.macros) == ["FULL"] and list(file.globals) == ["g"]
        func = next(n for n in ctx.tree.root_node.children if n.type == "function_definition")
        info = facts.function_facts(ctx, func)
        assert sorted(info.vars) == ["m", "x"] and info.device_like and len(info.binaries) == 1


def test_feature_and_library_rules_supersede_the_bare_mapping_status() -> None:
    """The engine used to drop HP101-105 at the place of any HP3xx/HP4xx finding by code
    prefix; now each rule carries it (``SaysWhatItIs``): a new rule must not lose it."""
    from hipport.rules import MAPPING_STATUS

    families = [rule for code, rule in rules.load().rules.items() if code[:3] in ("HP3", "HP4")]
    assert families
    for rule in families:
        assert any(MAPPING_STATUS <= s.codes and not s.within for s in rule.supersedes), rule.code


@given(st.text(alphabet=st.sampled_from("ab_Z09:<>.* é\t-"), max_size=12))
def test_words_of_is_the_word_regex(text: str) -> None:
    """The name filters' fast split answers exactly what the regex does."""
    from hipport.registry import _WORD, words_of

    assert words_of(text) == _WORD.findall(text)
