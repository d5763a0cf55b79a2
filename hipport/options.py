"""Everything a run can be told, as one immutable value, and the one table that says how.

``FIELDS`` lists every option once: the ``Options`` attribute it sets, its command-line
flag, its ``[tool.hipport]`` key, the parser that turns a flag's text or a TOML value into
the attribute's value, and how a flag and the config combine (``replace``: the flag wins;
``extend``: defaults, then config, then flags). ``cli`` derives the click flags from it and
``resolve`` reads ``[tool.hipport]`` with it, so a key and its flag cannot drift apart
(``extensions = ["cu"]`` and ``--extensions cu`` both mean ``.cu``), and a key the table
does not know is an error naming the closest one.

Adding an option is one ``Options`` attribute and one ``Field`` row. Every stage below the
CLI reads only the ``Options`` value, so a stage can be called from tests or from the
process pool without a command line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hipport.findings import Severity
from hipport.versions import DEFAULT_ROCM, Version, parse_version

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


def code_prefix(code: str) -> str:
    """A rule code or family as the prefix it selects: ``hp2xx`` → ``HP2``, ``HP201`` → ``HP201``."""
    return code.strip().upper().rstrip("X")


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
    #: Rule-code prefixes (``HP2`` for HP2xx, ``HP201``) not reported; see ``code_prefix``.
    ignore: frozenset[str] = frozenset()
    #: When not empty, only rules under these prefixes are reported (then ``ignore`` applies).
    select: frozenset[str] = frozenset()
    severity_overrides: dict[str, Severity] = field(default_factory=dict, hash=False)
    jobs: int = 0  # 0: one per usable CPU (pipeline.effective_jobs)
    #: "clang" adds libclang's deep findings (hipport.deep) to tree-sitter's; needs hipport[clang].
    engine: str = "tree-sitter"
    compile_commands: Path | None = None  # -p: compile_commands.json, or the directory holding it
    clang_args: tuple[str, ...] = ()  # --clang-arg, after the compile database's flags
    #: Follow symlinked directories that lead out of an input (for reading; writes never leave it).
    follow_symlinks: bool = False
    gitignore: bool = True  # walking a tree skips what its .gitignore files ignore
    #: Project CUDA→HIP pairs from [tool.hipport.mappings] (hipport.usermaps.UserMapping).
    mappings: tuple = ()
    #: --offload-arch: the GPUs the HIP build targets (empty: the default, gpus.DEFAULT_ARCHS)
    offload_arch: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # -D NAME[=VALUE] / [tool.hipport] defines, for #if branches
    undefines: tuple[str, ...] = ()  # -U NAME / [tool.hipport] undefines: not defined by the HIP build
    #: -I DIR / [tool.hipport] include-dirs: where the build finds ``#include "name"`` headers
    #: (the branch model's project-header search; verify's compiler)
    include_dirs: tuple[Path, ...] = ()
    all_branches: bool = False  # also report, as info, findings in branches HIP never compiles
    #: --rename: .cu files are written as .hip, and build files and includes name them so
    rename: bool = False
    #: Names of a bundled library (``families.toml``: ``bundled``, CUB) that a source of the
    #: run outside a copy of it ``#define``s: the tree's own, so no file renames them; and
    #: the copies of such libraries in the run's trees (directories, as discovery names
    #: them), left as they are. Set by the run (``pipeline.tree_definitions``), not by a flag.
    tree_macros: frozenset[str] = frozenset()
    bundled_copies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Codes are matched as prefixes however they were written (HP2XX, hp2, HP201).
        for name in ("ignore", "select"):
            object.__setattr__(self, name, frozenset(code_prefix(c) for c in getattr(self, name)))

    def with_(self, **changes) -> "Options":
        return replace(self, **changes)

    def reports(self, code: str) -> bool:
        """Whether findings of rule ``code`` are kept: inside ``select`` (if any), outside ``ignore``."""
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)

    def cache_key(self) -> str:
        """What makes two runs' findings for the same bytes differ (for check's cache)."""
        overrides = ",".join(f"{k}={v}" for k, v in sorted(self.severity_overrides.items()))
        return "|".join([
            ".".join(map(str, self.rocm)), self.launch_syntax, str(self.roc),
            str(self.experimental), str(self.apply_fixes), ",".join(self.hip_guards),
            ",".join(sorted(self.ignore)), ",".join(sorted(self.select)), overrides, self.engine,
            str(self.compile_commands or ""), " ".join(self.clang_args),
            ";".join(f"{m.cuda}={m.hip}@{m.since}..{m.until}" for m in self.mappings),
            ",".join(self.offload_arch), " ".join(self.defines), " ".join(self.undefines),
            "|".join(map(str, self.include_dirs)), str(self.all_branches),
            str(self.rename), ",".join(sorted(self.tree_macros)), "|".join(self.bundled_copies),
        ])


# -- parsers: one raw value (a flag's text, or a TOML value) → the attribute's value ------

def _version(value: Any) -> Version:
    return parse_version(str(value))


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _choice(*allowed: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(map(repr, allowed))} (not {value!r})")
        return value
    return parse


def _severity(value: Any) -> Severity:
    return Severity.parse(str(value))


def _items(value: Any) -> list[str]:
    """A TOML list of strings, a repeated flag's tuple, or comma-separated text (in either)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of strings")
    return [part.strip() for v in value for part in v.split(",") if part.strip()]


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):  # repeated flags and TOML lists: no comma splitting
        if not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of strings")
        return tuple(value)
    return (str(value),)


def _extensions(value: Any) -> tuple[str, ...]:
    return tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in _items(value))


def _codes(value: Any) -> frozenset[str]:
    return frozenset(code_prefix(c) for c in _items(value))


def _severity_table(value: Any) -> dict[str, Severity]:
    if not isinstance(value, dict):
        raise ValueError('must be a table of CODE = "level"')
    return {k.upper(): Severity.parse(str(v)) for k, v in value.items()}


def _jobs(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("must be a whole number (0: one per CPU)")
    n = int(value)
    if n < 0:
        raise ValueError("must be 0 or more")
    return n


def _path(value: Any) -> Path:
    return Path(str(value))


def _dirs(value: Any) -> tuple[Path, ...]:
    return tuple(Path(v) for v in _strings(value))


def _archs(value: Any) -> tuple[str, ...]:
    from hipport.gpus import parse_archs  # the GPU table is data: read only when asked

    return parse_archs(_items(value))


def _undefines(value: Any) -> tuple[str, ...]:
    out = []
    for text in _strings(value):
        if not text.strip().isidentifier():
            raise ValueError(f"{text!r} is not a macro NAME")
        out.append(text.strip())
    return tuple(out)


def _defines(value: Any) -> tuple[str, ...]:
    out = []
    for text in _strings(value):
        if not text.partition("=")[0].strip().isidentifier():
            raise ValueError(f"{text!r} is not NAME or NAME=VALUE")
        out.append(text.strip())
    return tuple(out)


# -- the table -----------------------------------------------------------------------

#: Command groups, for ``Field.commands``.
SOURCES = ("convert", "scan", "check")
TARGETED = (*SOURCES, "verify", "sync")


@dataclass(frozen=True)
class Field:
    """One option: where it comes from (flag, key), how it is read and how sources combine.

    ``kind`` decides the flag's shape: ``value`` takes an argument, ``switch`` is a boolean
    flag that sets True, ``off`` one that sets False (``--no-gitignore``), ``multiple`` is
    repeatable. ``merge`` is ``replace`` (flag over config over default) or ``extend``
    (tuples concatenate, sets unite, tables update; defaults, then config, then flags).
    """

    name: str
    flag: str | None
    key: str | None
    parse: Callable[[Any], Any]
    help: str
    example: str
    merge: str = "replace"
    kind: str = "value"
    short: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    commands: tuple[str, ...] = TARGETED
    #: Paths: a relative one in [tool.hipport] is relative to the file holding the table.
    paths: bool = False


FIELDS: tuple[Field, ...] = (
    Field("rocm", "--rocm", "rocm", _version, metavar="VERSION", commands=(*TARGETED, "deps", "map"),
          help="Target ROCm release (default 7.2.1); 6.3 and 7.2.1 are the releases the rules are "
               "written against, any X.Y[.Z] the tables describe is accepted.",
          example="--rocm 6.3"),
    Field("roc", "--roc", "roc", _boolean, kind="switch", commands=(*TARGETED, "map"),
          help="Map math libraries to roc* (rocBLAS, rocSPARSE…; cuDNN to MIOpen) where the "
               "tables give a ROC name.", example="--roc"),
    Field("experimental", "--experimental", "experimental", _boolean, kind="switch",
          commands=(*TARGETED, "map"),
          help="Also apply mappings HIPIFY marks experimental (otherwise reported, HP105).",
          example="--experimental"),
    Field("launch_syntax", "--launch-syntax", "launch-syntax", _choice("cuda", "hip"),
          choices=("cuda", "hip"), commands=("convert", "sync"),
          help="Keep k<<<...>>>() (cuda, default) or write hipLaunchKernelGGL (hip).",
          example="--launch-syntax hip"),
    Field("fail_on", "--fail-on", "fail-on", _severity, commands=SOURCES,
          choices=("blocker", "high", "medium", "low", "info"),
          help="Exit 1 when a finding is at or above this severity (check: default high; "
               "convert and scan: default never).", example="--fail-on medium"),
    Field("extensions", "--extensions", "extensions", _extensions, metavar=".cu,.cuh,...",
          commands=(*TARGETED, "deps"),
          help="Comma-separated extensions treated as sources, with or without the dot "
               "(default .cu .cuh .c .cc .cpp .cxx .h .hh .hpp .hxx .inl .inc).",
          example="--extensions .cu,.cuh"),
    Field("exclude", "--exclude", "exclude", _strings, merge="extend", kind="multiple",
          metavar="GLOB", help="Skip paths matching GLOB (repeatable; added to the config's).",
          example="--exclude 'third_party/*'"),
    Field("follow_symlinks", "--follow-symlinks", "follow-symlinks", _boolean, kind="switch",
          help="Read symlinked directories that lead out of an input (writes never leave the "
               "roots: --in-place stays in the input, -o in the output tree).",
          example="--follow-symlinks"),
    Field("select", "--select", "select", _codes, metavar="CODES", commands=SOURCES,
          help="Report only these rule codes or prefixes, comma-separated (HP2 or HP2XX: the "
               "warp-size family).", example="--select HP2,HP101"),
    Field("ignore", "--ignore", "ignore", _codes, merge="extend", kind="multiple",
          metavar="CODES", commands=SOURCES,
          help="Do not report these rule codes or prefixes (repeatable or comma-separated; "
               "added to the config's).", example="--ignore HP110 --ignore HP3"),
    Field("severity_overrides", None, "severity", _severity_table, merge="extend",
          commands=SOURCES, help="Per-rule severity, a table of CODE = \"level\".",
          example='severity = { HP104 = "info" }'),
    Field("hip_guards", "--hip-guard", "hip-guards", _strings, merge="extend", kind="multiple",
          metavar="MACRO", help="A project macro meaning 'compiled for HIP' (like GGML_USE_HIP); "
                                "repeatable, added to the built-in ones.",
          example="--hip-guard GGML_USE_HIP"),
    Field("gitignore", "--no-gitignore", "gitignore", _boolean, kind="off",
          help="Also walk into what .gitignore files ignore (by default a tree's .gitignore "
               "files, and its repository's above it, are honoured as git reads them).",
          example="--no-gitignore"),
    Field("jobs", "--jobs", "jobs", _jobs, short="-j", metavar="N",
          help="Worker processes; 0 (the default) is one per CPU this process may use "
               "(affinity and cgroup quota); 1 runs in-process.", example="-j 1"),
    Field("engine", "--engine", None, _choice("tree-sitter", "clang"), commands=SOURCES,
          choices=("tree-sitter", "clang"),
          help="clang adds what only the preprocessor and types show (macro-built API names, "
               "mask types from other headers or templates); needs pip install 'hipport[clang]'.",
          example="--engine clang"),
    Field("compile_commands", "-p", None, _path, metavar="DIR", commands=SOURCES,
          help="With --engine clang: compile_commands.json, or the build directory holding it.",
          example="-p build/"),
    Field("clang_args", "--clang-arg", None, _strings, merge="extend", kind="multiple",
          metavar="ARG", commands=SOURCES,
          help="With --engine clang: an extra compiler flag (repeatable).",
          example="--clang-arg=-Iinclude"),
    Field("offload_arch", "--offload-arch", "offload-arch", _archs, kind="multiple",
          metavar="GFX[,GFX]", commands=(*SOURCES, "verify"),
          help="GPUs the HIP build targets (default gfx942; repeatable or comma-separated; "
               "gfx1100:wave64 for RDNA built for wave64): decides #if branches, LDS per block and "
               "the fp8 encoding; verify checks the first.",
          example="--offload-arch gfx942,gfx950"),
    Field("defines", "--define", "defines", _defines, merge="extend", kind="multiple", short="-D",
          metavar="NAME[=VALUE]", commands=(*SOURCES, "verify"),
          help="A macro the HIP build defines, for deciding #if branches and for verify's "
               "compile (repeatable; added to the config's).", example="-D GGML_CUDA_NO_FA"),
    Field("undefines", "--undefine", "undefines", _undefines, merge="extend", kind="multiple",
          short="-U", metavar="NAME", commands=(*SOURCES, "verify"),
          help="A macro the HIP build does not define, for deciding #if branches and for "
               "verify's compile: another platform's guard, say, which hipport otherwise cannot "
               "tell (repeatable; added to the config's).", example="-U GGML_USE_SYCL"),
    Field("include_dirs", "--include-dir", "include-dirs", _dirs, merge="extend", kind="multiple",
          short="-I", metavar="DIR", commands=(*SOURCES, "verify"), paths=True,
          help="A directory the build searches for #include \"name\" headers (repeatable; added "
               "to the config's): the #if branches follow the project headers found there; verify "
               "compiles with it; with convert --verify, one inside an input tree means its "
               "converted copy.", example="-I csrc/includes"),
    Field("all_branches", "--all-branches", "all-branches", _boolean, kind="switch", commands=SOURCES,
          help="Also report, as info, findings in branches the HIP build never compiles.",
          example="--all-branches"),
    Field("rename", "--rename", "rename", _boolean, kind="switch", commands=SOURCES,
          help="Write .cu files as .hip (in an output tree or in place) and update what names "
               "them: CMake and Make sources, globs and patterns, setup.py sources, "
               "#include \"x.cu\"; a name hipport cannot update surely is reported (HP610).",
          example="--rename"),
)

#: ``[tool.hipport]`` keys read by their own readers, not by ``resolve``.
SECTIONS: dict[str, str] = {
    "sync": "hipport sync's HIP twins (hipport.sync)",
    "mappings": "project CUDA→HIP pairs, or the file holding them (hipport.usermaps)",
}


def fields_for(command: str) -> list[Field]:
    """The table's rows that are flags of ``command``, in table order."""
    return [f for f in FIELDS if f.flag is not None and command in f.commands]


def config_keys() -> list[str]:
    return [f.key for f in FIELDS if f.key is not None] + list(SECTIONS)


# -- resolving: defaults, then [tool.hipport], then flags ----------------------------

def resolve(flags: Mapping[str, Any], table: Mapping[str, Any] | None = None,
            source: Path | None = None, **fixed: Any) -> Options:
    """Options from ``fixed`` values, the ``[tool.hipport]`` table and the flags given.

    ``flags`` maps attribute names to raw flag values, only for flags the user gave (a
    switch given is True, a ``--no-…`` switch is False). Unknown config keys and bad values
    raise ConfigError naming ``source``, the key and, for a misspelt key, the closest one.
    """
    opts = Options(**fixed)
    table = table or {}
    where = f"{source}: [tool.hipport]" if source is not None else "[tool.hipport]"
    for key in table:
        if key not in config_keys():
            from hipport.suggest import closest

            hint = closest(key, config_keys())
            raise ConfigError(f"{where}: unknown key {key!r}" + (f"; did you mean {hint!r}?" if hint else ""))
    changes: dict[str, Any] = {}
    for f in FIELDS:
        value = getattr(opts, f.name)
        if f.key is not None and f.key in table:
            try:
                parsed = f.parse(table[f.key])
                if f.paths and source is not None:  # relative to the pyproject.toml
                    parsed = tuple(source.parent / p for p in parsed)
                value = _combine(f, value, parsed)
            except ValueError as e:
                raise ConfigError(f"{where}: {f.key} {e}" if str(e).startswith("must")
                                  else f"{where}: {f.key}: {e}") from e
        if f.name in flags:
            try:
                value = _combine(f, value, f.parse(flags[f.name]))
            except ValueError as e:
                raise ConfigError(f"{f.flag or f.name} {e}" if str(e).startswith("must")
                                  else f"{f.flag or f.name}: {e}") from e
        changes[f.name] = value
    return replace(opts, **changes)


def _combine(f: Field, old: Any, new: Any) -> Any:
    if f.merge == "replace":
        return new
    if isinstance(old, tuple):
        return old + tuple(new)
    if isinstance(old, frozenset):
        return old | new
    return {**old, **new}


def toml_module():
    """tomllib, or tomli on Python 3.10; imported on first use (start-up time)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def find_project_config(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.hipport]`` table."""
    here = Path(os.path.realpath(start))  # never raises: a looping link is reported later
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            tomllib = toml_module()  # only where there is one: the import costs ~3 ms
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, RecursionError, tomllib.TOMLDecodeError):
                continue  # (RecursionError: 100,000 nested "[", as invalid as any other)
            if "hipport" in data.get("tool", {}):
                return candidate
    return None


def read_project_config(path: Path) -> dict:
    """The ``[tool.hipport]`` table of ``path``; raise ConfigError naming the file."""
    tomllib = toml_module()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from e
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply for the TOML parser") from None
    table = data.get("tool", {}).get("hipport", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.hipport must be a table")
    return table
