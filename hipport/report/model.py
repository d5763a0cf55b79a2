"""The Report value every renderer takes: findings plus what happened to each file."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hipport.findings import Finding, Severity
from hipport.rule import Rule
from hipport.versions import Version, short_version


@dataclass(frozen=True)
class FileOutcome:
    path: str
    status: str  # converted | unchanged | copied | skipped | error
    rewrites: int = 0
    message: str = ""  # the reason for skipped/error
    output: str = ""  # convert: where the converted file was written


@dataclass
class Report:
    tool_version: str
    target: Version
    command: str  # scan | convert | check
    findings: list[Finding] = field(default_factory=list)
    files: list[FileOutcome] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)
    gpus: str = ""  # the --offload-arch targets, described (gpus.describe)

    @property
    def target_name(self) -> str:
        return short_version(self.target)

    @property
    def errors(self) -> list[FileOutcome]:
        return [f for f in self.files if f.status == "error"]

    def summary(self) -> dict:
        """Counts a reader wants first; the same keys in every format."""
        sev = Counter(str(f.severity) for f in self.findings)
        fam = Counter(f.code[:3] + "xx" for f in self.findings)
        effort = Counter(str(f.effort) for f in self.findings if not f.fixed)
        status = Counter(f.status for f in self.files)
        return {
            "files": len(self.files),
            "files_by_status": dict(sorted(status.items())),
            "rewrites": sum(f.rewrites for f in self.files),
            "findings": len(self.findings),
            "fixed": sum(1 for f in self.findings if f.fixed),
            "by_severity": {str(s): sev.get(str(s), 0) for s in sorted(Severity, reverse=True)},
            "by_family": dict(sorted(fam.items())),
            "by_effort": dict(sorted(effort.items())),
        }
