"""Rules only the deep engine (``--engine clang``, ``hipport.deep``) can decide.

Registered here, like every family, so that ``hipport rules`` documents them and
``--ignore``/suppressions/severity overrides apply; no tree-sitter visitor is registered,
because the facts these rules need (what a macro expands to) exist only after
preprocessing. The deep engine also reports the ordinary HP1xx and HP2xx codes (an
unsupported name built by a macro is HP101; a mask whose real type is 32-bit is HP202), so
that a finding means the same thing whichever engine produced it.
"""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class ApiNameBuiltByMacro:
    """CUDA API name assembled by a macro (token pasting)

    ## Why
    A macro such as `#define CALL(f) cuda##f` builds the API name with the preprocessor's
    `##` operator, so `cudaMalloc` never appears in the text. hipport rewrites names where
    they are written; it cannot rewrite half of a pasted token, so after conversion the
    expansion still produces the CUDA name and the file fails to compile (or links against
    nothing). Only the deep engine (`--engine clang`, which runs the preprocessor) sees
    these uses; they are reported at the line where the macro is used.

    ## Example
    ```cuda
    #define CALL(f) cuda##f
    CALL(Malloc)(&p, n);
    ```
    becomes
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #define CALL(f) hip##f
    #else
    #define CALL(f) cuda##f
    #endif
    CALL(Malloc)(&p, n);
    ```

    ## Fix
    Write the API name in full inside the macro (the converter then rewrites it), or give
    the macro a HIP branch that pastes the `hip` prefix. When the name has no HIP
    counterpart, an HP1xx finding at the same place says so.
    """

    code = "HP190"
    slug = "api-name-built-by-macro"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
