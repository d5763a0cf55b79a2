"""Rules only the deep engine (``--engine clang``, ``hipport.deep``) can decide, and the
clang visitors of every rule it reports.

Registered here, like every family, so that ``hipport rules`` documents them and
``--ignore``/suppressions/severity overrides apply; their visitors are clang visitors
(``Registry.visits_clang``), because the facts they need (what a macro expands to, a
type behind a typedef or a template argument) exist only after preprocessing. The deep
engine also reports the ordinary HP1xx and HP2xx codes (an unsupported name built by a
macro is HP101; a mask whose real type is 32-bit is HP202), so that a finding means the
same thing whichever engine produced it.
"""

from __future__ import annotations

from hipport.rules.deep import pasted_names, masks  # noqa: F401  (registration order)
