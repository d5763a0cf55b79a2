"""pip requirements files: includes, constraints, index URLs, hashes, markers, URLs.

Only the requirement-file syntax pip documents is read; nothing is installed or fetched.
Includes (``-r``/``-c``) are followed only inside the repository, once each.

Why our own reader and not a library: `requirements-parser` (0.13) drops index URLs and
constraints, does not join backslash continuations and opens ``-r`` targets anywhere on disk;
`pip-requirements-parser` vendors a 2022 copy of pip. The requirement strings themselves
go through ``packaging`` (pip's own PEP 508 parser); this module only handles the file
syntax around them, and tests/test_deps_parsers.py has a case for each form pip documents.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import parse_requirement
from hipport.deps.pins import index_finding
from hipport.deps.walk import MAX_ENTRIES, is_inside, read_text, real_path
from hipport.findings import Finding

INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "--find-links", "-f")
_INCLUDE_OPTS = {"-r": "declared", "--requirement": "declared", "-c": "constraint",
                 "--constraint": "constraint"}
_IGNORED_OPTS = ("--hash", "--no-binary", "--only-binary", "--pre", "--trusted-host",
                 "--prefer-binary", "--require-hashes", "--no-index", "--use-feature",
                 "--config-settings", "--global-option", "--no-deps")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) pairs with ``\\`` continuations joined and comments removed."""
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        if not buf:
            start = n
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1] + " "
            continue
        line = buf + raw
        buf = ""
        hash_at = line.find(" #") if not line.lstrip().startswith("#") else 0
        line = (line[:hash_at] if hash_at >= 0 else line).strip()
        if line:
            out.append((start, line))
    if buf.strip():
        out.append((start, buf.strip()))
    return out


def read_requirements(path: Path, root: Path, *, kind: str = "declared",
                      seen: set[Path] | None = None) -> tuple[list[Requirement], list[ParseIssue], list[Finding]]:
    """Requirements of ``path`` and the files it includes, problems, and CUDA-index findings."""
    seen = set() if seen is None else seen
    rel = path.relative_to(root).as_posix() if is_inside(path, root) else str(path)
    real = real_path(path)
    if real is None:
        return [], [ParseIssue(rel, 0, "cannot read requirements file: symlink loop")], []
    if real in seen:
        return [], [], []
    seen.add(real)
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [], [ParseIssue(rel, 0, f"cannot read requirements file: {e}")], []
    reqs: list[Requirement] = []
    issues: list[ParseIssue] = []
    parsed: list[tuple[int, str, str, str]] = []  # (line, text, option, value)
    for n, line in logical_lines(text):
        try:
            words = shlex.split(line, posix=True)
        except ValueError as e:
            issues.append(ParseIssue(rel, n, f"unbalanced quoting: {e}"))
            continue
        opt, _, inline_value = words[0].partition("=")
        parsed.append((n, line, opt, inline_value or (words[1] if len(words) > 1 else "")))
    if len(parsed) > MAX_ENTRIES:
        issues.append(ParseIssue(rel, parsed[MAX_ENTRIES][0],
                                 f"more than {MAX_ENTRIES} entries; the rest of the file is not read"))
        del parsed[MAX_ENTRIES:]
    # pip applies index options to the whole file, wherever they are written. One tuple
    # shared by every requirement: a copy each made memory quadratic (#17).
    indexes = tuple(value for _, _, opt, value in parsed if opt in INDEX_OPTIONS)
    findings = [f for n, _, opt, value in parsed if opt in INDEX_OPTIONS
                for f in [index_finding(value, rel, n)] if f is not None]
    for n, line, opt, value in parsed:
        if opt in _INCLUDE_OPTS:
            target = real_path(path.parent / value) or path.parent / value
            if not value or not is_inside(target, root):
                issues.append(ParseIssue(rel, n, f"include {value!r} is outside the repository; not read"))
            elif not target.is_file():
                issues.append(ParseIssue(rel, n, f"included file {value!r} does not exist"))
            else:
                sub_kind = "constraint" if _INCLUDE_OPTS[opt] == "constraint" else kind
                more, more_issues, more_findings = read_requirements(target, root, kind=sub_kind, seen=seen)
                reqs += more
                issues += more_issues
                findings += more_findings
        elif opt in INDEX_OPTIONS:
            continue
        elif opt in ("-e", "--editable"):
            if "://" in value or value.startswith("git+"):
                _add(reqs, issues, value, rel, n, kind, indexes)
            # else a local checkout (-e . / -e ./sub): the repository itself, read on its own
        elif is_local_path(opt):
            continue  # ./wheels/x.whl, ../pkg, /abs/path: a local file the repository ships
        elif opt.startswith("-"):
            if not opt.startswith(_IGNORED_OPTS):
                issues.append(ParseIssue(rel, n, f"unknown option {opt!r} ignored"))
        else:
            requirement = line.split(" --", 1)[0]  # per-line options such as --hash
            _add(reqs, issues, requirement, rel, n, kind, indexes)
    return reqs, issues, findings


def is_local_path(word: str) -> bool:
    """pip accepts a local directory or archive path where a requirement would go."""
    return word in (".", "..") or word.startswith(("./", "../", "/", "~/", "file:"))


def _add(reqs: list[Requirement], issues: list[ParseIssue], text: str, rel: str, line: int,
         kind: str, indexes: tuple[str, ...]) -> None:
    try:
        req = parse_requirement(text, rel, line, kind=kind, index_urls=indexes)
    except ValueError as e:
        issues.append(ParseIssue(rel, line, str(e)))
        return
    if req is not None:
        reqs.append(req)
