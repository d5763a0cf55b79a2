"""The machine-readable report: one JSON object, byte-for-byte stable between runs.

Keys are written in a fixed order and findings/files sorted, so a report can be diffed,
committed as a baseline or cached, and two runs over the same tree give the same bytes.
"""

from __future__ import annotations

import json

from hipport.findings import Finding
from hipport.report.common import ordered_findings, rocm_range, rules_seen
from hipport.report.model import FileOutcome, Report

#: Bumped when a key is removed or changes meaning; adding keys does not bump it.
SCHEMA_VERSION = 1


def finding_dict(f: Finding) -> dict:
    """A finding with the public key names (``column``, not ``col``) in a fixed order."""
    return {
        "code": f.code,
        "slug": f.slug,
        "severity": str(f.severity),
        "path": f.path,
        "line": f.line,
        "column": f.col,
        "end_line": f.end_line,
        "end_column": f.end_col,
        "message": f.message,
        "suggestion": f.suggestion,
        "effort": str(f.effort),
        "fixed": f.fixed,
        "engine": f.engine,
        "source_line": f.source_line,
        "output_line": f.output_line,
    }


def file_dict(f: FileOutcome) -> dict:
    return {"path": f.path, "status": f.status, "rewrites": f.rewrites, "message": f.message,
            "output": f.output}


def report_dict(report: Report) -> dict:
    """The whole report as plain data, in the order a reader scans it."""
    return {
        "schema": SCHEMA_VERSION,
        "version": report.tool_version,
        "target": report.target_name,
        "command": report.command,
        "summary": report.summary(),
        "findings": [finding_dict(f) for f in ordered_findings(report)],
        "files": [file_dict(f) for f in sorted(report.files, key=lambda f: f.path)],
        "rules": [
            {
                "code": r.code,
                "slug": r.slug,
                "title": r.title,
                "severity": str(r.severity),
                "effort": str(r.effort),
                "rocm": rocm_range(r),
            }
            for r in rules_seen(report)
        ],
    }


def render(report: Report, *, color: bool = False) -> str:
    """``indent=2``, non-ASCII kept readable, trailing newline; ``color`` is ignored."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
