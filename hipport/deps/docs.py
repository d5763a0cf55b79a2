"""README / INSTALL files: the ``pip install`` and ``conda install`` lines people actually run.

Many research repositories declare their real dependencies only in the README ("pip
install flash-attn --no-build-isolation", "conda install pytorch cudatoolkit=11.3 -c
pytorch"). Commands are read from Markdown fenced blocks, reStructuredText literal blocks
and ``$ ``-prompted lines; prose is not. A section whose heading names AMD, ROCm or HIP is
the repository's own ROCm route: it is credited as ROCm-awareness, its commands are not
judged, and the README's CUDA index URLs then cost nothing (the AMD route is documented).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from hipport.deps.codes import dep_finding
from hipport.deps.conda import CUDA_CHANNELS, INFRASTRUCTURE, conda_requirement
from hipport.deps.docker import pip_installs, read_pip_args
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.walk import read_text
from hipport.findings import Finding

_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*)")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'*+#])\1{2,}\s*$")
_AMD = re.compile(r"\b(AMD|ROCm|ROCM|rocm|HIP|Radeon|Instinct)\b")
_PROMPT = re.compile(r"^\s*(?:\$|>|!|%|#\s*\$)\s*")
_INSTALLER = re.compile(r"\b(pip[0-9.]*|conda|mamba|micromamba)\s+install\b")


def read_docs(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue], list[int]]:
    """Requirements, CUDA index/channel findings, problems, and the lines of AMD/ROCm sections."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [], [], [ParseIssue(rel, 0, f"cannot read {path.name}: {e}")], []
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    commands, amd_lines = _commands(text, path.suffix.lower())
    for n, command, amd in commands:
        if amd:
            amd_lines.append(n)
            continue
        try:
            words = shlex.split(command.replace(";", " ; "), posix=True, comments=True)
        except ValueError:
            continue  # prose-like text in a block; not a command
        for args in pip_installs(words):
            read_pip_args(args, rel, n, reqs, findings, [])
        for args in _conda_installs(words):
            _read_conda_args(args, rel, n, reqs, findings)
    if amd_lines:  # the CUDA route is one of two documented routes: not a pin to change
        findings = [f for f in findings if f.code not in ("HP501", "HP502")]
    return reqs, findings, issues, sorted(set(amd_lines))


def _commands(text: str, suffix: str) -> tuple[list[tuple[int, str, bool]], list[int]]:
    """(line, install command, inside an AMD/ROCm section) per command; AMD/ROCm heading lines."""
    out: list[tuple[int, str, bool]] = []
    amd_headings: list[int] = []
    lines = text.splitlines()
    fence = ""
    literal_indent = -1
    amd_level = 0  # heading level that opened an AMD section (0: not in one)
    for n, line in enumerate(lines, 1):
        heading = _heading_at(lines, n - 1)
        if heading and not fence:
            level, title = heading
            if _AMD.search(title):
                amd_level = level
                amd_headings.append(n)
            elif amd_level and level <= amd_level:
                amd_level = 0
            continue
        stripped = line.strip()
        if _FENCE.match(line):
            fence = "" if fence else stripped[:3]
            continue
        in_literal = False
        if suffix == ".rst":
            indent = len(line) - len(line.lstrip())
            if literal_indent >= 0 and (indent > literal_indent or not stripped):
                in_literal = True
            else:
                literal_indent = -1
            if stripped.endswith("::"):
                literal_indent = indent
        command = _PROMPT.sub("", line) if (fence or in_literal) else (
            _PROMPT.sub("", line) if _PROMPT.match(line) else "")
        if command and _INSTALLER.search(command):
            out.append((n, command.strip(), bool(amd_level) or "rocm" in command.lower()))
    return out, amd_headings


def _heading_at(lines: list[str], i: int) -> tuple[int, str] | None:
    """A Markdown ``#`` heading, or a text line underlined with === / --- (setext, rst)."""
    m = _MD_HEADING.match(lines[i])
    if m:
        return len(m.group(1)), m.group(2)
    if i + 1 < len(lines) and lines[i].strip() and _UNDERLINE.match(lines[i + 1]) and not _FENCE.match(lines[i]):
        return (1 if lines[i + 1].strip()[0] == "=" else 2), lines[i].strip()
    return None



def _conda_installs(words: list[str]) -> list[list[str]]:
    out = []
    for i in range(len(words) - 1):
        if words[i].rsplit("/", 1)[-1] in ("conda", "mamba", "micromamba") and words[i + 1] == "install":
            j = i + 2
            while j < len(words) and words[j] not in ("&&", "||", ";", "|"):
                j += 1
            out.append(words[i + 2:j])
    return out


def _read_conda_args(args: list[str], rel: str, line: int, reqs: list[Requirement], findings: list[Finding]) -> None:
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in ("-c", "--channel"):
            channel = args[i] if i < len(args) else ""
            i += 1
            if CUDA_CHANNELS.search(channel):
                findings.append(dep_finding("HP501", rel, line, f"conda channel {channel!r} serves CUDA builds",
                                            "Install ROCm PyTorch with pip from the PyTorch ROCm index instead."))
            continue
        if word.startswith("-") or "$" in word:
            continue
        req = conda_requirement(word, rel, line)
        if req is not None and req.name not in INFRASTRUCTURE:
            reqs.append(req)
