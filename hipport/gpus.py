"""The GPU as a parameter: what ``--offload-arch`` decides for the rules and the branches.

A CUDA port is right or wrong for a GPU, not for "AMD": wave64 on CDNA and wave32 on RDNA
change every lane computation, gfx950 has 160 KiB of LDS where gfx942 has 64, and gfx942's
fp8 is FNUZ where gfx950's is OCP (CUDA's). The facts are data (``mappings/gpus.toml``);
this module reads them once and answers for a list of targets, always for the worst case
a finding must warn about (the smallest LDS, every wave size, every fp8 encoding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hipport.datafiles import toml_data

#: ``gfx1100:wave64``: the RDNA GPU compiled for wave64 (``-mwavefrontsize64``).
WAVE64_SUFFIX = ":wave64"
_ARCH_RE = re.compile(r"^gfx[0-9a-f]{3,4}(?::[a-z0-9]+[+-]?)*$")


@dataclass(frozen=True)
class Gpu:
    """One ``--offload-arch`` target."""

    arch: str  # gfx942 (target-ID features and hipport's :wave64 stripped)
    family: str  # GFX9, GFX11…: its ``__GFXn__`` macro
    wave: int
    lds_kib: int
    fp8: str  # fnuz | ocp | none

    @property
    def macros(self) -> tuple[str, ...]:
        """The arch macros of its device pass: ``__gfx942__``, ``__GFX9__``."""
        return (f"__{self.arch}__", f"__{self.family}__")


@lru_cache(maxsize=1)
def table() -> dict:
    return toml_data("gpus.toml")


#: The GPU a HIP build is judged for when ``--offload-arch`` is not given: MI300 (CDNA3).
DEFAULT_ARCHS: tuple[str, ...] = ("gfx942",)


def archs_of(options) -> tuple[str, ...]:
    """The ``--offload-arch`` targets of ``options`` (an ``Options``), or the default."""
    return options.offload_arch or DEFAULT_ARCHS


def parse_archs(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"gfx942,gfx1100"`` (or a list of such) → ``("gfx942", "gfx1100")``; raise ValueError
    naming a target the table does not know, with the known ones."""
    items = [text] if isinstance(text, str) else list(text)
    archs = tuple(a.strip() for item in items for a in item.split(",") if a.strip())
    if not archs:
        raise ValueError("needs at least one GPU, like gfx942")
    known = table()["gpus"]
    for a in archs:
        base = a.split(":")[0]
        if not _ARCH_RE.match(a) or base not in known:
            raise ValueError(f"unknown GPU {a!r} (known: {', '.join(known)}; "
                             f"add {WAVE64_SUFFIX} for an RDNA GPU compiled for wave64)")
    return archs


@lru_cache(maxsize=64)
def gpu(arch: str) -> Gpu:
    """The table's row for ``arch`` (``gfx1100:wave64`` is gfx1100 with 64 lanes)."""
    base = arch.split(":")[0]
    row = table()["gpus"][base]
    wave = 64 if WAVE64_SUFFIX in arch else int(row["wave"])
    return Gpu(base, row["family"], wave, int(row["lds_kib"]), row["fp8"])


def gpus(archs: tuple[str, ...]) -> tuple[Gpu, ...]:
    return tuple(gpu(a) for a in archs)


def wave_sizes(archs: tuple[str, ...]) -> frozenset[int]:
    """Every wave size among the targets: a lane computation must hold for all of them."""
    return frozenset(g.wave for g in gpus(archs))


def wave32_only(archs: tuple[str, ...]) -> bool:
    """Whether every target runs 32-lane waves (then 32-lane code is right as written)."""
    return 64 not in wave_sizes(archs)


@lru_cache(maxsize=1)
def wave64_rules() -> frozenset[str]:
    """Codes of the rules that only matter on wave64 (``mappings/gpus.toml``)."""
    return frozenset(table()["wave64_rules"])


@lru_cache(maxsize=1)
def kept_in_amd_code() -> frozenset[str]:
    """Wave64 rules whose findings code written for AMD does not excuse (``mappings/gpus.toml``)."""
    return frozenset(table()["kept_in_amd_code"])


def lds_limit(archs: tuple[str, ...]) -> int:
    """Bytes of LDS per block every target has (the smallest)."""
    return min(g.lds_kib for g in gpus(archs)) * 1024


def fp8_formats(archs: tuple[str, ...]) -> frozenset[str]:
    """The fp8 encodings of the targets that have fp8 (``fnuz``, ``ocp``)."""
    return frozenset(g.fp8 for g in gpus(archs) if g.fp8 != "none")


def without_images(archs: tuple[str, ...]) -> tuple[str, ...]:
    """The targets HIP declares no texture or surface functions for (``image = false``)."""
    return tuple(g.arch for g in gpus(archs) if not table()["gpus"][g.arch].get("image", True))


def describe(archs: tuple[str, ...]) -> str:
    """``gfx942 (wave64, 64 KiB LDS, fp8 FNUZ)`` for messages and report headers."""
    parts = []
    for g in gpus(archs):
        fp8 = "" if g.fp8 == "none" else f", fp8 {g.fp8.upper()}"
        parts.append(f"{g.arch}{WAVE64_SUFFIX if g.wave == 64 and g.family != 'GFX9' else ''}"
                     f" (wave{g.wave}, {g.lds_kib} KiB LDS{fp8})")
    return ", ".join(parts)
