"""Finding, classifying, reading and (atomically) writing files.

The only module that touches the disk for writing. Everything here is careful in the
same ways: errors are values naming the file (the run goes on), output paths stay inside
the output directory, writes go to a temporary file that is renamed into place, and an
existing backup is never overwritten (it holds the oldest original).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hipport.options import Options

#: Directories that are never part of a source tree.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox"})
BACKUP_SUFFIX = ".prehip"

#: Byte-level pre-filter: a file with none of these cannot hold anything hipport rewrites
#: or reports, so it is not parsed. Broad on purpose (a false hit costs one parse; a miss
#: would hide a finding): CUDA names and headers, kernel qualifiers and built-ins, warp
#: vocabulary, inline asm, and the CUDA-only libraries the rules know.
_CUDA_HINT = re.compile(
    rb"cuda|CUDA|cu[A-Z]|CU_|__global__|__device__|__shared__|__constant__|__managed__"
    rb"|__forceinline__|__launch_bounds__|<<<|threadIdx|blockIdx|blockDim|gridDim"
    rb"|[wW]arp|WARP|__shfl|__ballot|__activemask|__any|__all|__popc|__ffs|__clz|__brev"
    rb"|__sync|__reduce|__match|__ldg|__threadfence|__trap|__nanosleep|__prof|clock"
    rb"|__AMDGCN|asm|cub|thrust|nvcuda|nvrtc|nccl|nvtx|Nv[A-Z]|nvinfer|cutlass|cute"
    rb"|cublas|curand|cufft|cusparse|cusolver|cudnn|cutensor|cufile|cooperative_groups"
    rb"|texture|surf[0-9A-Z]|tex[0-9A-Z]|half|__nv_|bfloat16|fp8|mma|__half|__float"
)


@dataclass(frozen=True)
class SourceFile:
    """A file found under an input: ``rel`` is its path relative to that input's root."""

    path: Path
    rel: Path
    root: Path
    is_source: bool  # True: converted/scanned; False: copied as it is by convert


@dataclass(frozen=True)
class FileError:
    path: Path
    message: str


def looks_like_cuda(data: bytes) -> bool:
    return _CUDA_HINT.search(data) is not None


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def is_excluded(rel: Path, patterns: Iterable[str]) -> bool:
    """fnmatch against the relative POSIX path and each of its parent directories."""
    posix = rel.as_posix()
    parts = rel.parts
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(posix, pat) or any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
        if any(fnmatch.fnmatch("/".join(parts[: i + 1]), pat) for i in range(len(parts))):
            return True
    return False


def discover(
    inputs: Iterable[Path], options: Options, *, avoid: Path | None = None
) -> Iterator[SourceFile | FileError]:
    """Every file under ``inputs`` in a deterministic order, or an error value per bad path.

    Directories are walked sorted; symlinked directories are followed once (a loop is
    reported, not followed); ``avoid`` (the output directory) is never entered.
    """
    exts = tuple(e.lower() for e in options.extensions)
    avoid_real = avoid.resolve() if avoid is not None else None
    for inp in inputs:
        if not inp.exists() and not inp.is_symlink():
            yield FileError(inp, "no such file or directory")
            continue
        if inp.is_file():
            yield SourceFile(inp, Path(inp.name), inp.parent, inp.suffix.lower() in exts)
            continue
        if not inp.is_dir():
            yield FileError(inp, "not a regular file or directory (broken link?)")
            continue
        yield from _walk(inp, exts, options.exclude, avoid_real)


def _walk(root: Path, exts: tuple[str, ...], exclude: tuple[str, ...], avoid: Path | None):
    seen_dirs: set[Path] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            real = d.resolve(strict=True)
        except (OSError, RuntimeError) as e:
            yield FileError(d, f"cannot resolve directory: {e}")
            continue
        if real in seen_dirs:
            yield FileError(d, "symlink loop: directory already visited")
            continue
        if avoid is not None and real == avoid:
            continue
        seen_dirs.add(real)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            yield FileError(d, f"cannot list directory: {e.strerror or e}")
            continue
        subdirs = []
        for entry in entries:
            p = Path(entry.path)
            rel = p.relative_to(root)
            if exclude and is_excluded(rel, exclude):
                continue
            try:
                if entry.is_dir():
                    if entry.name not in SKIP_DIRS:
                        subdirs.append(p)
                    continue
                if not entry.is_file():
                    if entry.is_symlink():
                        yield FileError(p, "broken symbolic link")
                    continue
            except OSError as e:
                yield FileError(p, f"cannot stat: {e.strerror or e}")
                continue
            if p.name.endswith(BACKUP_SUFFIX):
                continue
            yield SourceFile(p, rel, root, p.suffix.lower() in exts)
        stack.extend(reversed(subdirs))


def read_bytes(path: Path) -> bytes:
    """Read a whole file; OSError propagates to the caller, which records it per file."""
    with open(path, "rb") as f:
        return f.read()


@lru_cache(maxsize=4096)
def _resolved_dir(directory: str) -> str:
    return os.path.realpath(directory)


def resolved(path: Path) -> Path:
    """``path.resolve()`` through its directory, which many files share (a tree of 100,000
    files would otherwise pay tens of thousands of lstat calls). The last component is
    not followed: writes replace a symlink there rather than write through it."""
    return Path(_resolved_str(path))


def _resolved_str(path: Path) -> str:
    return os.path.join(_resolved_dir(os.path.dirname(os.path.abspath(path))), path.name)


def output_path(out_root: Path, rel: Path) -> Path:
    """``out_root / rel``, refusing anything that would land outside ``out_root``.

    Compared as strings: ``Path.parents`` builds a path object per ancestor, which cost
    more than converting a small file."""
    path = out_root / rel
    target = _resolved_str(path)
    root = _resolved_dir(os.path.abspath(out_root))
    if target != root and not target.startswith(os.path.join(root, "")):
        raise ValueError(f"output path {target} escapes the output directory {root}")
    return path


#: Directories this process has made sure exist, so a tree costs one mkdir per directory.
_made_dirs: set[Path] = set()


def atomic_write(path: Path, data: bytes, *, mode_from: Path | None = None) -> bool:
    """Write ``data`` to ``path`` via a temporary file and rename; False if already identical.

    Unchanged files are not rewritten, so a second conversion into the same tree leaves
    timestamps alone. The file mode is copied from ``mode_from`` (the input) when given.
    Data is synced to disk before the rename only when it replaces an existing file (an
    in-place conversion must never leave an empty source after a power cut); a new file
    can always be made again from its input, and a sync per file would cost more than
    converting it.
    """
    replacing = path.is_file()
    try:
        if replacing and read_bytes(path) == data:
            return False
    except OSError:
        pass
    if path.parent not in _made_dirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        _made_dirs.add(path.parent)
    try:
        fd, tmp = _temporary_beside(path)
    except FileNotFoundError:  # removed since this process made it
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary_beside(path)
    try:
        mode = os.stat(mode_from).st_mode & 0o7777 if mode_from is not None else None
        try:
            _write_all(fd, data)
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            if replacing:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None and not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a file object would add an fstat,
    an ioctl and an lseek per file, and a copy into its buffer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_temporaries = itertools.count()


def _temporary_beside(path: Path) -> tuple[int, str]:
    """A new file next to ``path``, open for writing, private (mode 0600) until renamed.

    Named from the process id and a counter rather than ``tempfile``'s random names:
    ``O_EXCL`` still guarantees it is new, and a name that exists (a file left by a
    killed run of the same pid) is skipped."""
    while True:
        tmp = os.path.join(path.parent, f".{path.name}.{os.getpid()}.{next(_temporaries)}.hipport-tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600), tmp
        except FileExistsError:
            continue


def backup(path: Path) -> Path | None:
    """Copy ``path`` to ``path.prehip`` unless a backup already exists (the oldest wins)."""
    dest = path.with_name(path.name + BACKUP_SUFFIX)
    if dest.exists():
        return None
    atomic_write(dest, read_bytes(path), mode_from=path)
    return dest
