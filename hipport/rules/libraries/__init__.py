"""HP4xx — CUDA-only libraries and version-dependent library facts.

The catalogue is data (``mappings/libraries.toml``, read by ``hipport.library_catalogue``);
the rules' pages are grouped by what the library is to a port (``nvidia_only``,
``counterparts``, ``releases``) and ``matching`` reports them.
"""

from __future__ import annotations

from hipport.rules.libraries import nvidia_only, counterparts, releases, matching  # noqa: F401  (registration order)
from hipport.rules.libraries.matching import catalogue

__all__ = ["catalogue"]
