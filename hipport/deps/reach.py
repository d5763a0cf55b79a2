"""Imports that only run when an optional import succeeds are optional too.

``mamba3.py`` does ``try: from mamba_ssm.ops.cute.mamba3_step_fn import … except
ImportError``; the imports *inside* mamba3_step_fn.py (cutlass, quack, cuda.bindings) then
only run on the path that may fail, so they are as optional as the guarded import itself.
A repository module is "optional" when it has at least one importer in the repository and
every import of it is guarded or comes from a module that is itself optional (to a fixed
point). Its own imports are then marked optional. A module nobody imports (a script, an
entry point) is never optional.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from hipport.deps.model import Requirement


def module_names(rel: str) -> list[str]:
    """Dotted names a repository file can be imported as: its path and its suffixes of >= 2
    parts (``src/pkg/mod.py`` is ``src.pkg.mod`` and ``pkg.mod``)."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts:
        return []
    names = {".".join(parts)}
    names |= {".".join(parts[i:]) for i in range(1, len(parts) - 1)}
    return sorted(names)


def propagate_optional(reqs: list[Requirement]) -> list[Requirement]:
    """``reqs`` with the imports of only-optionally-imported repository modules marked optional."""
    imports = [r for r in reqs if r.kind == "import"]
    files = {r.source for r in imports}
    owner: dict[str, str] = {}  # dotted module name -> repository file
    for rel in sorted(files):
        for name in module_names(rel):
            owner.setdefault(name, rel)
    sites: dict[str, list[Requirement]] = {}  # file -> the import statements that load it
    for r in imports:
        target = owner.get(r.name)
        if target is not None and target != r.source:
            sites.setdefault(target, []).append(r)
    optional: set[str] = set()
    changed = True
    while changed:
        changed = False
        for target, via in sites.items():
            if target not in optional and all(r.optional or r.source in optional for r in via):
                optional.add(target)
                changed = True
    if not optional:
        return reqs
    return [replace(r, optional=True) if r.kind == "import" and r.source in optional and not r.optional else r
            for r in reqs]
