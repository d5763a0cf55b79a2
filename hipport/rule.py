"""What a rule *is* (metadata and documentation), apart from how it is checked.

Like a compiler warning or a ruff rule: a stable code, a slug, a default severity, an
effort bucket, the ROCm versions it applies to, and a page of documentation (the
docstring of the rule's class in ``hipport.rules``) rendered by ``hipport rules CODE``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.versions import Version

if TYPE_CHECKING:
    from hipport.options import Options


@dataclass(frozen=True)
class Supersedes:
    """Which findings of other rules a finding of this rule makes redundant: those of
    ``codes`` at the same place (same start), or with ``within`` anywhere inside its
    range, and with ``token`` only those whose text starts with it. The engine applies
    it (``analyze``); it knows no rule by name."""

    codes: frozenset[str]
    within: bool = False
    token: str = ""


@dataclass(frozen=True)
class Rule:
    code: str  # HP201
    slug: str  # warp-mask-32bit
    severity: Severity
    effort: Effort
    title: str  # one line
    doc: str  # markdown: why, example before/after, how to fix
    rocm_min: Version | None = None  # applies when target >= rocm_min
    rocm_max: Version | None = None  # applies when target < rocm_max
    supersedes: tuple[Supersedes, ...] = ()
    #: The rule reports what a CUDA name is under HIP: moot where the project provides
    #: that name itself for its HIP build (``Branches.provides``), so ``Context.report``
    #: drops its findings there.
    moot_where_provided: bool = False
    #: The rule judges what device code does when it runs (lane arithmetic, fp8 bytes,
    #: PTX): inside a ``__device__``/``__global__``-only function only the GPU passes
    #: matter, since the host pass never generates its code (``Context.report``). A rule
    #: about names (a missing declaration fails the host pass's parse too) leaves it False.
    run_time_only: bool = False
    #: The rule's hazard needs the code generated: what it flags runs wrong, or a template
    #: instantiation rejects it (a 32-bit mask's ``static_assert`` in HIP 7's ``*_sync``
    #: templates). A function template the HIP build never instantiates is then moot, as for
    #: a ``run_time_only`` rule (``Context.report``).
    needs_instantiation: bool = False
    #: The rule reports C++ that the HIP build's clang rejects whatever CUDA the file has
    #: (C++17's removed ``register``): it also runs on a CUDA-free header that a CUDA unit
    #: of the run includes, which the HIP build compiles too, when the header holds one of
    #: these bytes (``pipeline.process`` holds such a header back until its includers are
    #: known). Empty: only on the files convert parses anyway.
    in_included_headers: tuple[bytes, ...] = ()

    @property
    def family(self) -> str:
        return self.code[:3] + "xx"

    def enabled(self, options: "Options") -> bool:
        """Whether a run with ``options`` keeps this rule's findings at all: selected and
        not ignored (``Options.reports``), and the target in range. ``Context.report`` and the engine's
        dispatch-time pruning both ask this, so they cannot disagree."""
        return options.reports(self.code) and self.applies_to(options.rocm)

    def applies_to(self, rocm: Version) -> bool:
        if self.rocm_min is not None and rocm < self.rocm_min:
            return False
        if self.rocm_max is not None and rocm >= self.rocm_max:
            return False
        return True


def rule_from_class(cls: type) -> Rule:
    """Build a Rule from a documentation class: attributes are metadata, the docstring is the page.

    Used as a decorator so that each rule reads like ruff's: a class named for what it
    detects, whose docstring explains why and shows before/after.
    """
    doc = inspect.getdoc(cls) or ""
    title, _, body = doc.partition("\n")
    return Rule(
        code=cls.code,
        slug=cls.slug,
        severity=cls.severity,
        effort=cls.effort,
        title=title.strip(),
        doc=body.strip(),
        rocm_min=getattr(cls, "rocm_min", None),
        rocm_max=getattr(cls, "rocm_max", None),
        supersedes=tuple(getattr(cls, "supersedes", ())),
        moot_where_provided=bool(getattr(cls, "moot_where_provided", False)),
        run_time_only=bool(getattr(cls, "run_time_only", False)),
        needs_instantiation=bool(getattr(cls, "needs_instantiation", False)),
        in_included_headers=tuple(getattr(cls, "in_included_headers", ())),
    )
