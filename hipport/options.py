"""Everything a run can be told, as one immutable value.

``cli`` builds it from flags; ``load_project_config`` folds in ``[tool.hipport]`` from the
scanned project's pyproject.toml (flags win). Every stage below reads only this value, so
a stage can be called from tests or from the process pool without a command line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from hipport.findings import Severity
from hipport.versions import DEFAULT_ROCM, Version, parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_EXTENSIONS: tuple[str, ...] = (
    ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc",
)

#: Macros that mean "this branch is compiled for HIP"; projects add their own.
DEFAULT_HIP_GUARDS: tuple[str, ...] = (
    "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__", "USE_ROCM",
    "__HIP_DEVICE_COMPILE__",
)


class ConfigError(ValueError):
    """A bad ``[tool.hipport]`` value or flag; the CLI turns it into exit status 2."""


@dataclass(frozen=True)
class Options:
    rocm: Version = parse_version(DEFAULT_ROCM)
    launch_syntax: str = "cuda"  # "cuda" keeps <<<>>>; "hip" writes hipLaunchKernelGGL
    roc: bool = False  # map math libraries to roc* where the tables give a ROC name
    experimental: bool = False  # apply mappings HIPIFY marks experimental
    apply_fixes: bool = False  # True in convert: safe mechanical fixes are applied
    fail_on: Severity = Severity.HIGH
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    exclude: tuple[str, ...] = ()
    hip_guards: tuple[str, ...] = DEFAULT_HIP_GUARDS
    ignore: frozenset[str] = frozenset()
    severity_overrides: dict[str, Severity] = field(default_factory=dict, hash=False)
    jobs: int = 0  # 0: one per CPU
    #: "clang" adds libclang's deep findings (hipport.deep) to tree-sitter's; needs hipport[clang].
    engine: str = "tree-sitter"
    compile_commands: Path | None = None  # -p: compile_commands.json, or the directory holding it
    clang_args: tuple[str, ...] = ()  # --clang-arg, after the compile database's flags

    def with_(self, **changes) -> "Options":
        return replace(self, **changes)

    def cache_key(self) -> str:
        """What makes two runs' findings for the same bytes differ (for check's cache)."""
        overrides = ",".join(f"{k}={v}" for k, v in sorted(self.severity_overrides.items()))
        return "|".join([
            ".".join(map(str, self.rocm)), self.launch_syntax, str(self.roc),
            str(self.experimental), str(self.apply_fixes), ",".join(self.hip_guards),
            ",".join(sorted(self.ignore)), overrides, self.engine, str(self.compile_commands or ""),
            " ".join(self.clang_args),
        ])


def find_project_config(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.hipport]`` table."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if "hipport" in data.get("tool", {}):
                return candidate
    return None


def read_project_config(path: Path) -> dict:
    """The ``[tool.hipport]`` table of ``path``; raise ConfigError naming the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    return data.get("tool", {}).get("hipport", {})


def apply_project_config(opts: Options, table: dict, source: Path, explicit: set[str]) -> Options:
    """Fold a ``[tool.hipport]`` table into ``opts``; names in ``explicit`` came from flags and win.

    Keys: rocm, launch-syntax, roc, experimental, fail-on, extensions, exclude, hip-guards
    (added to the defaults), ignore (rule codes), severity (code → severity). Other keys
    (such as ``sync``, read by ``check``) are left to their readers.
    """
    changes: dict = {}

    def want(key: str, attr: str) -> bool:
        return key in table and attr not in explicit

    try:
        if want("rocm", "rocm"):
            changes["rocm"] = parse_version(str(table["rocm"]))
        if want("launch-syntax", "launch_syntax"):
            if table["launch-syntax"] not in ("cuda", "hip"):
                raise ValueError("launch-syntax must be 'cuda' or 'hip'")
            changes["launch_syntax"] = table["launch-syntax"]
        for key, attr in (("roc", "roc"), ("experimental", "experimental")):
            if want(key, attr):
                if not isinstance(table[key], bool):
                    raise ValueError(f"{key} must be true or false")
                changes[attr] = table[key]
        if want("fail-on", "fail_on"):
            changes["fail_on"] = Severity.parse(str(table["fail-on"]))
        if want("extensions", "extensions"):
            changes["extensions"] = tuple(_str_list(table, "extensions"))
        if "exclude" in table:
            changes["exclude"] = opts.exclude + tuple(_str_list(table, "exclude"))
        if "hip-guards" in table:
            changes["hip_guards"] = opts.hip_guards + tuple(_str_list(table, "hip-guards"))
        if "ignore" in table:
            changes["ignore"] = opts.ignore | frozenset(c.upper() for c in _str_list(table, "ignore"))
        if "severity" in table:
            sev = table["severity"]
            if not isinstance(sev, dict):
                raise ValueError("severity must be a table of CODE = \"level\"")
            merged = {k.upper(): Severity.parse(str(v)) for k, v in sev.items()}
            merged.update(opts.severity_overrides)
            changes["severity_overrides"] = merged
    except ValueError as e:
        raise ConfigError(f"{source}: [tool.hipport]: {e}") from e
    return replace(opts, **changes)


def _str_list(table: dict, key: str) -> list[str]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings")
    return value
