"""Build files ported with the sources: CMake, Makefiles and PyTorch extension scripts.

``kind_of`` tells which files these are (by name, so it costs nothing per file);
``transform`` rewrites one, returning bytes, findings and a rewrite count like the source
pipeline does. Each reader parses its language (tree-sitter's CMake and Make grammars,
Python's ``ast``) and makes byte-range edits on the original buffer, so comments, bracket
arguments and formatting stay byte for byte, and converting the output again changes
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath

from hipport.edits import Edit, apply_edits
from hipport.findings import Finding
from hipport.options import Options

_MAKEFILE_NAMES = frozenset({"makefile", "gnumakefile"})
_SUPPRESS = re.compile(rb"#.*?hipport:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")


def kind_of(path: PurePath) -> str | None:
    """"cmake", "make", "torch" (a Python file: setup.py or one that calls
    ``cpp_extension.load``), "shell" (``*.sh``) or None, from the file name alone."""
    name = path.name.lower()
    if name == "cmakelists.txt" or name.endswith(".cmake"):
        return "cmake"
    if name in _MAKEFILE_NAMES or name.endswith((".mk", ".mak")) or name.startswith("makefile."):
        return "make"
    if name.endswith(".py"):
        return "torch"
    if name.endswith(".sh"):
        return "shell"
    return None


def hip_name(path: str) -> str:
    """The name ``--rename`` gives a file: ``x.cu`` → ``x.hip``; any other name as it is.
    Every ``.cu`` file of a tree is renamed, so every reference to one can be too."""
    return path[:-3] + ".hip" if path.endswith(".cu") else path


def transform(data: bytes, path: str, options: Options) -> tuple[bytes, list[Finding], int]:
    """(new bytes, findings, rewrites) for one build file of a known kind; no I/O."""
    kind = kind_of(PurePath(path))
    ctx = BuildContext(path, data, options)
    if kind == "cmake":
        from hipport.rewrite.buildfiles import cmake as mod
    elif kind == "make":
        from hipport.rewrite.buildfiles import make as mod  # type: ignore[no-redef]
    elif kind == "torch":
        from hipport.rewrite.buildfiles import torch_ext as mod  # type: ignore[no-redef]
    elif kind == "shell":
        from hipport.rewrite.buildfiles import shell as mod  # type: ignore[no-redef]
    else:
        return data, [], 0
    mod.convert(ctx)
    new = apply_edits(data, outermost(ctx.edits)) if ctx.edits else data
    return new, sorted(ctx.findings, key=Finding.sort_key), ctx.rewrites


@dataclass
class BuildContext:
    """Edits and findings for one build file, with the policies every finding obeys:
    ``--ignore`` and ``[tool.hipport] ignore``, severity overrides, and ``# hipport:
    ignore[CODE]`` comments on the line or the line above."""

    path: str
    src: bytes
    options: Options
    edits: list[Edit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    rewrites: int = 0

    def __post_init__(self) -> None:
        self._line_starts = [0] + [m.end() for m in re.finditer(rb"\n", self.src)]
        self._suppressed: dict[int, set[str]] = {}
        if b"hipport" in self.src:
            for m in _SUPPRESS.finditer(self.src):
                codes = {"*"} if m.group(1) is None else {
                    c.strip().upper() for c in m.group(1).decode("ascii", "replace").split(",") if c.strip()}
                self._suppressed.setdefault(self.position(m.start())[0], set()).update(codes)

    def position(self, offset: int) -> tuple[int, int]:
        import bisect

        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def line_start(self, line: int) -> int:
        return self._line_starts[min(line, len(self._line_starts)) - 1]

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.src)
        return self.src[start:end].rstrip(b"\r\n").decode("utf-8", "replace")

    def edit(self, start: int, end: int, text: str) -> None:
        self.edits.append(Edit(start, end, text.encode("utf-8", "surrogateescape")))
        self.rewrites += 1

    def remove(self, start: int, end: int, lo: int = 0, hi: int | None = None) -> None:
        """Remove ``src[start:end]`` with the separator that came before it (or after it,
        for the first word), or its whole line when it stands alone on one; ``lo``/``hi``
        bound the search (the argument or text node the word is in)."""
        s, e = removal_span(self.src, start, end, lo, len(self.src) if hi is None else hi)
        self.edit(s, e, "")

    def report(self, code: str, start: int, end: int, message: str, suggestion: str = "",
               fixed: bool = False) -> None:
        from hipport import rules

        rule = rules.load().rules[code]
        opts = self.options
        if not rule.enabled(opts):
            return
        line, col = self.position(start)
        for ln in (line, line - 1):
            codes = self._suppressed.get(ln, ())
            if "*" in codes or code in codes or code[:3] + "XX" in codes:
                return
        end_line, end_col = self.position(end)
        self.findings.append(Finding(
            code=code, slug=rule.slug, severity=opts.severity_overrides.get(code, rule.severity),
            path=self.path, line=line, col=col, end_line=end_line, end_col=end_col,
            message=message, suggestion=suggestion, effort=rule.effort,
            fixed=fixed and opts.apply_fixes, engine="build", source_line=self.line_text(line),
        ))


def removal_span(src: bytes, start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    line_start = src.rfind(b"\n", lo, start) + 1 if src.rfind(b"\n", lo, start) >= 0 else lo
    nl = src.find(b"\n", end, hi)
    line_end = nl if nl >= 0 else hi
    before, after = src[line_start:start], src[end:line_end]
    if nl >= 0 and line_start > lo and not before.strip() and not after.strip():
        return line_start, nl + 1  # the word is the whole line
    s = start
    while s > lo and src[s - 1:s] in (b" ", b"\t"):
        s -= 1
    if s == start and s > lo and src[s - 1:s] == b";":
        s -= 1
    if s < start:
        return s, end
    e = end
    while e < hi and src[e:e + 1] in (b" ", b"\t", b";"):
        e += 1
        if src[e - 1:e] == b";":
            break
    return start, e


def outermost(edits: Iterable[Edit]) -> list[Edit]:
    """The edits less those strictly inside another one's range: a flag rewritten inside
    a generator expression that is removed whole is not also rewritten. Insertions at an
    edge of a range are kept; partial overlaps are left for ``apply_edits`` to refuse."""
    ordered = sorted(dict.fromkeys(edits), key=lambda e: (e.start, -e.end))
    kept: list[Edit] = []
    outer: Edit | None = None
    for e in ordered:
        if (outer is not None and outer.start <= e.start and e.end <= outer.end
                and (e.start, e.end) != (outer.start, outer.end)
                and not (e.start == e.end and e.start in (outer.start, outer.end))):
            continue
        kept.append(e)
        if outer is None or e.end > outer.end:
            outer = e
    return kept
