"""Finding, classifying, reading and (atomically) writing files.

The only module that touches the disk for writing. Everything here is careful in the
same ways: errors are values naming the file (the run goes on), writes stay inside the
roots the user named (real paths are compared, so a symbolic link cannot lead a write
out), writes go to a temporary file that is renamed into place (temporaries a killed run
left behind are removed by the next run that writes there), new files get the user's
umask, and an existing backup is never overwritten (it holds the oldest original).

Reading follows a symbolic link to a directory only while it stays inside the input
(``--follow-symlinks`` lifts that); FIFOs, sockets and devices inside a tree are named
and skipped, never opened (opening a FIFO blocks until someone writes to it).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hipport.options import Options

#: Directories that are never part of a source tree.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox"})
BACKUP_SUFFIX = ".prehip"
TEMP_SUFFIX = ".hipport-tmp"
#: A temporary older than this whose process is gone was left by a killed run.
STALE_TEMP_SECONDS = 60

#: Byte-level pre-filter: a file with none of these cannot hold anything hipport rewrites
#: or reports, so it is not parsed. Broad on purpose (a false hit costs one parse; a miss
#: would hide a finding): CUDA names and headers, kernel qualifiers and built-ins, warp
#: vocabulary, inline asm, and the CUDA-only libraries the rules know.
#: Searched as plain bytes (``in``: memchr-fast) and then as five small patterns, instead
#: of one alternation of all of them: that regex tried some alternative at nearly every
#: byte and cost ~400 us for a 2 KB file without CUDA (a tenth of the bench corpus). The
#: same answer: a word here that contains another (``cublas``, ``__half``) was dropped.
_CUDA_WORDS = (
    b"cuda", b"CUDA", b"CU_", b"__global__", b"__device__", b"__shared__", b"__constant__", b"__managed__",
    b"__forceinline__", b"__launch_bounds__", b"<<<", b"threadIdx", b"blockIdx", b"blockDim", b"gridDim",
    b"warp", b"Warp", b"WARP", b"__shfl", b"__ballot", b"__activemask", b"__any", b"__all", b"__popc", b"__ffs",
    b"__clz", b"__brev", b"__sync", b"__reduce", b"__match", b"__ldg", b"__threadfence", b"__trap",
    b"__nanosleep", b"__prof", b"clock", b"__AMDGCN", b"asm", b"cub", b"thrust", b"nvrtc", b"nccl", b"nvtx",
    b"nvinfer", b"cutlass", b"cute", b"curand", b"cufft", b"cusparse", b"cusolver", b"cudnn", b"cufile",
    b"cooperative_groups", b"texture", b"half", b"__nv_", b"bfloat16", b"fp8", b"mma", b"__float",
    # CUDA headers without "cuda" in their name (a header including only vector_types.h);
    # every include headers.toml names must pass (tests/test_files.py)
    b"_types.h", b"_functions.h", b"device_functions", b"device_launch_parameters", b"math_constants",
    b"host_defines", b"host_config", b"channel_descriptor", b"nvToolsExt", b"nvml", b"cupti",
)
_CUDA_PATTERNS = tuple(re.compile(p) for p in (
    rb"cu[A-Z]", rb"Nv[A-Z]", rb"surf[0-9A-Z]", rb"tex[0-9A-Z]", rb"sm_[0-9]+_"))


@dataclass(frozen=True)
class SourceFile:
    """A file found under an input: ``rel`` is its path relative to that input's root."""

    path: Path
    rel: Path
    root: Path
    is_source: bool  # True: converted/scanned; False: copied as it is by convert


@dataclass(frozen=True)
class FileError:
    """A path that is not processed: an error (exit 2), or with ``skipped`` a file left
    alone on purpose (a FIFO, a link out of the tree) that the report still names."""

    path: Path
    message: str
    skipped: bool = False


def looks_like_cuda(data: bytes) -> bool:
    return any(word in data for word in _CUDA_WORDS) or any(p.search(data) for p in _CUDA_PATTERNS)


#: What only CUDA code spells: a file of another GPU dialect that has none of these is not
#: a CUDA source, whatever ``looks_like_cuda``'s broad words (``WARP``, ``half``) matched.
_CUDA_ONLY = re.compile(rb"cuda|CUDA|__global__|__device__|__host__|<<<|threadIdx|blockIdx|blockDim"
                        rb"|__shfl|__syncthreads|__syncwarp|cub::|thrust::|\bcu[A-Z]\w*\s*\(")


def spells_cuda(data: bytes) -> bool:
    """The text spells something only CUDA code spells (``_CUDA_ONLY``): unlike
    ``looks_like_cuda``, a pre-filter that must never miss and so also matches ``clock``,
    ``half`` or ``_cuCameraData``, an answer to whether a file is CUDA code at all."""
    return _CUDA_ONLY.search(data) is not None


def other_gpu_dialect(data: bytes) -> bool:
    """A SYCL source (ggml-sycl's kernels and ``presets.hpp``, which only ``#define
    QK_WARP_SIZE 32``): its sub-group sizes, ``sycl::half`` operators and asm belong to
    SYCL, not to a CUDA port. A file that also spells anything CUDA-only stays a source."""
    return (b"sycl" in data or b"SYCL" in data) and not spells_cuda(data)


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

    Directories are walked sorted; a symlinked directory is followed once, and only while
    its real path stays inside the input's (or with ``options.follow_symlinks``); a loop
    is reported, not followed; ``avoid`` (the output directory) is never entered.
    """
    exts = tuple(e.lower() for e in options.extensions)
    avoid_real = Path(os.path.realpath(avoid)) if avoid is not None else None
    for inp in inputs:
        try:
            st = os.stat(inp)
        except OSError as e:
            yield FileError(inp, _stat_problem(inp, e))
            continue
        if stat.S_ISREG(st.st_mode):
            yield SourceFile(inp, Path(inp.name), inp.parent, inp.suffix.lower() in exts)
        elif stat.S_ISDIR(st.st_mode):
            yield from _walk(inp, exts, options.exclude, avoid_real, options.follow_symlinks,
                             options.gitignore)
        else:
            yield FileError(inp, f"not a regular file or directory ({_kind(st.st_mode)})")


def _stat_problem(path: Path, e: OSError) -> str:
    """Why ``path`` cannot be used, in the words a user would look for."""
    import errno

    if e.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if e.errno == errno.ENOENT:
        return "broken symbolic link" if os.path.islink(path) else "no such file or directory"
    return f"cannot stat: {e.strerror or e}"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _inside(path: str, root: str) -> bool:
    """Whether real path ``path`` is ``root`` or below it (both already real)."""
    return path == root or path.startswith(os.path.join(root, ""))


def _walk(root: Path, exts: tuple[str, ...], exclude: tuple[str, ...], avoid: Path | None,
          follow: bool, gitignore: bool = False):
    from hipport import gitignore as gi  # its matcher loads only where a .gitignore exists

    seen_dirs: set[str] = set()
    root_real = os.path.realpath(root)
    stack: list[tuple[Path, gi.Chain]] = [(root, gi.root_chain(root) if gitignore else ())]
    while stack:
        d, chain = stack.pop()
        real = os.path.realpath(d)
        if real in seen_dirs:
            if _inside(os.path.realpath(d.parent), real):
                yield FileError(d, "symlink loop: directory already visited")
            else:
                yield FileError(d, f"same directory as {real}, already walked", skipped=True)
            continue
        if avoid is not None and real == str(avoid):
            continue
        if d is not root and not follow and not _inside(real, root_real):
            yield FileError(d, f"symbolic link to {real}, outside the input: not followed "
                            "(--follow-symlinks follows it for reading)", skipped=True)
            continue
        seen_dirs.add(real)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            yield FileError(d, f"cannot list directory: {e.strerror or e}")
            continue
        if gitignore and d is not root and any(e.name == gi.IGNORE_FILE for e in entries):
            chain = gi.descend(chain, os.path.abspath(d))  # no open() tried where none is listed
        subdirs = []
        for entry in entries:
            p = Path(entry.path)
            rel = p.relative_to(root)
            if exclude and is_excluded(rel, exclude):
                continue
            try:
                is_dir = entry.is_dir()
                if chain and gi.ignored(chain, os.path.abspath(p), is_dir):
                    continue
                if is_dir:
                    if entry.name not in SKIP_DIRS:
                        subdirs.append((p, chain))
                    continue
                if not entry.is_file():
                    yield _not_a_file(p)
                    continue
            except OSError as e:
                yield FileError(p, f"cannot stat: {e.strerror or e}")
                continue
            if p.name.endswith(BACKUP_SUFFIX) or p.name.endswith(TEMP_SUFFIX):
                continue
            yield SourceFile(p, rel, root, p.suffix.lower() in exts)
        stack.extend(reversed(subdirs))


def _not_a_file(p: Path) -> FileError:
    """A tree entry that is neither a file nor a directory: a broken or looping link is
    an error (something is missing); a FIFO, socket or device is skipped, and named."""
    try:
        st = os.stat(p)
    except OSError as e:
        return FileError(p, _stat_problem(p, e))
    return FileError(p, f"{_kind(st.st_mode)}: not read", skipped=True)


def read_bytes(path: Path) -> bytes:
    """Read a whole regular file; OSError propagates to the caller, which records it per
    file. Opened non-blocking and checked before reading, so a FIFO or device that took
    the place of a discovered file is refused instead of blocking or reading forever."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            import errno

            raise OSError(errno.EINVAL, f"not a regular file ({_kind(os.fstat(fd).st_mode)})")
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
    if not _inside(target, root):
        raise ValueError(f"output path {target} escapes the output directory {root}")
    return path


def inside_root(path: Path, root: Path) -> bool:
    """Whether ``path`` (its directory resolved, its last component not followed: a write
    replaces a link there rather than write through it) lies in real ``root``."""
    return _inside(_resolved_str(path), _resolved_dir(os.path.abspath(root)))


#: Directories this process has made sure exist (and cleaned of stale temporaries), so a
#: tree costs one mkdir and one listing per directory.
_made_dirs: set[Path] = set()


@lru_cache(maxsize=1)
def _new_file_mode() -> int:
    """0666 less the user's umask: what ``open()`` would give a new file. Read once (the
    only way to read the umask is to set it)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: Path, data: bytes, *, mode_from: Path | None = None,
                 mode: int | None = None) -> bool:
    """Write ``data`` to ``path`` via a temporary file and rename; False if already identical.

    Unchanged files are not rewritten, so a second conversion into the same tree leaves
    timestamps alone. The file mode is copied from ``mode_from`` (the input) when given,
    else it is the umask's, as for any new file (the temporary itself is private until
    renamed; a report once written 0600 that way gets the usual mode back); ``mode``
    sets it outright (cache entries: 0600). Data is synced to disk before the rename only when it replaces an
    existing file (an in-place conversion must never leave an empty source after a power
    cut); a new file can always be made again from its input, and a sync per file would
    cost more than converting it.
    """
    replacing = path.is_file()
    try:
        if replacing and read_bytes(path) == data:
            return False
    except OSError:
        pass
    if path.parent not in _made_dirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent)
        _made_dirs.add(path.parent)
    try:
        fd, tmp = _temporary_beside(path)
    except FileNotFoundError:  # removed since this process made it
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary_beside(path)
    try:
        if mode is None:
            mode = os.stat(mode_from).st_mode & 0o7777 if mode_from is not None else _new_file_mode()
        try:
            _write_all(fd, data)
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            if replacing:
                os.fsync(fd)
        finally:
            os.close(fd)
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def remove_stale_temporaries(directory: Path) -> int:
    """Delete the ``.NAME.PID.N.hipport-tmp`` files a killed run left in ``directory``:
    those whose process is gone and that are older than a minute (a live run on another
    machine sharing the folder renames its temporaries within milliseconds). Returns how
    many were removed; a listing or removal that fails only leaves them."""
    removed = 0
    try:
        entries = [e for e in os.scandir(directory) if e.name.endswith(TEMP_SUFFIX)]
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        parts = entry.name.rsplit(".", 3)  # [".NAME", PID, N, "hipport-tmp"]
        try:
            pid = int(parts[1])
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
        except (IndexError, ValueError, OSError):
            continue
        if old and not _alive(pid):
            try:
                os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else (or cannot tell: keep it)
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
        tmp = os.path.join(path.parent, f".{path.name}.{os.getpid()}.{next(_temporaries)}{TEMP_SUFFIX}")
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
