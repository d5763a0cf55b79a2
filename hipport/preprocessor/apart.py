"""Whether a file's own tests of the HIP compiler already give a HIP build its branch for
what one of its ``__CUDACC__`` tests decides.

hip-clang defines ``__HIPCC__``, not ``__CUDACC__``, so hipport rewrites a test of the one
into the other. A file that also tests ``__HIPCC__`` (or ``__HIP__``) may already tell the
compilers apart, and then the rewrite makes a HIP build take the CUDA branches too (Eigen
3.4's Macros.h: ``EIGEN_CUDACC`` from ``__CUDACC__``, ``EIGEN_HIPCC`` from ``__HIPCC__``;
rewritten, Eigen/Core took its CUDA branch and included ``cuda_runtime.h``). But a file may
test ``__HIPCC__`` only to pick its runtime header, and ``__CUDACC__`` for what the HIP build
needs as well (``#ifdef __CUDACC__ #define HD __host__ __device__``): kept, the HIP build
loses ``HD``. So the decision is made per test, on the branch structure of the directives:

- **kept**: the HIP build has its own branch for the same purpose — the condition tests the
  HIP compiler too, so does another arm of its ``#if``/``#elif`` chain, an enclosing or a
  nested one, or a macro the chain defines is defined under a test of the HIP compiler as
  well (itself, or its HIP twin: ``EIGEN_CUDACC`` / ``EIGEN_HIPCC``);
- **rewritten**: the chain defines a macro as what HIP code needs as much as CUDA code
  (``__host__ __device__``: macros.toml ``needed``) and no branch of the HIP compiler
  defines it, or every test of the HIP compiler in the file only picks headers
  (``#include``), so nothing else in the file gives the HIP build a branch of its own;
- **unsure**: anything else. The test is kept (what hipport did before) and reported at
  medium severity, since a person has to say whether the HIP build needs the branch.

Nothing here is evaluated: the question is what the file's author wrote the tests for, the
same in every pass, so only the shape of the ``#if`` groups is read.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from enum import Enum

from hipport.preprocessor import directives as dv


class Verdict(Enum):
    REWRITE = "rewrite"
    KEPT = "kept"
    UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    #: why, for the finding: "its #if chain has a __HIPCC__ branch (line 4)"
    reason: str


@dataclass
class _Arm:
    """One branch of an ``#if`` group: its directive, the bytes it governs, where it sits."""

    directive: dv.Directive
    group: int
    parent: int | None  # the arm this arm's group lies in
    body_start: int
    body_end: int = 1 << 62
    names: frozenset[str] = frozenset()  # the macros its condition tests
    #: what it #defines, nested arms included: name -> body
    defines: dict[str, str] = field(default_factory=dict)


_WORD = re.compile(r"[A-Za-z_]\w*")
_COMMENTS = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)
_CONTINUATION = re.compile(rb"\\\r?\n")
#: The lines an arm that only picks headers may hold (other than blank ones).
_HEADER_ONLY = re.compile(
    rb"[ \t]*#[ \t]*(?:include|include_next|import|pragma|error|warning"
    rb"|if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


class Tests:
    """The decisions for one file's tests of ``name`` (``__CUDACC__``)."""

    def __init__(self, src: bytes, name: str, hip: tuple[str, ...],
                 twins: tuple[tuple[str, str], ...], needed: frozenset[str]) -> None:
        self.name = name
        self.hip = hip
        self._src = src
        self._twins = twins
        self._needed = needed
        self._arms: list[_Arm] = []
        self._groups: list[list[int]] = []
        self._read(src)
        self._starts = [a.directive.start for a in self._arms]
        hip_groups = {a.group for a in self._arms if a.names & set(hip)}
        self._hip_groups = hip_groups
        #: the HIP compiler's macros the file tests, as its findings name them
        self._tested = " or ".join(sorted(set().union(*(a.names for a in self._arms)) & set(hip)))
        #: the macros some arm of a chain testing the HIP compiler defines
        self._hip_defines = {m for g in hip_groups for i in self._groups[g] for m in self._arms[i].defines}
        self._headers_only = all(self._picks_headers(src, i) for g in hip_groups for i in self._groups[g])
        self._memo: dict[int, Decision] = {}

    def _read(self, src: bytes) -> None:
        """The ``#if`` groups of ``src``, their arms, and what each arm defines."""
        stack: list[int] = []  # the open arms, innermost last
        for d in dv.scan(src):
            k = d.kind
            if k in ("if", "ifdef", "ifndef"):
                self._groups.append([])
                self._open(d, len(self._groups) - 1, stack[-1] if stack else None, stack)
            elif k in ("elif", "elifdef", "elifndef", "else"):
                if not stack:
                    continue
                arm = self._arms[stack.pop()]
                arm.body_end = d.start
                self._open(d, arm.group, arm.parent, stack)
            elif k == "endif":
                if stack:
                    self._arms[stack.pop()].body_end = d.start
            elif k == "define" and d.macro is not None:
                for i in stack:
                    self._arms[i].defines.setdefault(d.macro[0], d.macro[2])

    def _open(self, d: dv.Directive, group: int, parent: int | None, stack: list[int]) -> None:
        """A new arm of ``group`` at directive ``d``, with the names its condition tests."""
        if d.kind == "else":
            names: frozenset[str] = frozenset()
        elif d.kind.endswith(("def", "ndef")):
            m = d.macro
            names = frozenset((m[0],)) if m is not None else frozenset()
        else:
            names = frozenset(_WORD.findall(d.arg)) - {"defined"}
        self._arms.append(_Arm(d, group, parent, d.end, names=names))
        self._groups[group].append(len(self._arms) - 1)
        stack.append(len(self._arms) - 1)

    def _picks_headers(self, src: bytes, i: int) -> bool:
        """Whether arm ``i`` holds nothing but preprocessor lines that pick headers."""
        arm = self._arms[i]
        body = _CONTINUATION.sub(b" ", _COMMENTS.sub(b" ", src[arm.body_start:min(arm.body_end, len(src))]))
        return all(not line.strip() or _HEADER_ONLY.match(line) for line in body.splitlines())

    def at(self, offset: int) -> Decision:
        """The decision for the occurrence of the name at byte ``offset``: that of the test
        whose condition holds it, else of the innermost arm under a test of it."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0 and offset < self._arms[i].directive.end:  # in a condition
            return self._decide(i)
        inner = None
        for j in range(i, -1, -1):  # the innermost open arm whose chain tests the name
            arm = self._arms[j]
            if arm.body_start <= offset < arm.body_end:
                if any(self.name in self._arms[k].names for k in self._groups[arm.group]):
                    inner = j
                    break
        if inner is not None:
            return self._decide(inner)
        return self._fallback()

    def _fallback(self) -> Decision:
        if not self._hip_groups or self._headers_only:
            return Decision(Verdict.REWRITE, self._header_reason())
        return Decision(Verdict.UNSURE, self._unsure_reason())

    def _header_reason(self) -> str:
        return "" if not self._hip_groups else f"this file tests {self._tested} only to pick headers"

    def _unsure_reason(self) -> str:
        return f"this file tests {self._tested} itself, but not for what this test decides"

    def _decide(self, i: int) -> Decision:
        found = self._memo.get(i)
        if found is None:
            found = self._memo[i] = self._decision(i)
        return found

    def _decision(self, i: int) -> Decision:
        arm = self._arms[i]
        hip = self._tested
        if arm.names & set(self.hip):
            return Decision(Verdict.KEPT, f"its condition tests {hip} too")
        for k in self._groups[arm.group]:
            if self._arms[k].names & set(self.hip):
                return Decision(Verdict.KEPT, f"its #if chain has a {hip} branch (line {self._line(k)})")
        up = arm.parent
        while up is not None:
            if self._arms[up].group in self._hip_groups:
                return Decision(Verdict.KEPT, f"it lies in a branch of a {hip} test (line {self._line(up)})")
            up = self._arms[up].parent
        inside = self._nested_hip(arm.group)
        if inside is not None:
            return Decision(Verdict.KEPT, f"a {hip} test inside its branches decides for HIP (line {self._line(inside)})")
        defines = [(m, body) for k in self._groups[arm.group] for m, body in self._arms[k].defines.items()]
        for m, _ in sorted(defines):
            for other in (m, *self._twin(m)):
                if other in self._hip_defines:
                    return Decision(Verdict.KEPT, f"{other} is defined under a {hip} test too")
        for m, body in sorted(defines):
            words = [w for w in _WORD.findall(body) if w in self._needed]
            if words:
                return Decision(Verdict.REWRITE, f"its branch defines {m} as {' '.join(dict.fromkeys(words))}, "
                                f"which no {hip} branch defines: a HIP build needs it too")
        if self._headers_only:
            return Decision(Verdict.REWRITE, self._header_reason())
        return Decision(Verdict.UNSURE, self._unsure_reason())

    def _nested_hip(self, group: int) -> int | None:
        """An arm testing the HIP compiler in a group nested in ``group``'s arms, if any."""
        mine = set(self._groups[group])
        for j, a in enumerate(self._arms):
            if a.group in self._hip_groups and a.names & set(self.hip):
                up = a.parent
                while up is not None:
                    if up in mine:
                        return j
                    up = self._arms[up].parent
        return None

    def _twin(self, macro: str) -> list[str]:
        """The HIP spellings of a CUDA-named macro (``EIGEN_CUDACC`` → ``EIGEN_HIPCC``)."""
        return [macro.replace(cuda, hip) for cuda, hip in self._twins if cuda in macro]

    def _line(self, i: int) -> int:
        """The line of arm ``i``'s directive, for the reason a finding gives."""
        return self._src.count(b"\n", 0, self._arms[i].directive.start) + 1
