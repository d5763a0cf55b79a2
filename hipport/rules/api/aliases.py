"""CUDA's own typedefs of mapped names (``mappings/cuda_aliases.toml``): an alias the
tables do not list is reported (HP101) with the spelling HIP has for what it aliases."""

from __future__ import annotations

from functools import lru_cache

from hipport.context import Context
from hipport.datafiles import toml_data
from hipport.mapping import Status


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
    return dict(toml_data("cuda_aliases.toml")["aliases"])
