"""SARIF 2.1.0, the format GitHub code scanning (and most CI dashboards) ingest.

Choices that matter to GitHub: URIs are relative to ``%SRCROOT%`` with forward slashes;
every result points at its rule by ``ruleId`` *and* ``ruleIndex``; columns are counted in
Unicode code points (declared in ``columnKind``) because findings carry byte columns that
no SARIF consumer understands; and each result has a ``partialFingerprints`` entry that
does not contain the line number, so an alert survives code being moved up or down.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from hipport.findings import Finding, Severity
from hipport.report.common import char_index, ordered_findings, rules_seen
from hipport.report.model import Report
from hipport.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/hipport/"
FINGERPRINT_KEY = "hipportFindingHash/v1"
SRCROOT = "%SRCROOT%"

LEVELS: dict[Severity, str] = {
    Severity.BLOCKER: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}


def artifact_location(path: str) -> dict:
    """A relative URI under %SRCROOT%, or an absolute ``file://`` URI for absolute paths."""
    is_windows = "\\" in path or PureWindowsPath(path).drive
    pure = PureWindowsPath(path) if is_windows else PurePosixPath(path)
    if pure.is_absolute():
        return {"uri": pure.as_uri()}
    uri = quote(pure.as_posix().removeprefix("./"), safe="/")
    return {"uri": uri, "uriBaseId": SRCROOT}


def fingerprint(f: Finding) -> str:
    """sha256 of code, path, message and the whitespace-normalised source line.

    No line number goes in, so inserting lines above a finding keeps its identity;
    re-indenting it does too.
    """
    normalized = " ".join(f.source_line.split())
    text = "\0".join((f.code, f.path.replace("\\", "/"), f.message, normalized))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def region(f: Finding) -> dict:
    """1-based code-point columns; ``endColumn`` is exclusive, as in the finding."""
    line = f.source_line
    start = char_index(line, f.col) + 1 if line else f.col
    reg = {"startLine": f.line, "startColumn": start}
    if f.end_line > f.line:
        reg.update(endLine=f.end_line, endColumn=max(f.end_col, 1))
    elif f.end_line == f.line:
        end = char_index(line, f.end_col) + 1 if line else f.end_col
        reg.update(endLine=f.line, endColumn=max(end, start))
    if line:
        reg["snippet"] = {"text": line}
    return reg


def _first_paragraph(doc: str) -> str:
    return re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0].strip()


def rule_descriptor(rule: Rule) -> dict:
    """A reportingDescriptor: GitHub shows ``shortDescription`` in lists, ``help`` on the alert."""
    help_text = f"{rule.title}\n\n{rule.doc}" if rule.doc else rule.title
    help_md = f"**{rule.title}**\n\n{rule.doc}" if rule.doc else rule.title
    return {
        "id": rule.code,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": _first_paragraph(rule.doc) or rule.title},
        "help": {"text": help_text, "markdown": help_md},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["portability", "rocm", rule.family],
            "hipport-severity": str(rule.severity),
            "hipport-effort": str(rule.effort),
        },
    }


def _message(f: Finding) -> str:
    return f"{f.message}\nSuggestion: {f.suggestion}" if f.suggestion else f.message


def render(report: Report, *, color: bool = False) -> str:
    """One run, one result per open finding; ``color`` is ignored.

    Fixed findings are left out: code scanning is a list of what still needs a person,
    and an alert for every identifier ``convert`` already rewrote would bury it.

    Identical findings (same fingerprint) get ``:1``, ``:2``… suffixes in order, the way
    GitHub's own line hashes disambiguate, so each stays a distinct alert.
    """
    open_findings = [f for f in ordered_findings(report) if not f.fixed]
    rules = rules_seen(report, open_findings)
    index = {r.code: i for i, r in enumerate(rules)}
    results, occurrences = [], {}
    for f in open_findings:
        digest = fingerprint(f)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": _message(f)},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": artifact_location(f.path),
                    "region": region(f),
                },
            }],
            "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{occurrences[digest]}"},
            "properties": {"severity": str(f.severity), "effort": str(f.effort), "engine": f.engine},
        }
        results.append(result)
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message or "error"},
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(e.path)}}],
        }
        for e in sorted(report.errors, key=lambda e: e.path)
    ]
    run = {
        "tool": {
            "driver": {
                "name": "hipport",
                "version": report.tool_version,
                "semanticVersion": report.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [rule_descriptor(r) for r in rules],
            },
        },
        "invocations": [{
            "executionSuccessful": True,  # unreadable files are reported, not fatal
            "toolExecutionNotifications": notifications,
            "properties": {"command": report.command, "rocmTarget": report.target_name},
        }],
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The scanned source tree."}}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    sarif = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"
