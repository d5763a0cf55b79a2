"""The dependency knowledge base (mappings/python-deps.json), loaded once and indexed.

Lookups go three ways: a distribution name (PEP 503-normalized; exact names before fnmatch
patterns), an import path (longest dotted prefix, so ``flash_attn.cute`` is FA4 while
``flash_attn`` is FA2), and "does this unknown name look like GPU code".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatch, translate
from functools import lru_cache

from hipport.datafiles import mappings
from hipport.deps.pep508 import normalize


@dataclass(frozen=True)
class Entry:
    """One package (or family of packages) and its ROCm facts; see python-deps-curation.toml."""

    key: str
    title: str
    status: str
    imports: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    cuda_only_names: tuple[str, ...] = ()
    rocm_since: str = ""
    replacement: str = ""
    install_hint: str = ""
    caveats: str = ""
    sources: tuple[str, ...] = ()
    source_build: bool = False
    experimental: bool = False
    remove_only: bool = False
    no_replacement: bool = False
    drop_in: bool = False  # the replacement is the same API under a ROCm name (onnxruntime-migraphx)
    effort: str = "small"
    versions: tuple[dict, ...] = ()
    rocm: tuple[dict, ...] = ()
    validated: tuple[dict, ...] = ()  # {rocm: range, label, versions}: the target's matrix

    def is_cuda_only(self, name: str) -> bool:
        """Is ``name`` the CUDA flavour of this entry (cupy-cuda12x, onnxruntime-gpu …)?"""
        return any(fnmatch(name, p) for p in self.cuda_only_names)


class KnowledgeBase:
    def __init__(self, data: dict):
        self.entries: dict[str, Entry] = {}
        self._names: dict[str, str] = {}
        self._patterns: list[tuple[str, str]] = []
        self._imports: dict[str, list[str]] = {}
        for raw in data["packages"]:
            entry = Entry(**{k: tuple(v) if isinstance(v, list) else ("" if v is None else v)
                             for k, v in raw.items()})
            self.entries[entry.key] = entry
            for name in entry.names:
                self._names.setdefault(name, entry.key)
            self._patterns += [(p, entry.key) for p in entry.patterns]
            for imp in entry.imports:
                self._imports.setdefault(imp, []).append(entry.key)
        # One alternation instead of an fnmatch per pattern per name: by_name runs once per
        # requirement, and a 20,000-line manifest must stay linear with a small constant.
        self._pattern_re = re.compile("|".join(f"({translate(p)})" for p, _ in self._patterns) or "(?!)")
        self.cpu_packages = frozenset(normalize(n) for n in data.get("cpu_packages", ()))
        hints = data["gpu_hints"]
        self._gpu_name = [re.compile(p) for p in hints["name_patterns"]]
        self.cuda_local = re.compile(hints["local_version_pattern"])
        self.cuda_index = re.compile(hints["index_url_pattern"], re.IGNORECASE)

    def by_name(self, name: str) -> Entry | None:
        name = normalize(name)
        key = self._names.get(name)
        if key is None and (m := self._pattern_re.match(name)):
            key = self._patterns[_group_index(m) - 1][1]
        return self.entries.get(key) if key else None

    def by_import(self, dotted: str) -> list[Entry]:
        """Entries whose import name is the longest dotted prefix of ``dotted``."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            keys = self._imports.get(".".join(parts[:n]))
            if keys:
                return [self.entries[k] for k in keys]
        return []

    def looks_gpu(self, text: str) -> bool:
        """Does a package name (or URL) suggest CUDA/GPU code?"""
        text = text.lower()
        return any(p.search(text) for p in self._gpu_name)


def _group_index(m: re.Match) -> int:
    """Which top-level alternative matched (translate() adds no capturing groups of its own)."""
    return next(i for i, g in enumerate(m.groups(), 1) if g is not None)


@lru_cache(maxsize=1)
def load() -> KnowledgeBase:
    data = json.loads(mappings().joinpath("python-deps.json").read_text(encoding="utf-8"))
    return KnowledgeBase(data)


@lru_cache(maxsize=1)
def scoring() -> dict:
    """The weights of python-deps-scoring.toml (see hipport.deps.score)."""
    import sys
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(mappings().joinpath("python-deps-scoring.toml").read_text(encoding="utf-8"))
