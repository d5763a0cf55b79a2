"""``hipport sync``: keep generated HIP twins of CUDA sources up to date, formatter-style.

Some projects keep a converted HIP copy of each CUDA source in the tree (so the AMD build
needs no hipport). The twins are declared in ``[tool.hipport.sync]`` of pyproject.toml,
paths relative to that file::

    [tool.hipport.sync]
    pairs = [["src/kernels/a.cu", "hip/a.hip"]]   # one source → one twin
    dirs = [["src/cuda", "src/hip"]]              # every source under src/cuda, mirrored
    rename = { ".cu" = ".hip", ".cuh" = ".h" }     # optional suffix changes for dirs twins

Each twin is regenerated with ``convert``'s pipeline and the ``[tool.hipport]`` target; a
twin that differed is rewritten in place and the run fails, so pre-commit stops the commit
and the regenerated file is there to stage — the convention of code formatters. Given
file names (pre-commit passes the staged ones) only the twins of those sources, or those
twins themselves (a hand edit is overwritten), are regenerated; with none, all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hipport.options import ConfigError, Options, read_project_config


@dataclass(frozen=True)
class Twin:
    source: Path
    twin: Path


def display(path: Path) -> str:
    """``path`` relative to the working directory when inside it (how pre-commit names files)."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class SyncResult:
    twin: Twin
    status: str  # unchanged | regenerated | error
    error: str = ""


def read_twins(config: Path, options: Options) -> list[Twin]:
    """Every declared (source, twin) pair; ConfigError names the file and the bad value."""
    from hipport.files import FileError, discover

    table = read_project_config(config).get("sync")
    where = f"{config}: [tool.hipport.sync]"
    if not isinstance(table, dict):
        raise ConfigError(f"{config}: no [tool.hipport.sync] table declaring the HIP twins")
    base = config.parent
    twins = [Twin(base / s, base / t) for s, t in _pairs(table, "pairs", where)]
    rename = table.get("rename", {})
    if not isinstance(rename, dict) or not all(isinstance(v, str) for v in rename.values()):
        raise ConfigError(f"{where}: rename must be a table of \".suffix\" = \".suffix\"")
    for src, dst in _pairs(table, "dirs", where):
        src_dir, dst_dir = base / src, base / dst
        if not src_dir.is_dir():
            raise ConfigError(f"{where}: dirs: {src} is not a directory")
        for item in discover([src_dir], options):
            if isinstance(item, FileError):
                if item.skipped:  # a FIFO or a link out of the tree: not a source to twin
                    continue
                raise ConfigError(f"{where}: dirs: {item.path}: {item.message}")
            if item.is_source:
                rel = item.rel.with_suffix(rename.get(item.rel.suffix, item.rel.suffix))
                twins.append(Twin(item.path, dst_dir / rel))
    return twins


def _pairs(table: dict, key: str, where: str) -> list[tuple[str, str]]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value
    ):
        raise ConfigError(f"{where}: {key} must be a list of [\"source\", \"twin\"] pairs")
    return [(s, t) for s, t in value]


def select(twins: list[Twin], paths: Iterable[Path]) -> list[Twin]:
    """The twins touched by ``paths`` (as source or as twin); all of them when none given."""
    wanted = {p.resolve() for p in paths}
    if not wanted:
        return twins
    return [t for t in twins if t.source.resolve() in wanted or t.twin.resolve() in wanted]


def regenerate(twin: Twin, options: Options) -> SyncResult:
    """Convert the source and write the twin when its bytes differ."""
    from hipport.files import SourceFile, atomic_write
    from hipport.pipeline import process

    if not twin.source.is_file():
        return SyncResult(twin, "error", f"{twin.source}: source of {twin.twin} not found")
    sf = SourceFile(twin.source, Path(twin.source.name), twin.source.parent, is_source=True)
    result = process(sf, options.with_(apply_fixes=True))
    if result.status == "error":
        return SyncResult(twin, "error", f"{twin.source}: {result.error}")
    data = result.output if result.output is not None else twin.source.read_bytes()
    try:
        changed = atomic_write(twin.twin, data, mode_from=twin.source)
    except OSError as e:
        return SyncResult(twin, "error", f"{twin.twin}: cannot write: {e.strerror or e}")
    return SyncResult(twin, "regenerated" if changed else "unchanged")


def exit_status(results: Iterable[SyncResult]) -> int:
    """2 when a twin could not be made, 1 when one was rewritten (stage it), else 0."""
    statuses = {r.status for r in results}
    return 2 if "error" in statuses else 1 if "regenerated" in statuses else 0
