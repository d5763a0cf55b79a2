"""PEP 508 requirement strings → ``Requirement``, judged for a Linux x86_64 ROCm machine.

Every manifest format ends in PEP 508 strings (requirements lines, PEP 621 arrays, setup.py
install_requires, conda's pip section), so they all go through ``parse_requirement``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import unquote

from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508
from packaging.utils import canonicalize_name

from hipport.deps.model import Requirement

#: The machine a ROCm port runs on; markers that exclude it drop the requirement.
ROCM_ENVIRONMENT = {
    "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
    "platform_machine": "x86_64", "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}
_LOCAL_RE = re.compile(r"\+([A-Za-z0-9][A-Za-z0-9.]*)")
_WHEEL_RE = re.compile(r"/([A-Za-z0-9_.]+)-([0-9][^-/]*)-[^/]*\.whl$")
_EGG_RE = re.compile(r"#egg=([A-Za-z0-9_.\-]+)")


def normalize(name: str) -> str:
    """PEP 503 normalization: ``Flash_Attn`` and ``flash.attn`` are both ``flash-attn``."""
    return canonicalize_name(name)


def applies_on_linux(marker: Marker | None, group: str) -> bool:
    """Does a requirement with this marker install on a Linux x86_64 ROCm machine?"""
    if marker is None:
        return True
    env = dict(ROCM_ENVIRONMENT, extra=group)
    try:
        return marker.evaluate(env)
    except (UndefinedComparison, UndefinedEnvironmentName):
        return True  # unknowable here: keep it rather than hide a dependency


def parse_requirement(text: str, source: str, line: int, *, group: str = "", kind: str = "declared",
                      index_urls: tuple[str, ...] = (), optional: bool = False) -> Requirement | None:
    """Parse one PEP 508 string (or a bare wheel / VCS URL); None when its marker excludes Linux.

    Raises ValueError (naming nothing; the caller adds the file) for text that is not a
    requirement.
    """
    text = text.strip()
    url_req = _from_url(text, source, line, group, kind, index_urls)
    if url_req is not None:
        return replace(url_req, optional=optional)
    try:
        req = Pep508(text)
    except InvalidRequirement as e:
        reason = str(e).splitlines()[0]
        raise ValueError(f"not a requirement: {text!r} ({reason})") from None
    if not applies_on_linux(req.marker, group):
        return None
    spec = str(req.specifier)
    local = _LOCAL_RE.search(spec)
    return Requirement(
        name=normalize(req.name), source=source, line=line, raw=text, specifier=spec,
        local=local.group(1) if local else "", url=req.url or "", index_urls=index_urls,
        kind=kind, group=group, optional=optional, extras=tuple(sorted(req.extras)),
    )


def _from_url(text: str, source: str, line: int, group: str, kind: str,
              index_urls: tuple[str, ...]) -> Requirement | None:
    """Bare ``https://…/pkg-1.0+cu121-….whl`` or ``git+…#egg=pkg`` lines, which PEP 508 rejects."""
    if "://" not in text or " @ " in text or text.split("://")[0].count(" "):
        return None
    wheel = _WHEEL_RE.search(unquote(text.split("#")[0]))
    if wheel:
        version = wheel.group(2)
        local = _LOCAL_RE.search(version)
        return Requirement(name=normalize(wheel.group(1)), source=source, line=line, raw=text,
                           specifier="==" + version, local=local.group(1) if local else "",
                           url=text, index_urls=index_urls, kind=kind, group=group)
    egg = _EGG_RE.search(text)
    name = egg.group(1) if egg else name_from_url(text)
    if not name:
        raise ValueError(f"a URL with no package name in it: {text!r}")
    return Requirement(name=normalize(name), source=source, line=line, raw=text,
                       url=text, index_urls=index_urls, kind=kind, group=group)


def name_from_url(url: str) -> str:
    """The project a VCS or archive URL without ``#egg=`` names: its repository's name.

    ``git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch`` →
    ``tiny-cuda-nn``; ``https://github.com/o/repo/archive/refs/heads/main.zip`` → ``repo``.
    The distribution may be called otherwise (tinycudann); imports are matched to it with
    separators ignored (see ``squash``), so the name only has to be the repository's.
    """
    path = re.sub(r"^[a-z+]+://", "", url.split("#")[0].split("?")[0]).rstrip("/")
    parts = [p for p in path.split("/")[1:] if p]  # drop the host
    if "archive" in parts:
        parts = parts[:parts.index("archive")]
    if not parts:
        return ""
    last = re.sub(r"@[^/]*$", "", parts[-1])
    last = re.sub(r"(\.git|\.zip|\.tar\.gz|\.tgz|\.tar\.bz2)$", "", last)
    return last if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", last) else ""


def squash(name: str) -> str:
    """A name with case and every separator dropped: tiny-cuda-nn and tinycudann agree."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
