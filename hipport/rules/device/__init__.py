"""HP3xx — device-code features that HIP lacks, implements differently, or sizes differently.

Reporting policy. A construct that must be rewritten where it stands (inline PTX, a launch
from device code, an oversized ``__shared__`` array, a texture-reference fetch, a grid or
cluster barrier, an ``__CUDA_ARCH__`` test) is reported at every site. A name-level note
(fp8 types, managed memory, ``__ldg``, ``clock64``…) is reported once per name (or once per
rule) per file (``common.once``), so that a kernel library does not drown its own report.

One module per hazard, each rule's page beside its check. Per-file state is typed
(``ctx.state(Cls)``: constants, group variables, half values, pointer attributes, shared
bytes, the notes made); the walk is in document order, so declarations are seen before
the code that uses them. Hazards that read declarations register a recorder with
``declarations.recorder``, which share one declaration visitor.
"""

from __future__ import annotations

from hipport.rules.device import (  # noqa: F401  (registration order: recorders as listed)
    constants, ptx, parallelism, hopper, wmma_pipeline, shared_memory, memory, textures, intrinsics, arch_tests,
    fp8_half, cooperative_groups, graphs, fp8_encoding,
)
from hipport.rules.device import declarations

declarations.register()
