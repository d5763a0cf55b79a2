"""The unit every stage reports in: a Finding at a place in a file.

Findings are plain frozen data so they can cross process boundaries (the pool in
``pipeline``), be cached by ``check`` and be rendered by any ``report`` writer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import IntEnum
from operator import attrgetter


class Severity(IntEnum):
    """Ordered so that ``finding.severity >= options.fail_on`` reads naturally."""

    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    BLOCKER = 4

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.name.lower() for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of: {names})") from None

    def __str__(self) -> str:
        return self.name.lower()


class Effort(IntEnum):
    """How much human work a finding costs, for the summary (SYCLomatic-style buckets)."""

    NONE = 0  # fixed automatically, or informational
    SMALL = 1  # a local edit, minutes
    MEDIUM = 2  # a redesign of one function or kernel, hours
    LARGE = 3  # a rewrite against another library or architecture, days

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a person must look at, at 1-based ``line`` and ``col`` (a byte column)."""

    code: str
    slug: str
    severity: Severity
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    suggestion: str = ""
    effort: Effort = Effort.SMALL
    fixed: bool = False
    engine: str = "tree-sitter"
    source_line: str = field(default="", compare=False)
    #: In ``convert``: the finding's line in the converted output (0: not converted). The
    #: line a person edits, which rewrites above it may have moved.
    output_line: int = field(default=0, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code, self.message)

    def __reduce__(self) -> tuple:
        """Pickle as the constructor's arguments: the dataclass default looks up the fields
        anew for every object, which made unpickling a pool's findings cost the parent
        more than reading the files."""
        return Finding, _field_values(self)

    def at_output_line(self, line: int) -> "Finding":
        """This finding with ``output_line`` set: ``dataclasses.replace`` without its
        per-field bookkeeping (convert makes one per finding)."""
        args = list(_field_values(self))
        args[_OUTPUT_LINE] = line
        return Finding(*args)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["severity"] = str(self.severity)
        d["effort"] = str(self.effort)
        d["column"] = d.pop("col")
        d["end_column"] = d.pop("end_col")
        return d


_FINDING_FIELDS = tuple(f.name for f in fields(Finding))
_OUTPUT_LINE = _FINDING_FIELDS.index("output_line")
#: Every field's value, in order, read in one C call (a getattr per field from Python cost
#: a microsecond a finding, for each finding convert places and each one a worker sends).
_field_values = attrgetter(*_FINDING_FIELDS)
