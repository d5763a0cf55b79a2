"""`hipport verify` output: each compile error with its class and the findings it is linked
to, in file order, then a summary line."""

from __future__ import annotations

from pathlib import Path

from hipport.verify import KINDS, Verification


def _shown(path: Path | None) -> str:
    if path is None:
        return "hipcc"
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def render(v: Verification) -> str:
    """Errors in file order, each with its class and linked findings; then a summary."""
    lines = [f"hipport verify: {v.compiler.describe(v.target, v.arch)}"]
    for r in sorted(v.runs, key=lambda r: str(r.path)):
        if r.failure:
            lines.append(f"{_shown(r.path)}: not checked: {r.failure}")
    for path, (includer, line) in sorted(v.unreached.items(), key=lambda item: str(item[0])):
        lines.append(f"{_shown(path)}: not checked: included by {_shown(includer)}:{line}, "
                     "whose compile did not reach it (not a unit of its own)")
    for path in sorted(v.alone, key=str):
        lines.append(f"{_shown(path)}: compiled alone: no file of the tree includes it")
    for verdict in v.verdicts:
        d = verdict.diagnostic
        where = f"{_shown(d.path)}:{d.line}:{d.col}" if d.path else "hipcc"
        lines.append(f"{where}: {d.severity}: {d.message} [{verdict.kind}: {verdict.reason}]")
        if verdict.path != d.path:
            lines.append(f"    reached from {_shown(verdict.path)}:{verdict.line}"
                         + (f" (+{verdict.more} more errors there)" if verdict.more else ""))
        elif d.path != verdict.unit.resolve():
            lines.append(f"    compiled as part of {_shown(verdict.unit)}")
        for f in verdict.findings:
            lines.append(f"    {f.code} at line {f.line}: {f.message}")
    failed = v.failed()
    counts = ", ".join(f"{v.count(k)} {k}" for k in KINDS)
    total = len(v.verdicts) + sum(x.more for x in v.verdicts)
    lines.append(f"hipport verify: {len(v.runs)} files checked, {len(v.runs) - len(failed)} compile, "
                 f"{len(failed)} fail"
                 + (f", {len(v.unreached)} included files not reached" if v.unreached else "")
                 + (f", {len(v.alone)} headers no file includes compiled alone" if v.alone else "")
                 + f"; {total} errors ({len(v.verdicts)} judged): {counts}")
    return "\n".join(lines) + "\n"
