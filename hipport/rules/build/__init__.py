"""HP5xx, HP6xx — build: what a repository's manifests, images and build files pin to CUDA.

These rules are not reported by the tree walk of sources: the HP5xx ones by ``hipport
deps`` (its readers of requirements files, pyproject.toml, setup.py, environment.yml,
Dockerfiles, .gitmodules and Python imports, in ``hipport.deps``), the HP6xx and HP7xx ones by
the build-file readers of ``convert`` and ``scan`` (``hipport.rewrite.buildfiles``). Each check
lives with the parser of the language it reads; the rules live here, one module per
hazard group, so that each has a code, a slug and a page like every other
(``hipport rules HP501``).
"""

from __future__ import annotations

from hipport.rules.build import (  # noqa: F401  (registration order)
    manifests, repository, compile_flags, cmake, sources, torch_extensions,
)
