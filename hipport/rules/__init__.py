"""The porting-risk rules, one package per family; importing ``load()`` registers them all.

Families (codes are stable, like compiler warnings): HP1xx API mapping, HP2xx warp size,
HP3xx device features, HP4xx libraries, HP5xx build and Python, HP6xx build files,
HP7xx PyTorch extensions.
"""

from __future__ import annotations

from functools import lru_cache

from hipport.registry import Registry
from hipport.rule import Supersedes

REGISTRY = Registry()

#: The bare "what the tables say about this name" codes (unsupported, newer, removed,
#: deprecated, experimental); other HP1xx rules carry information of their own.
MAPPING_STATUS = frozenset({"HP101", "HP102", "HP103", "HP104", "HP105"})


class SaysWhatItIs:
    """Base of the feature and library rules (HP3xx, HP4xx): a finding that says what a
    construct is and what to do instead supersedes the bare mapping status of the same
    token."""

    supersedes: tuple[Supersedes, ...] = (Supersedes(MAPPING_STATUS),)

class AboutAName:
    """Base of the rules that say what a CUDA name is under HIP (unmapped, newer, removed,
    deprecated, experimental, a CUDA macro, a builtin without counterpart): their findings
    are moot where the project provides the name itself for its HIP build."""

    moot_where_provided = True


#: Family packages, imported by ``load()`` in this order (visitors of a node type, and file
#: visitors, run in registration order); each registers its rules and visitors.
FAMILY_MODULES: tuple[str, ...] = ("api", "build", "device", "libraries", "warp", "released_headers", "deep")


@lru_cache(maxsize=1)
def moot_where_provided() -> frozenset[str]:
    """The codes of the rules whose findings are moot where the project provides the name
    (``Rule.moot_where_provided``), for code that filters findings by code."""
    return frozenset(code for code, rule in load().rules.items() if rule.moot_where_provided)


def load() -> Registry:
    """Import every family module once and return the filled registry."""
    import importlib

    for name in FAMILY_MODULES:
        importlib.import_module(f"hipport.rules.{name}")
    return REGISTRY
