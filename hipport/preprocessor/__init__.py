"""A model of the C preprocessor just large enough to say which branches a HIP build compiles.

``model(src, path, options)`` is what ``Context`` asks: directives (``directives``) are run
per compilation pass (``passes``) with three-valued conditions (``expr``) over macro tables
(``macros``), following the project's own headers (``branches``).
"""

from __future__ import annotations

import os

from hipport import gpus
from hipport.options import Options
from hipport.preprocessor.branches import Branches, analyze
from hipport.preprocessor.passes import Build


def build_of(options: Options) -> Build:
    """The HIP build that ``options`` describe."""
    return Build(options.rocm, gpus.archs_of(options), options.hip_guards, options.defines,
                 options.undefines, tuple(os.path.abspath(d) for d in options.include_dirs))


def model(src: bytes, path: str, options: Options) -> Branches:
    """The branches of ``src`` that no pass of the HIP build compiles."""
    return analyze(src, path, build_of(options))


__all__ = ["Branches", "Build", "analyze", "build_of", "model"]
