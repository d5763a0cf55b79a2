"""Dockerfiles: CUDA base images and the packages ``pip install`` lines bring in.

Only ``FROM``, ``ARG``/``ENV`` defaults and the ``pip``/``pip3``/``python -m pip`` words of
``RUN`` lines (heredoc bodies included) are read; the shell is not interpreted. ``${VAR}``,
``$VAR`` and ``${VAR:-default}`` are replaced by the ARG/ENV defaults declared above them
(``ARG BASE=nvidia/cuda:12.1…`` then ``FROM ${BASE}`` is a CUDA image); a variable with no
default stays unexpanded and its words are skipped.

Our own reader rather than `dockerfile-parse` (2.0.1, 2023): that library substitutes ARGs
in FROM but splits a ``RUN <<EOT`` heredoc body into bogus instructions, and it is a
file-editing library that wants a writable path.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from hipport.deps.codes import dep_finding
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import parse_requirement
from hipport.deps.pins import index_finding
from hipport.deps.requirements import INDEX_OPTIONS, is_local_path
from hipport.deps.walk import read_text
from hipport.findings import Finding

#: Base images that carry the CUDA runtime (NVIDIA's and NGC's).
CUDA_IMAGES = re.compile(r"^(docker\.io/)?(nvidia/cuda|nvcr\.io/nvidia/|nvidia/)", re.IGNORECASE)
_SEPARATORS = {"&&", "||", ";", "|"}
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-+]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def instructions(text: str) -> list[tuple[int, str, list[tuple[int, str]]]]:
    """(line, instruction text, heredoc body lines) with continuations joined, comments dropped."""
    out: list[tuple[int, str, list[tuple[int, str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, raw = i + 1, lines[i]
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        buf = raw
        while buf.rstrip().endswith("\\") and i < len(lines):
            buf = buf.rstrip()[:-1] + " "
            nxt = lines[i]
            i += 1
            if not nxt.lstrip().startswith("#"):
                buf += nxt
        body: list[tuple[int, str]] = []
        for m in _HEREDOC.finditer(buf):
            strip, word = m.group(1), m.group(3)
            while i < len(lines):
                line = lines[i]
                i += 1
                if (line.strip() if strip else line.rstrip()) == word:
                    break
                body.append((i, line))
        out.append((start, buf.strip(), body))
    return out


def read_dockerfile(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue]]:
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [], [], [ParseIssue(rel, 0, f"cannot read Dockerfile: {e}")]
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    env: dict[str, str] = {}
    for n, line, body in instructions(text):
        instruction, _, rest = line.partition(" ")
        word = instruction.upper()
        if word in ("ARG", "ENV"):
            _define(word, rest, env)
        elif word == "FROM":
            image = expand(next((w for w in rest.split() if not w.startswith("--")), ""), env)
            if CUDA_IMAGES.match(image):
                findings.append(dep_finding("HP504", rel, n, f"base image {image} is an NVIDIA CUDA image",
                                            "Start FROM rocm/pytorch (or rocm/dev-ubuntu-*) for the target ROCm."))
        elif word == "RUN":
            commands = [(n, _HEREDOC.sub(" ", rest))] + _joined(body)
            for at, command in commands:
                try:
                    words = shlex.split(expand(command, env).replace(";", " ; "), posix=True, comments=True)
                except ValueError as e:
                    issues.append(ParseIssue(rel, at, f"RUN line not understood: {e}"))
                    continue
                for args in pip_installs(words):
                    read_pip_args(args, rel, at, reqs, findings, issues)
    return reqs, findings, issues


def _define(word: str, rest: str, env: dict[str, str]) -> None:
    """``ARG NAME=default`` / ``ENV NAME=value`` / legacy ``ENV NAME value``."""
    try:
        parts = shlex.split(rest, posix=True)
    except ValueError:
        return
    if word == "ENV" and len(parts) >= 2 and "=" not in parts[0]:
        env[parts[0]] = " ".join(parts[1:])
        return
    for part in parts:
        name, eq, value = part.partition("=")
        if eq:
            env[name] = expand(value, env)
        elif word == "ARG":
            env.setdefault(name, "")  # declared without a default: unknown at build time


def expand(text: str, env: dict[str, str]) -> str:
    """Replace variables with their defaults; unknown ones stay ``$NAME`` (skipped later)."""
    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(3)
        value = env.get(name, "")
        if not value and m.group(2) is not None:
            return m.group(2)
        return value or m.group(0)

    return _VAR.sub(one, text)


def _joined(body: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A heredoc script's lines, with its own ``\\`` continuations joined."""
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for n, line in body:
        if not buf:
            start = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def pip_installs(words: list[str]) -> list[list[str]]:
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


def read_pip_args(args: list[str], rel: str, line: int, reqs: list[Requirement],
                  findings: list[Finding], issues: list[ParseIssue], *, optional: bool = False) -> None:
    """The requirements and index findings of one ``pip install`` argument list."""
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
        if word in ("-e", "--editable") and i + 1 < len(args) and "://" in args[i + 1]:
            i += 1  # an editable VCS checkout: read the URL as the requirement
            continue
        if word in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
            i += 2  # requirement files are read on their own; editable installs are local
            continue
        i += 1
        if word.startswith("-") or is_local_path(word) or "$" in word or word in ("pip", "setuptools", "wheel"):
            continue
        try:
            req = parse_requirement(word, rel, line, optional=optional)
        except ValueError as e:
            issues.append(ParseIssue(rel, line, str(e)))
            continue
        if req is not None:
            reqs.append(req)
