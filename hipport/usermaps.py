"""Project mappings: CUDA→HIP pairs a project adds to, or corrects in, hipport's tables.

hipify-perl users keep custom maps and hipify_torch's most requested feature is a custom
mapping file; here they live in ``[tool.hipport.mappings]`` (or a TOML file that
``mappings = "FILE"`` names, relative to the pyproject.toml)::

    [tool.hipport.mappings]
    cudaLaunchHelper = "hipLaunchHelper"                  # every release
    cudaNewApi = { hip = "hipNewApi", since = "7.0" }     # from ROCm 7.0 on
    cudaOldApi = { hip = "hipOldApi", until = "7.0" }     # before ROCm 7.0 only

A pair is a layer over the mapping view (``UserView``): for a target inside its range it
is a MAPPED row, rewritten and reported like any table row; outside it, the table's own
row answers if there is one, else the name is NEWER or REMOVED with a detail naming the
pair's origin (file and line). ``hipport map`` shows the pair with that origin. A bad
entry is a usage error naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from hipport.options import ConfigError
from hipport.versions import Version, parse_version, short_version

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ENTRY_KEYS = {"hip", "since", "until"}
#: Every CUDA name some pair names, in this process: the walk's name filter admits them
#: (``rewrite.identifiers.in_tables``). It only grows, which keeps the filter sound.
NAMES: set[str] = set()


@dataclass(frozen=True)
class UserMapping:
    cuda: str
    hip: str
    since: Version | None  # first release it holds for
    until: Version | None  # first release it no longer holds for
    origin: str  # "path/pyproject.toml:12"

    def holds(self, rocm: Version) -> bool:
        return (self.since is None or self.since <= rocm) and (self.until is None or rocm < self.until)

    def range_text(self) -> str:
        if self.since and self.until:
            return f"from {short_version(self.since)} until {short_version(self.until)}"
        if self.since:
            return f"from {short_version(self.since)}"
        if self.until:
            return f"until {short_version(self.until)}"
        return "every release"


def read(value: Any, config: Path) -> tuple[UserMapping, ...]:
    """The pairs of ``[tool.hipport] mappings`` (a table, or a file name) of ``config``."""
    if isinstance(value, str):
        path = (config.parent / value)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"{config}: [tool.hipport] mappings: cannot read {path}: {e}") from e
        from hipport.options import toml_module

        tomllib = toml_module()
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from e
        return _pairs(table, path, text, header=None)
    if isinstance(value, dict):
        try:
            text = config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        return _pairs(value, config, text, header="tool.hipport.mappings")
    raise ConfigError(f"{config}: [tool.hipport] mappings must be a table of pairs or a file name")


def _pairs(table: dict, path: Path, text: str, header: str | None) -> tuple[UserMapping, ...]:
    lines = _key_lines(text, header)
    out = []
    for cuda, entry in table.items():
        where = f"{path}:{lines.get(cuda, 1)}"
        out.append(_pair(cuda, entry, where))
    return tuple(out)


def _pair(cuda: str, entry: Any, where: str) -> UserMapping:
    def bad(why: str) -> ConfigError:
        return ConfigError(f"{where}: mapping {cuda!r}: {why}")

    if not _NAME.match(cuda):
        raise bad("the CUDA name must be an identifier")
    if isinstance(entry, str):
        entry = {"hip": entry}
    if not isinstance(entry, dict):
        raise bad('expected "hipName" or { hip = "hipName", since = "X.Y", until = "X.Y" }')
    unknown = set(entry) - _ENTRY_KEYS
    if unknown:
        raise bad(f"unknown key {sorted(unknown)[0]!r} (expected hip, since, until)")
    hip = entry.get("hip")
    if not isinstance(hip, str) or not _NAME.match(hip):
        raise bad("hip must be the HIP identifier it maps to")
    try:
        since = parse_version(str(entry["since"])) if "since" in entry else None
        until = parse_version(str(entry["until"])) if "until" in entry else None
    except ValueError as e:
        raise bad(str(e)) from e
    if since is not None and until is not None and until <= since:
        raise bad(f"until {short_version(until)} is not after since {short_version(since)}")
    return UserMapping(cuda, hip, since, until, where)


def _key_lines(text: str, header: str | None) -> dict[str, int]:
    """1-based line of each ``key =`` in the section ``header`` (None: before any header)."""
    found: dict[str, int] = {}
    section = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[] \t")
            continue
        if section != header:
            continue
        m = re.match(r"""\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=""", line)
        if m:
            found.setdefault(next(g for g in m.groups() if g), number)
    return found


def register(mappings: tuple[UserMapping, ...]) -> None:
    """Let the walk's name filter admit these names (before a file is walked with them)."""
    new = {m.cuda for m in mappings} - NAMES
    if new:
        NAMES.update(new)
        from hipport.analyze import forget_name_verdicts

        forget_name_verdicts()


def user_view(view: Any, mappings: tuple[UserMapping, ...]) -> Any:
    """``view`` with ``mappings`` over it (the same object when there are none)."""
    if not mappings:
        return view
    from hipport.mapping import MappingView

    class UserView(MappingView):
        """The mapping view, answering first from the project's pairs."""

        def __init__(self) -> None:
            super().__init__(view.table, view.rocm, roc=view.roc, experimental=view.experimental)
            self.user = {m.cuda: m for m in mappings}

        def resolve(self, name: str):  # type: ignore[no-untyped-def]
            pair = self.user.get(name)
            base = super().resolve(name)
            return base if pair is None else resolution(pair, self.rocm, base)

    return UserView()


def resolution(pair: UserMapping, rocm: Version, base: Any) -> Any:
    """What ``pair`` means on ``rocm``; ``base`` is the table's answer for the name, if any."""
    from hipport.mapping import Resolution, Status

    entry = replace(base.entry, hip=pair.hip) if base is not None else _entry(pair)
    if pair.holds(rocm):
        return Resolution(pair.cuda, Status.MAPPED, pair.hip, True, entry,
                          f"{pair.cuda} → {pair.hip} (project mapping, {pair.origin})")
    if base is not None:
        return base
    tgt = short_version(rocm)
    if pair.since is not None and rocm < pair.since:
        return Resolution(pair.cuda, Status.NEWER, pair.hip, False, entry,
                          f"{pair.hip} exists from ROCm {short_version(pair.since)} by the project "
                          f"mapping at {pair.origin}; target is {tgt}")
    return Resolution(pair.cuda, Status.REMOVED, pair.hip, False, entry,
                      f"{pair.hip} holds until ROCm {short_version(pair.until)} by the project "
                      f"mapping at {pair.origin}; target is {tgt}")


def _entry(pair: UserMapping) -> Any:
    """A table row for a name the tables lack: no versions, family ``project``."""
    from hipport.mapping import ApiEntry

    known = {"cuda": pair.cuda, "hip": pair.hip, "family": "project", "kind": "function",
             "section": "project mappings"}
    values = {}
    for f in fields(ApiEntry):
        if f.name in known:
            values[f.name] = known[f.name]
        else:
            values[f.name] = () if str(f.type).startswith("tuple") else None
    return ApiEntry(**values)


def describe_pair(pair: UserMapping, table: Any, targets: tuple[Version, ...], options: Any) -> dict:
    """What ``hipport map`` shows for a project pair: its origin, range and per-target status."""
    out: dict[str, Any] = {"cuda": pair.cuda, "hip": pair.hip, "range": pair.range_text(),
                           "origin": pair.origin, "targets": {}}
    for rocm in targets:
        base = table.view(rocm, roc=options.roc, experimental=options.experimental).resolve(pair.cuda)
        res = resolution(pair, rocm, base)
        out["targets"][short_version(rocm)] = {"status": res.status.value, "target": res.target,
                                               "apply": res.apply, "detail": res.detail}
    return out


def format_pair(desc: dict) -> str:
    lines = [f"project mapping {desc['cuda']} → {desc['hip']} ({desc['range']}), from {desc['origin']}"]
    for version, t in desc["targets"].items():
        lines.append(f"  {version + ':':<7} {t['status']}" + (" (applied)" if t["apply"] else "")
                     + f" — {t['detail']}")
    return "\n".join(lines)
