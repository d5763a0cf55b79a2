"""The CUDA → HIP rewriters: each registers visitors that add Edits to the Context."""

from __future__ import annotations

from hipport.registry import Registry

REGISTRY = Registry()

REWRITER_MODULES: tuple[str, ...] = ("identifiers", "includes", "launches", "arguments", "roc_types", "legacy_blas")


def load() -> Registry:
    import importlib

    for name in REWRITER_MODULES:
        importlib.import_module(f"hipport.rewrite.{name}")
    return REGISTRY
