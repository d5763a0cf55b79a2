"""HP1xx — API mapping: what the tables say about each CUDA name, for the target release.

The rewriter and these rules read the same ``MappingView`` decision, so a name is either
rewritten or reported, never silently left. Behaviour changes between ROCm 6.3 and 7.x
(../shared/reference/rocm-versions.md) are rules with a version range, one module each.
"""

from __future__ import annotations

from hipport.rules.api import (  # noqa: F401  (registration order)
    status, macros, last_error, stream_ordered_free, hiprtc, memset_params, launch_errors, conversion,
)
