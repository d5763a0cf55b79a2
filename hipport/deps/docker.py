"""Dockerfiles: CUDA base images and the packages ``pip install`` lines bring in.

Only ``FROM`` and the ``pip``/``pip3``/``python -m pip`` words of ``RUN`` lines are read; the
shell is not interpreted, so variables stay unexpanded and are reported as such.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from hipport.deps.codes import dep_finding
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import parse_requirement
from hipport.deps.pins import index_finding
from hipport.deps.requirements import INDEX_OPTIONS, logical_lines
from hipport.deps.walk import read_text
from hipport.findings import Finding

#: Base images that carry the CUDA runtime (NVIDIA's and NGC's).
CUDA_IMAGES = re.compile(r"^(docker\.io/)?(nvidia/cuda|nvcr\.io/nvidia/|nvidia/)", re.IGNORECASE)
_SEPARATORS = {"&&", "||", ";", "|"}


def read_dockerfile(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue]]:
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [], [], [ParseIssue(rel, 0, f"cannot read Dockerfile: {e}")]
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    for n, line in logical_lines(text):
        instruction, _, rest = line.partition(" ")
        if instruction.upper() == "FROM":
            image = next((w for w in rest.split() if not w.startswith("--")), "")
            if CUDA_IMAGES.match(image):
                findings.append(dep_finding("HP504", rel, n, f"base image {image} is an NVIDIA CUDA image",
                                            "Start FROM rocm/pytorch (or rocm/dev-ubuntu-*) for the target ROCm."))
        elif instruction.upper() == "RUN":
            try:
                words = shlex.split(rest.replace(";", " ; "), posix=True)
            except ValueError as e:
                issues.append(ParseIssue(rel, n, f"RUN line not understood: {e}"))
                continue
            for args in _pip_installs(words):
                _read_args(args, rel, n, reqs, findings, issues)
    return reqs, findings, issues


def _pip_installs(words: list[str]) -> list[list[str]]:
    """The argument lists of every ``pip install`` in a shell command."""
    out: list[list[str]] = []
    i = 0
    while i < len(words) - 1:
        if re.fullmatch(r"pip[0-9.]*", words[i].rsplit("/", 1)[-1]) and words[i + 1] == "install":
            j = i + 2
            while j < len(words) and words[j] not in _SEPARATORS:
                j += 1
            out.append(words[i + 2:j])
            i = j
        else:
            i += 1
    return out


def _read_args(args: list[str], rel: str, line: int, reqs: list[Requirement],
               findings: list[Finding], issues: list[ParseIssue]) -> None:
    i = 0
    while i < len(args):
        word = args[i]
        opt, eq, value = word.partition("=")
        if opt in INDEX_OPTIONS:
            url = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            finding = index_finding(url, rel, line)
            if finding is not None:
                findings.append(finding)
            i += 1 if eq else 2
            continue
        if word in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
            i += 2  # requirement files are read on their own; editable installs are local
            continue
        i += 1
        if word.startswith("-") or word in (".", "..") or word.startswith(("./", "/")) or "$" in word:
            continue
        try:
            req = parse_requirement(word, rel, line)
        except ValueError as e:
            issues.append(ParseIssue(rel, line, str(e)))
            continue
        if req is not None:
            reqs.append(req)
