"""HIP runtime header sets of real releases, built once from registry packages.

Debian's hipcc is HIP 5.2, older than both targets, so checking a 6.3 or 7.2.1 conversion
with it mostly reports "header too old". AMD's HIP runtime headers of 6.2 and 7.1 ship
inside Triton's wheels on PyPI, and a stock clang (19 or newer) syntax-checks HIP against
them. ``mappings/hip_header_sets.toml`` names the wheels; ``fetch`` downloads each with
``pip download`` (the only network access hipport ever makes, and only when asked),
extracts the include directory alone and keeps it under hipport's cache::

    <cache>/hip-headers/<version>/include/...          the wheel's headers (+ fill, stubs)
    <cache>/hip-headers/<version>/share/hip/version    HIP_VERSION_MAJOR=... (clang reads it)
    <cache>/hip-headers/<version>/share/hip/hipport-filled-from   what came from an older set
    <cache>/hip-headers/<version>/share/hip/hipport-manifest      every file's hash, HMAC'd

A set is used only when every file is the one its manifest lists (``header_manifest``):
the cache folder may be shared or restored, and a planted header would make verify lie.

Without ``share/hip/version`` clang assumes HIP 3.5 and does not pre-include its HIP
runtime wrapper; the stubs keep headers that exist only in Debian's 5.2 tree from being
found silently behind the set (clang searches /usr/include after it).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hipport import header_manifest
from hipport.cachefile import key_file
from hipport.datafiles import cache_dir, mappings
from hipport.versions import Version, format_version, parse_version

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

VERSION_FILE = Path("share") / "hip" / "version"
#: First line: the version of the set that filled this one; then the filled paths.
FILL_FILE = Path("share") / "hip" / "hipport-filled-from"
_WORD = re.compile(r"[A-Za-z_]\w*")
_VERSION_LINE = re.compile(r"^\s*HIP_VERSION_(MAJOR|MINOR|PATCH)\s*=\s*(\d+)", re.M)
_VERSION_DEFINE = re.compile(r"^\s*#\s*define\s+HIP_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)", re.M)
#: pip's own timeout for the whole download of one wheel (~170-290 MB).
PIP_TIMEOUT = 1800


class HeaderError(RuntimeError):
    """A header set could not be built or read: the CLI prints it and exits 2."""


@dataclass(frozen=True)
class SetSpec:
    """One buildable header set, from ``mappings/hip_header_sets.toml``."""

    version: Version  # full HIP version, e.g. (7, 1, 25424)
    package: str  # pip requirement of the wheel that carries it
    fill_from: Version | None = None  # set whose files fill this one's gaps
    digest: str | None = None  # header_manifest.digest of the set as built: adopts a set
    # built before manifests existed without a download


@dataclass(frozen=True)
class Catalogue:
    sets: tuple[SetSpec, ...]
    member: str  # the directory inside the wheel
    platform: str
    python_version: str
    stubs: tuple[str, ...]


@dataclass(frozen=True)
class HeaderSet:
    """A ROCm-like root: ``include/`` and ``share/hip/version``.

    ``filled_from`` is the older set whose files filled this one's gaps (``filled``, paths
    under ``include/``): what those files lack is the older release's absence, not this one's.
    """

    root: Path
    version: Version
    filled_from: Version | None = None
    filled: frozenset[str] = frozenset()

    @property
    def include(self) -> Path:
        return self.root / "include"

    @property
    def label(self) -> str:
        return f"HIP {format_version(self.version)}"


def catalogue() -> Catalogue:
    data = tomllib.loads(mappings().joinpath("hip_header_sets.toml").read_text(encoding="utf-8"))
    sets = tuple(SetSpec(parse_version(s["version"]), s["package"],
                         parse_version(s["fill_from"]) if s.get("fill_from") else None,
                         s.get("digest"))
                 for s in data["set"])
    return Catalogue(sets, data["member"], data["platform"], data["python_version"],
                     tuple(data.get("stubs", ())))


def default_root() -> Path:
    return cache_dir() / "hip-headers"


# -- reading sets ------------------------------------------------------------------------

def parse_version_text(text: str, pattern: re.Pattern = _VERSION_LINE) -> Version | None:
    """``HIP_VERSION_MAJOR=7`` lines (or ``#define HIP_VERSION_MAJOR 7``) → (7, 1, 25424)."""
    found = dict(pattern.findall(text))
    if "MAJOR" not in found or "MINOR" not in found:
        return None
    return (int(found["MAJOR"]), int(found["MINOR"]), int(found.get("PATCH", 0)))


def load(root: Path) -> HeaderSet | None:
    """The set at ``root`` when it has a version file and ``include/hip/hip_runtime.h``."""
    try:
        version = parse_version_text((root / VERSION_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if version is None or not (root / "include" / "hip" / "hip_runtime.h").is_file():
        return None
    try:
        first, *files = (root / FILL_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        return HeaderSet(root, version)
    try:
        return HeaderSet(root, version, parse_version(first), frozenset(files))
    except ValueError:
        return HeaderSet(root, version)


def own_words(hs: HeaderSet) -> frozenset[str]:
    """Every identifier spelled in the set's own files (not the filled ones)."""
    words: set[str] = set()
    for path in hs.include.rglob("*"):
        rel = path.relative_to(hs.include).as_posix()
        if path.is_file() and rel not in hs.filled:
            words.update(_WORD.findall(path.read_text(encoding="utf-8", errors="replace")))
    return frozenset(words)


def installed(root: Path | None = None) -> list[HeaderSet]:
    """Every complete set under ``root`` (default: the cache), oldest first."""
    root = root or default_root()
    try:
        dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return sorted((s for s in map(load, dirs) if s is not None), key=lambda s: s.version)


def problem(hs: HeaderSet, root: Path | None = None) -> str | None:
    """Why the cached set ``hs`` (under ``root``, default the cache) must not be used, or
    None: ``header_manifest.problem``, adopting a set the catalogue pins."""
    pinned = next((s.digest for s in catalogue().sets if s.version == hs.version), None)
    return header_manifest.problem(hs.root, root or default_root(), pinned)


def nearest(sets: Iterable[HeaderSet], target: Version) -> HeaderSet | None:
    """The set closest to ``target`` on major.minor; on a tie the older (a stand-in that
    lacks a newer API says so, one that has APIs the target lacks would hide errors)."""
    def distance(s: HeaderSet) -> tuple[int, bool]:
        here, want = s.version[0] * 100 + s.version[1], target[0] * 100 + target[1]
        return abs(here - want), here > want
    return min(sets, key=distance, default=None)


# -- building sets -----------------------------------------------------------------------

def extract_member(wheel: Path, member: str, dest: Path) -> int:
    """Write the regular files under ``member`` of the wheel (a zip) into ``dest``.

    Names are checked before anything is written: an absolute path, a ``..`` part or a
    symbolic link is refused, so a hostile archive cannot write outside ``dest``.
    """
    count = 0
    try:
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                if not info.filename.startswith(member) or info.is_dir():
                    continue
                rel = PurePosixPath(info.filename[len(member):])
                if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                    raise HeaderError(f"{wheel}: unsafe member name {info.filename!r}")
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise HeaderError(f"{wheel}: {info.filename} is a symbolic link")
                out = dest.joinpath(*rel.parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                count += 1
    except (zipfile.BadZipFile, OSError) as e:
        raise HeaderError(f"{wheel}: cannot read the wheel: {e}") from e
    return count


def build(spec: SetSpec, wheel: Path, cat: Catalogue, root: Path,
          fill: HeaderSet | None = None) -> HeaderSet:
    """Build the set of ``spec`` from ``wheel`` under ``root``/<version>, replacing it whole.

    Built in a temporary directory beside the destination and renamed into place, so a
    half-built set is never seen by ``installed``.
    """
    root.mkdir(parents=True, exist_ok=True)
    name = format_version(spec.version)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        include = tmp / "include"
        if extract_member(wheel, cat.member, include) == 0:
            raise HeaderError(f"{wheel}: no files under {cat.member}")
        try:
            found = parse_version_text((include / "hip" / "hip_version.h").read_text(encoding="utf-8"),
                                       _VERSION_DEFINE)
        except OSError:
            found = None
        if found != spec.version:
            raise HeaderError(f"{wheel}: hip/hip_version.h says HIP "
                              f"{format_version(found) if found else '(none)'}, expected {name}")
        for stub in cat.stubs:
            path = include.joinpath(*PurePosixPath(stub).parts)
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f'#error "<{stub}> is not part of the HIP {name} headers '
                                '(it exists only in older HIP releases)"\n', encoding="utf-8")
        if fill is not None:
            filled = _fill(include, fill.include)
            (tmp / FILL_FILE).parent.mkdir(parents=True, exist_ok=True)
            (tmp / FILL_FILE).write_text("\n".join([format_version(fill.version), *filled]) + "\n",
                                         encoding="utf-8")
        (tmp / VERSION_FILE).parent.mkdir(parents=True, exist_ok=True)
        major, minor, patch = spec.version[:3]
        (tmp / VERSION_FILE).write_text(f"HIP_VERSION_MAJOR={major}\nHIP_VERSION_MINOR={minor}\n"
                                        f"HIP_VERSION_PATCH={patch}\n", encoding="utf-8")
        if not header_manifest.write(tmp, root, name):
            raise HeaderError(f"no usable cache key ({key_file()}) to sign the HIP {name} set "
                              "with: it must be a private file of this user, outside the cache")
        final = root / name
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}-old-", dir=root))
            final.rename(old / name)
            shutil.rmtree(old)
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    built = load(final)
    if built is None:
        raise HeaderError(f"{final}: built set has no include/hip/hip_runtime.h")
    return built


#: ``build``'s temporary folders (``.7.1.25424-x1y2``, ``.7.1.25424-old-x1y2``).
_BUILD_TEMPORARY = re.compile(r"\.\d+\.\d+\.\d+-(?:old-)?[\w]+")
#: A build temporary older than this is left from a killed fetch (a build takes seconds).
STALE_BUILD_SECONDS = 3600


def remove_stale_builds(root: Path, now: float | None = None) -> int:
    """Delete the temporary folders of builds killed mid-way (``installed`` never reads
    them, but each holds a set's worth of files); the number removed. A link is removed,
    not followed."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = [e for e in os.scandir(root) if _BUILD_TEMPORARY.fullmatch(e.name)]
    except OSError:
        return 0
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if now - st.st_mtime < STALE_BUILD_SECONDS:
            continue  # another fetch may be building it now
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            os.unlink(e.path)
        removed += 1
    return removed


def _fill(include: Path, source: Path) -> list[str]:
    """Copy every file of ``source`` that ``include`` lacks (same relative path); the
    copied paths, relative, sorted."""
    copied = []
    for dirpath, _, filenames in os.walk(source):
        for f in filenames:
            src = Path(dirpath) / f
            rel = src.relative_to(source)
            dst = include / rel
            if not dst.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                copied.append(rel.as_posix())
    return sorted(copied)


def download(spec: SetSpec, cat: Catalogue, into: Path) -> Path:
    """``pip download`` the wheel of ``spec`` into ``into``; the path of the wheel."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--platform", cat.platform, "--python-version", cat.python_version,
           "--implementation", "cp", "--disable-pip-version-check", "-q", "-d", str(into),
           spec.package]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HeaderError(f"pip download {spec.package} failed: {e}") from e
    wheels = sorted(into.glob("*.whl"))
    if out.returncode != 0 or not wheels:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        raise HeaderError(f"pip download {spec.package} failed: " + " / ".join(tail))
    return wheels[0]


def fetch(*, root: Path | None = None, wheels: dict[Version, Path] | None = None,
          force: bool = False, echo: Callable[[str], None] = lambda _: None) -> list[HeaderSet]:
    """Build every catalogued set not yet under ``root``; ``wheels`` gives local wheels for
    some versions instead of downloading them. Sets a later one fills from come first."""
    cat = catalogue()
    root = root or default_root()
    wheels = wheels or {}
    remove_stale_builds(root)
    done: dict[Version, HeaderSet] = {s.version: s for s in installed(root)}
    order = sorted(cat.sets, key=lambda s: s.fill_from is not None)
    for spec in order:
        if spec.version in done and not force:
            why = problem(done[spec.version], root)
            if why is None:
                echo(f"{done[spec.version].label} headers: already in {done[spec.version].root}")
                continue
            echo(f"{done[spec.version].label} headers in {done[spec.version].root} are not used "
                 f"({why}): building them again")
        fill = done.get(spec.fill_from) if spec.fill_from else None
        if spec.fill_from and fill is None:
            raise HeaderError(f"HIP {format_version(spec.version)} is filled from HIP "
                              f"{format_version(spec.fill_from)}, which is not built")
        if spec.version in wheels:
            built = build(spec, wheels[spec.version], cat, root, fill)
        else:
            echo(f"downloading {spec.package} (HIP {format_version(spec.version)} headers) "
                 "with pip; only its headers are kept")
            with tempfile.TemporaryDirectory(prefix="hipport-wheel-") as d:
                built = build(spec, download(spec, cat, Path(d)), cat, root, fill)
        echo(f"{built.label} headers: built in {built.root}")
        done[spec.version] = built
    return [done[s.version] for s in cat.sets if s.version in done]
