"""CUDA's own typedefs of mapped names (``mappings/cuda_aliases.toml``): an alias the
tables do not list is reported (HP101) with the spelling HIP has for what it aliases."""

from __future__ import annotations

import sys
from functools import lru_cache

from hipport.context import Context
from hipport.datafiles import mappings
from hipport.mapping import Status

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def alias_spelling(ctx: Context, name: str) -> tuple[str, str] | None:
    """(aliased CUDA name, its HIP spelling) when ``name`` is a CUDA typedef of a mapped name."""
    aliased = _cuda_aliases().get(name)
    if aliased is None:
        return None
    res = ctx.view.resolve(aliased)
    if res is None or res.status is not Status.MAPPED or not res.target:
        return None
    return aliased, res.target


@lru_cache(maxsize=1)
def _cuda_aliases() -> dict[str, str]:
    with mappings().joinpath("cuda_aliases.toml").open("rb") as f:
        return dict(tomllib.load(f)["aliases"])
