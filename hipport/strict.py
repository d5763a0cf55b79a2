"""What a user typed that hipport does not know, caught before any file is read.

ruff's convention: an unknown rule code in ``--ignore`` or ``--select`` (or in
``[tool.hipport]``), or a target release outside what the mapping tables describe, is a
usage error (exit 2) naming the bad value and the closest valid one, never silently a
no-op. The checks need data (the rule registry, the tables' versions) that costs start-up
time, so each runs only when there is something to check: no codes given, no registry
loaded; a release the rules are written against (6.3, 7.2.1) needs no table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from hipport.options import ConfigError, Options, code_prefix
from hipport.suggest import closest
from hipport.versions import NAMED_RELEASES, Version, short_version

#: ``[tool.hipport]`` keys and flags that hold rule codes (``severity``: its table's keys).
_CODE_FIELDS = (("select", "--select"), ("ignore", "--ignore"), ("severity", None))


def check(opts: Options, flags: Mapping[str, Any], table: Mapping[str, Any],
          source: Path | None, known_codes: Callable[[], Iterable[str]]) -> None:
    """Raise ConfigError for the first unknown code or out-of-range release, naming where it came from."""
    where = f"{source}: [tool.hipport]" if source is not None else "[tool.hipport]"
    wanted: list[tuple[str, str]] = []  # (as written, where)
    for key, flag in _CODE_FIELDS:
        raw = table.get(key)
        if isinstance(raw, dict):
            wanted += [(c, f"{where}: {key}") for c in raw]
        elif isinstance(raw, list):
            wanted += [(c, f"{where}: {key}") for c in raw if isinstance(c, str)]
        name = "severity_overrides" if key == "severity" else key
        if flag is not None and name in flags:
            value = flags[name]
            wanted += [(c, flag) for v in ((value,) if isinstance(value, str) else value)
                       for c in v.split(",") if c.strip()]
    if wanted:
        codes = sorted(set(known_codes()))
        for written, origin in wanted:
            check_code(written, codes, origin)
    if opts.rocm not in NAMED_RELEASES.values():
        origin = "--rocm" if "rocm" in flags else f"{where}: rocm"
        check_release(opts.rocm, described_releases(), origin)


def check_code(written: str, codes: list[str], origin: str) -> None:
    """``written`` must be a code, or a prefix of one (HP2, HP2XX, HP20)."""
    prefix = code_prefix(written)
    if prefix and any(c.startswith(prefix) for c in codes):
        return
    families = sorted({c[:3] + "XX" for c in codes})
    hint = closest(written.strip().upper(), [*codes, *families])
    raise ConfigError(f"{origin}: unknown rule code {written.strip()!r}"
                      + (f"; did you mean {hint}?" if hint else "; see hipport rules"))


def check_release(rocm: Version, described: tuple[Version, Version], origin: str) -> None:
    oldest, newest = described
    if rocm > newest:
        raise ConfigError(f"{origin}: ROCm {short_version(rocm)} is past the newest release the "
                          f"mapping tables describe ({short_version(newest)}); did you mean "
                          f"{short_version(newest)}?")
    if rocm < oldest:
        raise ConfigError(f"{origin}: ROCm {short_version(rocm)} is before the oldest release the "
                          f"mapping tables describe ({short_version(oldest)}); did you mean "
                          f"{short_version(oldest)}?")


def described_releases() -> tuple[Version, Version]:
    """The oldest and newest HIP versions any table cell names (with the named releases)."""
    from hipport.mapping import load_table

    return load_table().release_span()


def rule_codes(cache_root: Path | None) -> list[str]:
    """Every rule code. The registry imports every rule module (a fifth of a second), which
    a cached ``check`` otherwise never pays, so with ``cache_root`` the list is kept there
    as an authenticated cache entry (``hipport.cachefile``) under the installed hipport's
    fingerprint (hipport.check): a planted list could let a misspelt code through."""
    path = secret = None
    if cache_root is not None:
        from hipport.cachefile import load, secret_key
        from hipport.check import CACHE_FORMAT, tool_fingerprint

        secret = secret_key(cache_root)
        if secret is not None:
            path = cache_root / CACHE_FORMAT / f"rule-codes-{tool_fingerprint()[:32]}.json"
            codes = load(path, cache_root, "rule-codes-1", secret, 1 << 20)
            if isinstance(codes, list) and codes and all(isinstance(c, str) for c in codes):
                try:
                    os.utime(path)  # in use: check's pruning removes lists unused for a month
                except OSError:
                    pass
                return codes
    from hipport.rules import load as load_rules

    codes = sorted(load_rules().rules)
    if path is not None and secret is not None:
        from hipport.cachefile import write_entry

        write_entry(path, "rule-codes-1", codes, secret)  # one that cannot be written costs only time
    return codes
