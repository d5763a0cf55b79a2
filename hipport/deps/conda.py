"""Conda environment files: conda specs, channels, and the nested pip section.

Read with PyYAML's safe loader (no object construction, no code). A hand-written subset
reader was the alternative; real environment files use flow lists, quoting, comments and
anchors, and misreading one silently would break "never silently wrong".
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hipport.deps.codes import dep_finding
from hipport.deps.lines import LineIndex
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import normalize, parse_requirement
from hipport.deps.pins import index_finding
from hipport.deps.requirements import INDEX_OPTIONS, is_local_path
from hipport.deps.walk import MAX_ENTRIES, check_depth, read_text
from hipport.findings import Finding

_CONDA_SPEC = re.compile(r"^\s*(?:(?P<channel>[^:\s]+)::)?(?P<name>[A-Za-z0-9_.\-]+)\s*(?P<version>[^\s=]*=*[^\s]*)?")
#: Conda channels that serve CUDA builds (the "nvidia" channel, and CUDA labels).
#: Conda packages that are the environment's machinery, not dependencies of the code.
INFRASTRUCTURE = frozenset({"python", "pip", "setuptools", "wheel"})
CUDA_CHANNELS = re.compile(r"^(nvidia|rapidsai)(/|$)|/label/cuda", re.IGNORECASE)


def read_environment(path: Path, rel: str) -> tuple[list[Requirement], list[Finding], list[ParseIssue]]:
    """Requirements (conda and pip), CUDA channel findings and problems of one environment file."""
    try:
        text = read_text(path)
        check_depth(text)
        data = yaml.safe_load(text)
    except RecursionError:  # block nesting ("- - - - …") is not brackets: the parser's own limit
        return [], [], [ParseIssue(rel, 0, "cannot parse conda environment: nested too deeply for the YAML parser")]
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as e:
        why = (str(e).splitlines() or [type(e).__name__])[0]
        return [], [], [ParseIssue(rel, 0, f"cannot parse conda environment: {why}")]
    if not isinstance(data, dict):
        return [], [], [ParseIssue(rel, 0, "not a conda environment (top level is not a mapping)")]
    index = LineIndex(text)
    reqs: list[Requirement] = []
    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    channels = [c for c in _list(data.get("channels")) if isinstance(c, str)]
    for channel in channels:
        if CUDA_CHANNELS.search(channel):
            findings.append(dep_finding("HP501", rel, index.item(channel),
                                        f"conda channel {channel!r} serves CUDA builds",
                                        "Drop the channel; install ROCm PyTorch with pip from the PyTorch ROCm index."))
    for dep in _list(data.get("dependencies")):
        if len(reqs) >= MAX_ENTRIES:
            issues.append(ParseIssue(rel, 0, f"more than {MAX_ENTRIES} dependencies; the rest are not read"))
            break
        if isinstance(dep, str):
            req = conda_requirement(dep, rel, index.item(dep))
            if req is not None and req.name in INFRASTRUCTURE:
                continue
            if req is None:
                issues.append(ParseIssue(rel, index.item(dep), f"not a conda spec: {dep!r}"))
            else:
                reqs.append(req)
        elif isinstance(dep, dict) and isinstance(dep.get("pip"), list):
            for spec in dep["pip"][:MAX_ENTRIES]:
                if not isinstance(spec, str):
                    continue
                line = index.item(spec)
                if is_local_path(spec):
                    continue  # a path the repository ships (./pkg, ../x.whl)
                if spec.startswith("-"):
                    opt, _, value = spec.replace("=", " ", 1).partition(" ")
                    finding = index_finding(value.strip(), rel, line)
                    if opt in INDEX_OPTIONS and finding is not None:
                        findings.append(finding)
                    continue
                try:
                    req = parse_requirement(spec, rel, line, group="pip")
                except ValueError as e:
                    issues.append(ParseIssue(rel, line, str(e)))
                    continue
                if req is not None:
                    reqs.append(req)
    return reqs, findings, issues


def conda_requirement(spec: str, rel: str, line: int) -> Requirement | None:
    """``pytorch::pytorch=2.1.0=py3.10_cuda12.1*`` → Requirement(name, specifier, local)."""
    m = _CONDA_SPEC.match(spec)
    if not m:
        return None
    text = m.group("version") or ""
    specifier, build = "", ""
    if re.match(r"^[<>!~]", text):  # pytorch-cuda>=11.8, numpy>=1.24,<2 (no build string)
        specifier = text
    else:  # =1.2, ==1.2, =1.2=py310_cuda12.1, or "1.2.*" after a space
        version, _, build = text.lstrip("=").partition("=")
        if re.match(r"^[0-9]", version):
            specifier = "==" + version
    local = re.search(r"cuda[0-9.]+|cu[0-9]{2,3}", build)
    return Requirement(name=normalize(m.group("name")), source=rel, line=line, raw=spec,
                       specifier=specifier, local=local.group(0) if local else "", group="conda")


def _list(value: object) -> list:
    return value if isinstance(value, list) else []

