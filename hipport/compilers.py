"""Which compiler and which HIP headers check a conversion for its target release.

A check is only worth its name with the target's own headers: ROCm 5.2's hipcc cannot
tell a right 6.3 spelling from a wrong one. So, for the chosen ``--rocm``:

1. the user's ROCm (``HIPCC``, ``ROCM_PATH``, ``hipcc`` / ``amdclang++`` on PATH,
   ``/opt/rocm``) when its HIP version is the target's major.minor: a real machine first;
2. otherwise clang (``--compiler``, default the newest of clang++-22 … clang++-19 on PATH)
   with the header set under hipport's cache nearest to the target (``hipport.headers``;
   6.2 stands in for 6.3, 7.1 for 7.2.1, and the report says so);
3. otherwise ``NoCompiler``: the CLI prints what is missing and exits 2.

``--compiler`` naming a hipcc uses that hipcc whatever its version (how CI keeps a
HIP 5.2 tier if it wants one).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hipport import headers as H
from hipport.versions import Version, short_version

DEFAULT_ARCH = "gfx942"  # MI300X
CLANG_MAJORS = (22, 21, 20, 19)  # newest first; 19 is the oldest that parses HIP 7 headers
FETCH_HINT = ("run `hipport verify --fetch-headers` once (it downloads Triton wheels from PyPI "
              "with pip and keeps only their HIP headers, ~7 MB, under the cache)")
CLANG_HINT = "install clang 19 or newer (Debian/Ubuntu: apt-get install clang-19) or pass --compiler"

_CLANG_VERSION = re.compile(r"clang version (\d+)\.(\d+)(?:\.(\d+))?")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)|^(\d+)\.(\d+)\.\d+", re.M)


class NoCompiler(RuntimeError):
    """No usable compiler or header set for the target: the CLI exits 2 with the message."""


@dataclass(frozen=True)
class Compiler:
    """A compiler and how it is driven.

    ``headers`` is None for a hipcc, which knows its own ROCm; otherwise clang is pointed
    at the set with ``--rocm-path`` and ``-isystem`` (so Debian's /usr/include/hip, which
    clang searches after, cannot win).
    """

    path: Path
    hip_version: Version | None  # of the headers checked against; None when unknown
    headers: H.HeaderSet | None = None
    clang: str = ""  # clang's version, as --version prints it
    origin: str = ""  # how it was picked, for the report

    def command(self, path: Path, *, arch: str, includes: list[Path], macros: tuple[str, ...] = ()) -> list[str]:
        """The check's command line; ``macros`` (``-DNAME[=VALUE]``, ``-UNAME``) are the HIP
        build's own, as convert's ``-D``/``-U`` decided its ``#if`` branches with them."""
        # the file's own folder is searched for "name" only (-iquote), as a build that does
        # not name it with -I: colmap's src/util/string.h beside camera_specs.cc is not <string.h>
        own = ([] if path.parent.resolve() in {Path(d).resolve() for d in includes}
               else ["-iquote", str(path.parent)])
        incs = [*own, *(f"-I{d}" for d in dict.fromkeys(includes)), *macros]
        if self.headers is None:
            return [str(self.path), f"--offload-arch={arch}", "-fsyntax-only", "-std=c++17",
                    "-Wno-unused-command-line-argument", *self.defines(arch), "-H", *incs,
                    "-x", "hip", str(path)]
        root = self.headers.root
        return [str(self.path), "-x", "hip", f"--offload-arch={arch}", "-nogpulib",
                f"--rocm-path={root}", "-isystem", str(self.headers.include), "-std=c++17",
                "-fsyntax-only", "-Wno-unused-command-line-argument", *self.defines(arch), "-H",
                *incs, str(path)]

    def defines(self, arch: str) -> list[str]:
        """``*_sync`` warp builtins are opt-in before HIP 7.0; clang 22 no longer predefines
        the wavefront size that HIP 6 headers read."""
        out = []
        if self.hip_version and self.hip_version[0] == 6:
            out.append("-DHIP_ENABLE_WARP_SYNC_BUILTINS")
            major = self.clang.split(".")[0]
            if self.headers is not None and major.isdigit() and int(major) >= 22:
                out.append(f"-D__AMDGCN_WAVEFRONT_SIZE={wave_size(arch)}")
        return out

    def describe(self, target: Version, arch: str) -> str:
        """``checked against HIP 7.1.25424 headers (…), nearest to the 7.2.1 target; …``"""
        want = short_version(target)
        if self.headers is None:
            hip = short_version(self.hip_version) if self.hip_version else "unknown version"
            return (f"checked with {self.path} (HIP {hip}; {self.origin}) for the {want} target, "
                    f"--offload-arch={arch}")
        same = self.headers.version[:2] == target[:2]
        relation = f"the {want} target's release" if same else f"nearest to the {want} target"
        return (f"checked against {self.headers.label} headers ({self.headers.root}), {relation}; "
                f"{self.path} ({self.clang or 'clang'}; {self.origin}), --offload-arch={arch}")


def wave_size(arch: str) -> int:
    """RDNA (gfx10, gfx11, gfx12) runs HIP in wave32; CDNA and GCN in wave64."""
    return 32 if re.match(r"gfx1[0-2]\d", arch) else 64


def compile_env(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """hipcc picks the NVIDIA path whenever an ``nvcc`` is on PATH unless told otherwise."""
    return {**env, "HIP_PLATFORM": "amd"}


def parse_hip_version(text: str) -> Version | None:
    """``HIP version: 5.2.21153-0`` → (5, 2, 0). The third field is a build number, not a patch."""
    m = _HIP_VERSION.search(text)
    if not m:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return (int(major), int(minor), 0)


def _run_version(cmd: list[str], env: Mapping[str, str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=compile_env(env))
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout + out.stderr


def clang_version(path: Path, env: Mapping[str, str] = os.environ) -> str:
    """``19.1.7`` from ``clang version 19.1.7 (…)``; "" when it is not a clang."""
    m = _CLANG_VERSION.search(_run_version([str(path), "--version"], env))
    return ".".join(g for g in m.groups() if g) if m else ""


# -- the user's ROCm ---------------------------------------------------------------------

def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_hipcc(env: Mapping[str, str] = os.environ) -> Path | None:
    """HIPCC (a path or a command name), then ROCM_PATH/bin, then PATH, then /opt/rocm."""
    if env.get("HIPCC"):
        found = shutil.which(env["HIPCC"], path=env.get("PATH"))
        return Path(found) if found else None
    candidates = []
    if env.get("ROCM_PATH"):
        candidates.append(Path(env["ROCM_PATH"]) / "bin" / "hipcc")
    on_path = shutil.which("hipcc", path=env.get("PATH"))
    if on_path:
        candidates.append(Path(on_path))
    candidates.append(Path("/opt/rocm/bin/hipcc"))
    return next((c for c in candidates if _executable(c)), None)


def probe_hipcc(path: Path, env: Mapping[str, str] = os.environ, origin: str = "") -> Compiler:
    """A hipcc and its HIP version (``hipcc --version``, else ``hipconfig --version``)."""
    version = None
    for cmd in ([str(path), "--version"], [str(path.with_name("hipconfig")), "--version"]):
        version = parse_hip_version(_run_version(cmd, env))
        if version is not None:
            break
    return Compiler(path, version, origin=origin or "the installed ROCm")


def find_amdclang(env: Mapping[str, str]) -> tuple[Path, H.HeaderSet] | None:
    """A ROCm's ``amdclang++`` and the ROCm root it belongs to (…/bin or …/llvm/bin)."""
    roots = [Path(env["ROCM_PATH"])] if env.get("ROCM_PATH") else []
    on_path = shutil.which("amdclang++", path=env.get("PATH"))
    if on_path:
        exe = Path(on_path).resolve()
        roots.append(exe.parents[2] if exe.parent.parent.name == "llvm" else exe.parents[1])
    roots.append(Path("/opt/rocm"))
    for root in roots:
        for exe in (root / "llvm" / "bin" / "amdclang++", root / "bin" / "amdclang++"):
            hs = H.load(root)
            if _executable(exe) and hs is not None:
                return exe, hs
    return None


def installed_rocm(env: Mapping[str, str] = os.environ) -> Compiler | None:
    hipcc = find_hipcc(env)
    if hipcc is not None:
        return probe_hipcc(hipcc, env)
    found = find_amdclang(env)
    if found is None:
        return None
    exe, hs = found
    return Compiler(exe, hs.version, hs, clang_version(exe, env), "the installed ROCm")


# -- clang and a cached header set ---------------------------------------------------------

def newest_clang(env: Mapping[str, str] = os.environ) -> Path | None:
    for major in CLANG_MAJORS:
        found = shutil.which(f"clang++-{major}", path=env.get("PATH"))
        if found:
            return Path(found)
    plain = shutil.which("clang++", path=env.get("PATH"))
    if plain and (v := clang_version(Path(plain), env)) and int(v.split(".")[0]) >= min(CLANG_MAJORS):
        return Path(plain)
    return None


def with_headers(clang: Path, target: Version, root: Path | None, env: Mapping[str, str],
                 origin: str) -> Compiler:
    sets = H.installed(root)
    hs = H.nearest(sets, target)
    if hs is None:
        raise NoCompiler(f"no HIP header set under {root or H.default_root()}; {FETCH_HINT}")
    why = H.problem(hs, root)
    if why is not None:
        raise NoCompiler(f"the {hs.label} header set in {hs.root} is not used: {why}; "
                         "`hipport verify --fetch-headers` builds it again")
    version = clang_version(clang, env)
    if not version:
        raise NoCompiler(f"{clang} is not a clang (its --version says no 'clang version')")
    return Compiler(clang, hs.version, hs, version, origin)


def select(target: Version, *, compiler: str | None = None, header_root: Path | None = None,
           env: Mapping[str, str] = os.environ) -> Compiler:
    """The compiler for ``target`` by the order in the module docstring."""
    if compiler:
        found = shutil.which(compiler, path=env.get("PATH"))
        if not found:
            raise NoCompiler(f"--compiler {compiler}: not found or not executable")
        path = Path(found)
        if "hipcc" in path.name:
            return probe_hipcc(path, env, origin="--compiler")
        return with_headers(path, target, header_root, env, "--compiler")
    rocm = installed_rocm(env)
    if rocm is not None and rocm.hip_version and rocm.hip_version[:2] == target[:2]:
        return rocm
    skipped = ""
    if rocm is not None:
        hip = short_version(rocm.hip_version) if rocm.hip_version else "an unknown version"
        skipped = f" ({rocm.path} is HIP {hip}, not the {short_version(target)} target's release)"
    clang = newest_clang(env)
    if clang is None:
        raise NoCompiler(f"no compiler for the {short_version(target)} target{skipped}: {CLANG_HINT}")
    try:
        return with_headers(clang, target, header_root, env, "newest clang on PATH")
    except NoCompiler as e:
        raise NoCompiler(f"{e}{skipped}") from e
