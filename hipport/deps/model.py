"""Plain data that flows through `hipport deps`: what a repository declares, what hipport
concludes about it, and where every lost point went.

Readers (manifests, imports, extensions) produce ``Requirement``s, ``Finding``s and
``ParseIssue``s; ``verdict`` turns requirements into ``Verdict``s; ``score`` turns verdicts and
findings into ``Deduction``s. Keeping each stage's output a frozen value lets tests build any
stage's input by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hipport.findings import Effort, Finding
from hipport.versions import Version


@dataclass(frozen=True)
class Requirement:
    """One place where a repository declares, constrains or imports a package."""

    name: str  # PEP 503-normalized distribution name, or an import path for kind="import"
    source: str  # repository-relative path of the file that says so
    line: int
    raw: str = ""  # the text as written, for the report
    specifier: str = ""  # PEP 440 specifier set, "" when unpinned
    local: str = ""  # local version label such as "cu121"
    url: str = ""  # direct reference (name @ url, git+…, a wheel URL)
    index_urls: tuple[str, ...] = ()  # index / find-links URLs in effect for this line
    kind: str = "declared"  # declared | constraint | import
    group: str = ""  # extra / dependency group; "" for the main dependencies
    #: Not needed to run the code: an extra, a dev/optional group, or an import guarded by
    #: ``try: … except ImportError``. A dependency only ever optional is never a blocker.
    optional: bool = False
    extras: tuple[str, ...] = ()  # requested extras: jax[cuda12] picks the CUDA plugin


@dataclass(frozen=True)
class ParseIssue:
    """A file hipport could not read or understand; scoring goes on without it."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class RepoFacts:
    """Everything read from one repository before any judgement."""

    root: str
    requirements: list[Requirement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # HP5xx about the repo
    issues: list[ParseIssue] = field(default_factory=list)
    kernel_files: list[str] = field(default_factory=list)  # own CUDA/C++ sources, relative
    local_modules: set[str] = field(default_factory=set)  # top-level names the repo defines
    manifests: list[str] = field(default_factory=list)  # files read as manifests
    rocm_aware: list[str] = field(default_factory=list)  # "path:line: what" showing ROCm support


@dataclass(frozen=True)
class Verdict:
    """hipport's conclusion about one dependency for one ROCm target."""

    key: str  # knowledge-base key, or the normalized name of an unknown package
    title: str
    level: str  # the kind of ROCm route: a key of [factor] in python-deps-scoring.toml, or "fine"
    verdict: str  # ok | check | needs-work | blocker ([verdict] in python-deps-scoring.toml)
    status: str  # the knowledge base's status text, or "unknown - check" / "unknown (pure Python)"
    factor: float  # 1.0 runs as is ... 0.0 blocks
    reason: str
    install: str = ""
    replacement: str = ""
    caveats: str = ""
    notes: tuple[str, ...] = ()
    effort: Effort = Effort.SMALL
    evidence: tuple[Requirement, ...] = ()
    declared: bool = True  # False: imported by the code but declared nowhere
    optional: bool = False  # every mention is optional (extra, dev group, guarded import)
    pin: str = ""  # the specifier to use (when the declared one misses, or a validated release)
    bump: str = ""  # what moving the pin costs ("a minor bump"), when it must move

    @property
    def blocker(self) -> bool:
        return self.verdict == "blocker"


@dataclass(frozen=True)
class Deduction:
    """Points one dependency or finding costs. ``points`` sum to 100 - score exactly."""

    target: str  # "dependency:<key>", "finding:<code>:<path>:<line>", "kernels:<path>"
    reason: str
    raw: float  # before scaling (see hipport.deps.score)
    points: float  # after scaling


@dataclass
class Assessment:
    """The result for one repository: what `hipport deps` prints in every format."""

    root: str
    target: Version
    verdicts: list[Verdict]
    findings: list[Finding]  # HP5xx findings and the HP findings of the repo's own sources
    issues: list[ParseIssue]
    deductions: list[Deduction]
    score: float
    grade: str
    grade_meaning: str
    plan: list[dict]
    kernel_summary: dict
    manifests: list[str]
    rocm_aware: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    """A repository that could not be assessed at all; a batch reports it and goes on."""

    root: str
    message: str
