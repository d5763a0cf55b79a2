"""pyproject.toml: PEP 621, PEP 735 dependency groups, Poetry, PDM and uv tables.

TOML loses line numbers, so each requirement's line comes from a one-pass LineIndex of the
text (quoted strings, ``key =`` lines): good enough to point a reader at it, and never used
for judgement. Extras, optional groups and Poetry ``optional = true`` make a requirement
optional (``Requirement.optional``): its package is not needed to run the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hipport.deps.lines import LineIndex
from hipport.deps.model import ParseIssue, Requirement
from hipport.deps.pep508 import normalize, parse_requirement
from hipport.deps.walk import MAX_ENTRIES, check_depth, read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_POETRY_SKIP = {"python"}
#: Poetry groups that hold tooling, not what the code needs to run (installed by default,
#: but never on the ROCm path of the research code).
TOOLING_GROUPS = frozenset({"dev", "test", "tests", "lint", "docs", "doc", "typing"})


def read_pyproject(path: Path, rel: str) -> tuple[list[Requirement], list[ParseIssue], list[tuple[str, int]], str]:
    """Requirements, problems, (index URL, line) pairs and the project's name, of one pyproject.toml."""
    try:
        text = read_text(path)
        check_depth(text)
        data = tomllib.loads(text)
    except RecursionError:
        return [], [ParseIssue(rel, 0, "cannot parse pyproject.toml: nested too deeply for the TOML parser")], [], ""
    except (OSError, UnicodeDecodeError, ValueError) as e:  # TOMLDecodeError is a ValueError
        return [], [ParseIssue(rel, 0, f"cannot parse pyproject.toml: {e}")], [], ""
    lines = LineIndex(text)
    reqs: list[Requirement] = []
    issues: list[ParseIssue] = []

    def add(spec: object, group: str) -> None:
        if len(reqs) >= MAX_ENTRIES:
            if len(issues) == 0 or "entries" not in issues[-1].message:
                issues.append(ParseIssue(rel, 0, f"more than {MAX_ENTRIES} dependencies; the rest are not read"))
            return
        if not isinstance(spec, str):
            issues.append(ParseIssue(rel, 0, f"dependency {spec!r} in {group or 'dependencies'} is not a string"))
            return
        line = lines.string(spec)
        try:
            req = parse_requirement(spec, rel, line, group=group, optional=bool(group))
        except ValueError as e:
            issues.append(ParseIssue(rel, line, str(e)))
            return
        if req is not None:
            reqs.append(req)

    project = _table(data, "project")
    for spec in _list(project.get("dependencies")):
        add(spec, "")
    for group, specs in _table(project, "optional-dependencies").items():
        for spec in _list(specs):
            add(spec, group)
    for table in (_table(data, "dependency-groups"), _table(_table(data, "tool", "pdm"), "dev-dependencies")):
        for group, specs in table.items():
            for spec in _list(specs):
                if isinstance(spec, dict):  # PEP 735 {include-group = "..."}
                    continue
                add(spec, group)
    for spec in _list(_table(data, "tool", "uv").get("dev-dependencies")):
        add(spec, "dev")
    poetry = _table(data, "tool", "poetry")
    reqs += _poetry(poetry.get("dependencies"), "", False, lines, rel, issues)
    reqs += _poetry(poetry.get("dev-dependencies"), "dev", True, lines, rel, issues)
    for group, table in _table(poetry, "group").items():
        if isinstance(table, dict):
            optional = table.get("optional") is True or group.lower() in TOOLING_GROUPS
            reqs += _poetry(table.get("dependencies"), group, optional, lines, rel, issues)
    indexes = [src.get("url", "") for src in _list(poetry.get("source")) + _list(_table(data, "tool", "uv").get("index"))
               if isinstance(src, dict)]
    indexes += [idx.get("url", "") for idx in _list(_table(data, "tool", "pdm").get("source")) if isinstance(idx, dict)]
    name = project.get("name") or poetry.get("name") or ""
    return reqs, issues, [(u, lines.string(u)) for u in indexes if isinstance(u, str) and u], str(name)


def _poetry(table: object, group: str, group_optional: bool, lines: LineIndex, rel: str,
            issues: list[ParseIssue]) -> list[Requirement]:
    """Poetry's ``name = "^1.2"`` / ``name = {version=…, url=…, git=…}`` into Requirements."""
    if not isinstance(table, dict):
        return []
    out: list[Requirement] = []
    for name, value in table.items():
        if name.lower() in _POETRY_SKIP:
            continue
        if len(out) >= MAX_ENTRIES:
            issues.append(ParseIssue(rel, lines.key(name), f"more than {MAX_ENTRIES} dependencies; the rest are not read"))
            break
        entries = value if isinstance(value, list) else [value]  # multiple-constraint form
        for entry in entries:
            version, url, optional, extras = (entry, "", False, ()) if isinstance(entry, str) else ("", "", False, ())
            if isinstance(entry, dict):
                version = str(entry.get("version", ""))
                url = str(entry.get("url") or entry.get("git") or "")
                optional = entry.get("optional") is True
                extras = tuple(str(x) for x in _list(entry.get("extras")))
            line = lines.key(name)
            try:
                spec = poetry_to_pep440(version)
            except ValueError as e:
                issues.append(ParseIssue(rel, line, f"{name}: {e}"))
                spec = ""
            local = re.search(r"\+([A-Za-z0-9.]+)", version)
            out.append(Requirement(name=normalize(name), source=rel, line=line, raw=f"{name} = {entry!r}",
                                   specifier=spec, local=local.group(1) if local else "", url=url, group=group,
                                   optional=optional or group_optional, extras=extras))
    return out


def poetry_to_pep440(version: str) -> str:
    """``^2.5.8`` → ``>=2.5.8,<3``; ``~2.5.8`` → ``>=2.5.8,<2.6``; ``2.5.8`` → ``==2.5.8``."""
    version = version.strip()
    if version in ("", "*"):
        return ""
    if version[0] in "^~" and version[1:2] != "=":
        base = version[1:].strip()
        parts = [int(p) for p in re.findall(r"\d+", base.split("+")[0])[:3]] or [0]
        if version[0] == "^":
            idx = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
        else:
            idx = min(1, len(parts) - 1) if len(parts) > 1 else 0
        upper = parts[:idx] + [parts[idx] + 1]
        return f">={base},<{'.'.join(map(str, upper))}"
    if re.match(r"^\d", version):
        return "==" + version
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    try:
        return str(SpecifierSet(version.replace(" ", "")))
    except InvalidSpecifier:
        raise ValueError(f"version constraint {version!r} not understood") from None


def _table(data: object, *keys: str) -> dict:
    for key in keys:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return data if isinstance(data, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []

