"""The macros of one compilation pass, as the preprocessor model knows them.

A macro is *defined* (with its body), *undefined*, or *maybe* (defined in a branch whose
condition could not be decided, or never seen at all). A name the model has never met is
"maybe", not "undefined" as it would be for the compiler: it may come from a header the
model does not read or a ``-D`` the build passes. A name whose only ``#define`` lies in a
branch the pass skips is undefined: the project itself says when it exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hipport.preprocessor import expr

#: Nested macro expansions followed before a value counts as unknown.
MAX_EXPANSION_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Macro:
    body: str
    function_like: bool = False


class _State:
    """Markers for the two states that have no body."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNDEFINED = _State("UNDEFINED")
MAYBE = _State("MAYBE")


@lru_cache(maxsize=65536)
def _absent(pattern: re.Pattern | None, name: str) -> "_State":
    """The state of a name not in the table: UNDEFINED when the pattern says so, else UNSEEN."""
    return UNDEFINED if pattern is not None and pattern.match(name) else UNSEEN
#: A name never met: read as MAYBE; a ``#define`` only in a skipped branch makes it UNDEFINED.
UNSEEN = _State("UNSEEN")

State = Macro | _State


class Recorder:
    """What processing one header read (the states it found on entry) and wrote, so that
    the same header met again in the same states is not processed again (``memo``)."""

    def __init__(self) -> None:
        self.reads: dict[str, State] = {}
        self.writes: dict[str, State] = {}

    def read(self, name: str, state: State) -> None:
        if name not in self.writes and name not in self.reads:
            self.reads[name] = state


class Macros:
    """One pass's macro table, copied for each pass from a shared start."""

    def __init__(self, table: dict[str, State], undefined_pattern: re.Pattern | None = None,
                 cuda: frozenset[str] = frozenset(), meant: re.Pattern | None = None) -> None:
        self.table = dict(table)
        self.undefined_pattern = undefined_pattern
        #: CUDA's own macros: undefined in a HIP build, but a test of one is a test the
        #: port rewrites (HP106, HP309), so a branch only they decide stays "maybe".
        self.cuda = cuda
        #: In an already ported project (``passes``), CUDA's macros spelled as whole words:
        #: a test of one whose state the pass knows is what the project means for its HIP
        #: build (its ``#else`` is the HIP path), not a test to rewrite.
        self.meant = meant
        self.cuda_reads = 0  # CUDA macros read as undefined, so a caller can tell
        self.soft = False  # while True, CUDA macros still undefined read as MAYBE
        self.recorders: list[Recorder] = []
        self.pseudo: dict[str, State] = {k: v for k, v in self.table.items() if k[0] == "#"}
        #: Names whose state differs between the host and a device pass (``passes``), and
        #: whether this pass has read one: if not, the host pass would decide alike.
        self.pass_dependent: frozenset[str] = frozenset()
        self.read_pass_dependent = False

    def copy(self) -> "Macros":
        m = Macros(self.table, self.undefined_pattern, self.cuda, self.meant)
        m.pass_dependent = self.pass_dependent
        return m

    def state(self, name: str) -> State:
        found = self.table.get(name)
        if found is None:
            found = _absent(self.undefined_pattern, name)
        if name in self.pass_dependent:
            self.read_pass_dependent = True
        if self.recorders:
            for r in self.recorders:
                r.read(name, found)
        if found is UNDEFINED and name in self.cuda:
            self.cuda_reads += 1
            if self.soft:
                return MAYBE
        return found

    def decide(self, text: str) -> expr.Result:
        """``evaluate``, except that a result which rests on CUDA macros being undefined is
        "maybe": evaluated again with them unknown, it is undecided. (Both ways: the
        ``#else`` of ``#if !defined(__CUDA_ARCH__)`` is device code the port must see.)"""
        before = self.cuda_reads
        result = self.evaluate(text)
        if result.value is None or self.cuda_reads == before:
            return result
        self.soft = True
        try:
            again = self.evaluate(text)
        finally:
            self.soft = False
        return again if again.value is None else result

    def meant_spans(self, text: str) -> list[tuple[int, int]]:
        """The spans of ``text`` (a condition) naming a CUDA macro a ported project means:
        one this pass knows as undefined or defined (by the project's own headers), not
        one a header defines only maybe. Empty when the project is not ported."""
        if self.meant is None:
            return []
        get = self.table.get
        return [m.span() for m in self.meant.finditer(text)
                if (st := get(m.group(0))) is not None and st is not MAYBE and st is not UNSEEN]

    def decide_defined(self, name: str) -> expr.Value:
        """``defined(name)`` for #ifdef, with ``decide``'s rule for CUDA macros."""
        v = self.defined(name)
        if v == 0 and name in self.cuda and self.table.get(name) is UNDEFINED:
            return None
        return v

    def set(self, name: str, state: State) -> None:
        self.table[name] = state
        if name[0] == "#":  # a pseudo-macro (``branches``): kept apart too, to be listed cheaply
            self.pseudo[name] = state
        for r in self.recorders:
            r.writes[name] = state

    def replay(self, writes: tuple[tuple[str, State], ...]) -> None:
        """``set`` each of ``writes`` (what a header did, replayed from the memo)."""
        if self.recorders:
            for name, state in writes:
                self.set(name, state)
            return
        self.table.update(writes)
        self.pseudo.update(w for w in writes if w[0][0] == "#")

    def defined(self, name: str) -> expr.Value:
        s = self.state(name)
        return None if s is MAYBE or s is UNSEEN else int(s is not UNDEFINED)

    def value(self, name: str, depth: int = 0) -> expr.Value:
        s = self.state(name)
        if s is UNDEFINED:
            return 0
        if s is MAYBE or s is UNSEEN or s.function_like or depth >= MAX_EXPANSION_DEPTH:
            return None
        if not s.body:
            return None  # `#define X` then `#if X`: an error for the compiler
        return self.evaluate(s.body, depth + 1).value

    def evaluate(self, text: str, depth: int = 0) -> expr.Result:
        return expr.evaluate(text, lambda n: self.value(n, depth), self.defined)

    # -- what a directive does, in a branch whose activity is 1 (taken), 0 or None -------
    def define(self, name: str, macro: Macro, active: expr.Value) -> None:
        if active:
            self.set(name, macro)
        elif active is None:
            if self.state(name) != macro:
                self.set(name, MAYBE)
        elif self.state(name) is UNSEEN:
            self.set(name, UNDEFINED)  # its only definition so far is one this pass skips

    def undefine(self, name: str, active: expr.Value) -> None:
        if active:
            self.set(name, UNDEFINED)
        elif active is None:
            self.set(name, MAYBE)
