"""Per-file state shared by every rewriter and rule during the single walk of a tree.

A Context is where edits and findings are collected, and where the policies that must
hold for every rule live in one place: HIP-guarded CUDA branches are not reported,
``// hipport: ignore[...]`` comments and ``[tool.hipport] ignore`` are honoured, a rule
only fires for the ROCm versions it applies to, severities can be overridden, and a fix
is applied only when the run applies fixes (``convert``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from hipport import gpus
from hipport.edits import Edit, line_starts
from hipport.findings import Finding, Severity
from hipport.options import Options
from hipport.parse import Node, Tree
from hipport.preprocessor import Branches, model
from hipport.preprocessor.includers import HEADER_SUFFIXES
from hipport.registry import prefilters_on
from hipport.rule import Rule
from hipport.versions import Version

if TYPE_CHECKING:
    from hipport.mapping import MappingView

_SUPPRESS_RE = re.compile(rb"(?://|/\*).*?hipport:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")
ALL = "*"
#: Longer lines are not quoted in findings (``Context.quoted_line``).
MAX_QUOTED_LINE = 4096
_NAME_RE = re.compile(rb"[A-Za-z_]\w*")
S = TypeVar("S")
#: ``Context._keeps`` of a wave64-only rule on a target with 64-lane waves.
_WAVE64 = "wave64"
_LAST_NAME = re.compile(r"(\w+)\s*$")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def word_starts(src: bytes, word: bytes) -> list[int]:
    """Where ``word`` (ASCII letters, digits and ``_``) stands in ``src`` as a whole word, as
    ``re.finditer(rb"\\bWORD\\b")`` finds it, without compiling a pattern per word: a
    pattern per template function name, run over the whole file, was ~5 % of convert on the
    bench corpus, whose names are all different (re's cache never hit)."""
    found, n, end = [], len(word), len(src)
    at = src.find(word)
    while at >= 0:
        if (at == 0 or src[at - 1] not in _WORD_BYTES) and (at + n >= end or src[at + n] not in _WORD_BYTES):
            found.append(at)
        at = src.find(word, at + 1)
    return found


@dataclass
class Context:
    path: str
    src: bytes
    tree: Tree
    options: Options
    view: "MappingView"
    findings: list[Finding] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    rewrites: int = 0  # identifiers/includes/launches rewritten, for the summary
    #: Typed per-file state of rewriters, rules and fact gatherers, one value per class
    #: (``state``): what one visitor leaves for a later one.
    states: dict = field(default_factory=dict)
    #: True while the walk is in a reparsed ``#define`` body: those nodes belong to
    #: another tree, at this file's offsets, and are inside no function of this tree.
    in_macro_body: bool = False
    _branches: Branches | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._line_starts = line_starts(self.src)
        self._suppressed = self._scan_suppressions()
        self._kept: dict[str, object] = {}  # rule code -> ``_keeps``
        self._templates: dict[int, bool] = {}  # function start -> ``_never_instantiated``

    # -- per-file state ----------------------------------------------------------
    def state(self, cls: type[S]) -> S:
        """This file's instance of ``cls`` (made with no arguments on first use): the typed
        per-file state a rule keeps between its visitors."""
        found = self.states.get(cls)
        if found is None:
            found = self.states[cls] = cls()
        return found

    def may_contain(self, *needles: "bytes | re.Pattern[bytes]", within: Node | None = None) -> bool:
        """False when the file (or ``within``'s text) surely has none of ``needles``
        (bytes, or compiled byte patterns): the one text pre-filter visitors use, so that
        turning pre-filters off (``hipport.registry.prefilters``) reaches them too."""
        if not prefilters_on():
            return True
        src = self.src
        if within is None:
            start, end = 0, len(src)
        else:
            start, end = within.start_byte, within.end_byte
        for needle in needles:
            if needle.__class__ is bytes:
                if src.find(needle, start, end) >= 0:
                    return True
            elif needle.search(src, start, end) is not None:
                return True
        return False

    # -- the target --------------------------------------------------------------
    @property
    def rocm(self) -> Version:
        """The target ROCm release, as rules read it."""
        return self.options.rocm

    def applicable(self, *rules: Rule) -> Rule | None:
        """The first of ``rules`` whose ROCm range holds the target: for pairs such as
        HP207/HP208 (an error from 7.0, a deprecation before) the rule that applies."""
        rocm = self.options.rocm
        for rule in rules:
            if rule.applies_to(rocm):
                return rule
        return None

    # -- positions -------------------------------------------------------------
    @property
    def line_starts(self) -> list[int]:
        """The byte offset where each line starts (``edits.line_starts``)."""
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, byte column) of a byte offset."""
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.src)
        return self.src[start:end].rstrip(b"\r\n").decode("utf-8", "replace")

    def quoted_line(self, line: int) -> str:
        """The line a finding quotes, or "" when it is longer than MAX_QUOTED_LINE bytes
        (minified or generated code): a 10 MB line quoted by each of its thousands of
        findings took gigabytes, and no report shows such a line usefully."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.src)
        return "" if end - start > MAX_QUOTED_LINE else self.line_text(line)

    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    # -- policy ----------------------------------------------------------------
    def in_cuda_only_branch(self, offset: int) -> bool:
        """True where a HIP build does not compile: a branch no pass takes (``branches``),
        the CUDA side of a HIP guard (``#else`` of ``#ifdef __HIP_PLATFORM_AMD__``…) among
        them, or a condition part no pass's result depends on."""
        return self.branches.skipped(offset)

    @property
    def branches(self) -> Branches:
        """The branches no pass of the HIP build compiles (``hipport.preprocessor``), worked
        out when the first finding asks: most files have none to ask about."""
        if self._branches is None:
            self._branches = model(self.src, self.path, self.options)
        return self._branches

    def _keeps(self, rule: Rule) -> "bool | str":
        """Whether this run keeps findings of ``rule`` at all, asked once per rule and file:
        False, True, or ``_WAVE64`` (kept, but only outside code written for AMD)."""
        if not rule.enabled(self.options):
            return False
        if rule.code not in gpus.wave64_rules():
            return True
        # 32-lane code on GPUs that all run 32-lane waves (RDNA) is right as written
        if gpus.wave32_only(gpus.archs_of(self.options)):
            return False
        return True if rule.code in gpus.kept_in_amd_code() else _WAVE64

    def _provided(self, start: int, end: int) -> bool:
        """Whether the name a finding starts with (``__trap`` of ``__trap()``) is one the
        project provides for its HIP build (``Branches.provides``)."""
        m = _NAME_RE.match(self.src, start, end)
        return m is not None and self.branches.provides(m.group(0).decode("latin-1"))

    def _scan_suppressions(self) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        if b"hipport" not in self.src:
            return out
        for m in _SUPPRESS_RE.finditer(self.src):
            line, _ = self.position(m.start())
            codes = {ALL} if m.group(1) is None else {
                c.strip().upper() for c in m.group(1).decode("ascii", "replace").split(",") if c.strip()
            }
            out.setdefault(line, set()).update(codes)
        return out

    def _in_gpu_only_function(self, where: Node | tuple[int, int]) -> bool:
        """Inside a ``__device__`` or ``__global__`` function that is not also ``__host__``."""
        if isinstance(where, tuple):
            return False
        from hipport.facts import is_device_only_code  # facts registers visitors: loaded with the rules

        return is_device_only_code(self, where)

    def _in_uninstantiated_template(self, where: Node | tuple[int, int]) -> bool:
        """Inside a function template of a source file (a header's may be used elsewhere)
        whose name the file spells, outside its definition, only in branches the HIP build
        never compiles: it is never instantiated, so none of its code runs (vLLM's
        warp_expert_search, a ballot loop called only from ``#ifndef USE_ROCM`` kernels)."""
        if isinstance(where, tuple) or self.path.endswith(HEADER_SUFFIXES):
            return False
        from hipport.facts import enclosing_function  # facts registers visitors: loaded with the rules

        func = enclosing_function(self, where)
        if func is None:
            return False
        found = self._templates.get(func.start_byte)
        if found is None:
            found = self._templates[func.start_byte] = self._never_instantiated(func)
        return found

    def _never_instantiated(self, func: Node) -> bool:
        if func.parent is None or func.parent.type != "template_declaration":
            return False
        decl = func.child_by_field_name("declarator")
        name = _LAST_NAME.search(self.text(decl).split("(")[0]) if decl is not None else None
        if name is None:
            return False
        word = name.group(1).encode()
        starts = word_starts(self.src, word) if word.isascii() else [
            m.start() for m in re.finditer(rb"\b%s\b" % re.escape(word), self.src)]
        uses = [at for at in starts if not func.start_byte <= at < func.end_byte]
        return bool(uses) and all(self.in_cuda_only_branch(at) for at in uses)

    def is_suppressed(self, code: str, line: int) -> bool:
        for ln in (line, line - 1):
            codes = self._suppressed.get(ln)
            if codes and (ALL in codes or code in codes or code[:3] + "XX" in codes):
                return True
        return False

    # -- collecting ------------------------------------------------------------
    def edit(self, start: int, end: int, text: str | bytes) -> None:
        self.edits.append(Edit(start, end, text.encode() if isinstance(text, str) else text))

    def report(
        self,
        rule: Rule,
        where: Node | tuple[int, int],
        message: str,
        suggestion: str = "",
        fix: Iterable[Edit] = (),
        engine: str = "tree-sitter",
    ) -> bool:
        """Record a finding at ``where`` (a node or a byte range) unless policy drops it.

        Returns True when the finding was kept, so callers can count. ``fix`` edits are
        applied only when the run applies fixes; the finding then says ``fixed``.
        ``engine`` names the engine that found it (``hipport.deep`` says ``clang``).
        """
        start, end = (where.start_byte, where.end_byte) if not isinstance(where, tuple) else where
        opts = self.options
        kept = self._kept.get(rule.code)
        if kept is None:
            kept = self._kept[rule.code] = self._keeps(rule)
        if not kept:
            return False
        if kept is _WAVE64 and self.branches.amd_only(start):
            return False  # wave64 code written for AMD
        hidden = self.in_cuda_only_branch(start)  # code a HIP build does not compile
        if not hidden and rule.run_time_only and self.branches.gpu_never is not None \
                and self.branches.device_never(start) and self._in_gpu_only_function(where):
            hidden = True  # only the host pass compiles it, which never generates GPU code
        if not hidden and (rule.run_time_only or rule.needs_instantiation) \
                and self._in_uninstantiated_template(where):
            hidden = True  # a template the HIP build never instantiates generates no code
        if hidden and not opts.all_branches:
            return False
        line, col = self.position(start)
        if self.is_suppressed(rule.code, line):
            return False
        if rule.moot_where_provided and self._provided(start, end):
            return False  # the project defines this CUDA name itself for its HIP build
        end_line, end_col = self.position(end)
        fix = [] if hidden else list(fix)  # --all-branches shows such code; it never edits it
        fixed = bool(fix) and opts.apply_fixes
        if fixed:
            self.edits.extend(fix)
        self.findings.append(Finding(
            code=rule.code,
            slug=rule.slug,
            severity=Severity.INFO if hidden else opts.severity_overrides.get(rule.code, rule.severity),
            path=self.path,
            line=line,
            col=col,
            end_line=end_line,
            end_col=end_col,
            message=f"not compiled by the HIP build: {message}" if hidden else message,
            suggestion=suggestion,
            effort=rule.effort,
            fixed=fixed,
            engine=engine,
            source_line=self.quoted_line(line),
        ))
        return True
