"""Where the ``mappings/`` data is, installed or in a source checkout.

Installed, ``mappings/`` is the package ``hipport.mappings`` (pyproject.toml maps it), so
it ships inside the wheel. Run from the top of a source checkout (``python -m pytest``
puts the checkout first on ``sys.path``), the ``hipport`` package found is the source
tree, which has no ``hipport/mappings``: the data is then the checkout's own
``mappings/`` directory, the same files.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path


def mappings() -> Traversable:
    try:
        return files("hipport.mappings")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "mappings"
