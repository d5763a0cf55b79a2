"""The compilation passes of a HIP build and the macros each starts with.

hipcc compiles a file once for the host and once per ``--offload-arch`` GPU. A branch is
compiled when any pass takes it; it is never compiled only when every pass skips it. The
host pass defines the HIP compiler macros, the user's HIP guards and ``-D`` defines;
each device pass adds ``__HIP_DEVICE_COMPILE__`` and its GPU's arch macros (``__gfx942__``,
``__GFX9__``, the wave size while the release defines it). Another CUDA-like platform's macros
(MUSA's ``__MUSACC__``, llama.cpp's ``GGML_USE_MUSA``) are undefined in every pass. CUDA's macros are undefined in
all of them, though a branch only they close stays "maybe" (``Macros.decide``) unless the
project names its own HIP guard: a port rewrites such tests, a ported project means them.
The facts are ``mappings/gpus.toml``.

``cuda_build`` is the other side: the one pass of a CUDA build (HIP's macros and guards
undefined, CUDA's unknown). A branch it never compiles was written for AMD (``#if
defined(AMD_MFMA_AVAILABLE)`` where the project defines that only for its HIP build), so
32-lane arithmetic there is the author's choice for the GPU at hand, not a warp-size hazard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hipport import gpus
from hipport.options import DEFAULT_HIP_GUARDS
from hipport.preprocessor.macros import UNDEFINED, Macro, Macros
from hipport.versions import Version, parse_version


@dataclass(frozen=True)
class Build:
    """What decides the passes: the target release, GPUs, HIP guards and ``-D`` defines."""

    rocm: Version
    archs: tuple[str, ...]
    hip_guards: tuple[str, ...]
    defines: tuple[str, ...] = ()  # NAME or NAME=VALUE, as after -D
    undefines: tuple[str, ...] = ()  # NAME, as after -U: surely undefined (else unknown)
    include_dirs: tuple[str, ...] = ()  # -I DIR, absolute: where "name" headers are also looked for


def split_define(text: str) -> tuple[str, str]:
    """``-D`` text → (name, body): ``X`` is ``X`` = 1, ``X=`` is defined empty, ``X=2`` is 2."""
    name, eq, body = text.partition("=")
    name = name.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ValueError(f"not a macro name: {name!r} (expected NAME or NAME=VALUE)")
    return name, body.strip() if eq else "1"


def named_guards(guards: tuple[str, ...]) -> tuple[str, ...]:
    """The HIP guards the user named (``--hip-guard``, ``[tool.hipport] hip-guards``): what
    follows the built-in ones, which options put first. A built-in name counts when named:
    ``--hip-guard USE_ROCM`` says vLLM's HIP build is that macro's, as GGML_USE_HIP says
    llama.cpp's, though an unported PyTorch extension's hipify defines it too."""
    n = len(DEFAULT_HIP_GUARDS)
    if guards[:n] == DEFAULT_HIP_GUARDS:
        return guards[n:]
    return tuple(g for g in guards if g not in DEFAULT_HIP_GUARDS)


@lru_cache(maxsize=16)
def passes(build: Build) -> tuple[Macros, ...]:
    """The host pass first, then one device pass per GPU; callers copy before changing."""
    data = gpus.table()["build"]
    # arch macros of GPUs not targeted, and another platform's (MUSA): undefined unless set
    pattern = re.compile(f'{data["arch_pattern"]}|{data["other_platform_pattern"]}')
    device_only = set(data["device"])
    base: dict = {name: UNDEFINED for name in (*data["undefined"], *data["cuda"])}
    base.update({name: UNDEFINED for name in device_only})
    base.update({name: Macro("1") for name in data["defined"]})
    major, minor, patch = (build.rocm + (0, 0, 0))[:3]
    base.update({
        "HIP_VERSION_MAJOR": Macro(str(major)), "HIP_VERSION_MINOR": Macro(str(minor)),
        "HIP_VERSION_PATCH": Macro(str(patch)),
        "HIP_VERSION": Macro(str(major * 10_000_000 + minor * 100_000 + patch)),
    })
    waves_until = parse_version(data["wave_size_macros_until"])
    if build.rocm >= waves_until:  # gone from the compiler: from the host pass too, where clang
        base.update({name: UNDEFINED for name in data["wave_size_macros"]})  # had them (aux target)
    guards = [g for g in build.hip_guards if g not in device_only]
    base.update({g: Macro("1") for g in guards})
    user = dict(split_define(d) for d in build.defines)
    base.update({name: UNDEFINED for name in build.undefines if name not in user})
    host = dict(base)
    host.update({k: Macro(v) for k, v in user.items()})
    # A project whose HIP guard the user names is already ported: its CUDA-only tests are
    # meant, and decided as its HIP build decides them. Otherwise they are tests to rewrite.
    ported = bool(named_guards(build.hip_guards))
    cuda = frozenset() if ported else frozenset(data["cuda"])
    meant = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, data["cuda"]))) if ported else None
    out = [Macros(host, pattern, cuda, meant)]
    for gpu in gpus.gpus(build.archs):
        table = dict(base)
        table.update({name: Macro("1") for name in device_only})
        table.update({name: Macro("1") for name in gpu.macros})
        for name in data["wave_size_macros"]:
            table[name] = Macro(str(gpu.wave)) if build.rocm < waves_until else UNDEFINED
        table.update({k: Macro(v) for k, v in user.items()})
        out.append(Macros(table, pattern, cuda, meant))
    host_pass = out[0]
    differs = frozenset(n for m in out[1:] for n in set(m.table) | set(host_pass.table)
                        if m.state(n) != host_pass.state(n))
    for m in out:
        m.pass_dependent = differs
    return tuple(out)


@lru_cache(maxsize=16)
def cuda_build(build: Build) -> Macros:
    """The macros of a CUDA build of the same code: every HIP compiler, platform, arch and
    wave-size macro and the HIP guards undefined; CUDA's own macros and the ``-D`` defines
    (they describe the HIP build) unknown. Callers copy before changing."""
    data = gpus.table()["build"]
    hip = (*data["defined"], *data["device"], *data["wave_size_macros"], *build.hip_guards,
           "HIP_VERSION", "HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH")
    also = set(data["also_cuda"])
    return Macros({name: UNDEFINED for name in hip if name not in also}, re.compile(data["arch_pattern"]))
