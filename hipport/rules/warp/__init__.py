"""HP2xx — code that assumes a 32-lane warp.

A wave on CDNA / Instinct (gfx908, gfx90a, gfx942, gfx950) has 64 lanes; RDNA runs HIP in
wave32. CUDA code hard-codes 32 in masks, lane arithmetic, shuffle ladders, shared-array
sizes and constants; on wave64 most of these compile and then compute half the answer.
Facts: ../shared/reference/porting-hazards.md "Warp size" and rocm-versions.md §5.

Precision matters more than recall here: a 32 or a 0xffffffff is only reported where the
syntax ties it to a warp (the mask argument of a ``*_sync`` builtin, an operand derived
from ``threadIdx``, a name that says "warp" or "lane", a shuffle).

One module per hazard, each rule's page beside its check. Checks that need a function's
declarations (masks, ballots, lanes, gated builtins) register with
``functions.function_check`` and read ``hipport.facts``; the rest are plain visitors.
"""

from __future__ import annotations

from hipport.rules.warp import (  # noqa: F401  (registration order: function checks first)
    masks, bitops, lanes, sync, ballot_compare, shuffles, constants, templates, warpsize, shared_arrays, launch_bounds,
    wavefront, ballot_casts,
)
from hipport.rules.warp import functions

functions.register()
