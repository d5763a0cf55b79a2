"""Compile benchmark: convert a corpus of CUDA programs, check each unit against the
target's HIP headers, and print how much compiles and whether hipport predicted the rest.

    python bench/compile.py                         # fixtures/ and examples/, both targets
    python bench/compile.py ~/cuda-programs         # any directory (or several)
    python bench/compile.py DIR --rocm 7.2.1 --json # one target, machine-readable
    python bench/compile.py DIR --compiler hipcc    # e.g. Debian's HIP 5.2 for comparison
    python bench/compile.py samples -I samples/Common  # an -I inside the corpus: its converted copy
    python bench/compile.py relion -D CUDA -D _CUDA_ENABLED  # the project build's -D

A *program* is each entry directly under a corpus directory (a subdirectory, or a file on
its own); it passes when every unit of it compiles. Units are the converted sources
``hipport verify`` checks (translation units, and headers no file includes, counted as
``alone``; a file that another file includes, even one convert copied unread such as
Eigen's ``Eigen/Core``, is checked through it, or counted as not reached). The first
error of each failing unit is reduced to a category (its message with names and numbers
blanked) and the commonest are listed. Not part of the test suite: it runs the compiler
on every unit (about 0.9 s each on 2 cores).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hipport import verify as V  # noqa: E402
from hipport import verify_units as U  # noqa: E402
from hipport.convert import convert, plan  # noqa: E402
from hipport.options import Options  # noqa: E402
from hipport.versions import parse_version  # noqa: E402

DEFAULT_CORPUS = [REPO / "fixtures", REPO / "examples"]
#: Golden outputs under fixtures/ are converted HIP already, not inputs.
EXCLUDE = ("expected",)
_QUOTED = re.compile(r"'[^']*'")
_NUMBER = re.compile(r"\b\d+\b")


def category(message: str) -> str:
    """``use of undeclared identifier 'umin'`` → ``use of undeclared identifier '…'``."""
    text = _QUOTED.sub("'…'", message.split("; did you mean")[0])
    return _NUMBER.sub("N", text)[:100]


def program_of(rel: str, roots: int) -> str:
    """The program a unit belongs to: ``prog/src/a.cu`` → ``prog`` (one corpus directory,
    converted into the output's root), ``corpus/prog/src/a.cu`` → ``corpus/prog`` (several,
    each converted into a subdirectory); a file directly in a corpus is its own program."""
    depth = 1 if roots == 1 else 2
    return "/".join(rel.split("/")[:depth])


def run(corpus: list[Path], rocm: str, *, compiler: str | None, arch: str, jobs: int,
        out: Path, includes: list[Path], engine: str = "tree-sitter",
        defines: tuple[str, ...] = (), undefines: tuple[str, ...] = ()) -> dict:
    target = parse_version(rocm)
    chosen = V.select(target, compiler=compiler)
    the_plan = plan(corpus, str(out), in_place=False, diff=False)
    options = Options(apply_fixes=True, rocm=target, exclude=EXCLUDE, jobs=jobs, engine=engine,
                      offload_arch=(arch,), defines=defines, undefines=undefines)
    units: list[U.Unit] = []
    start = time.monotonic()
    for _ in U.units_from_convert(the_plan, convert(the_plan, options, emit=lambda _: None), units):
        pass
    converted = time.monotonic() - start
    start = time.monotonic()
    cpu = _children_cpu()
    shared = U.converted_dirs(the_plan, includes)
    result = V.verify(units, compiler=chosen, target=target, arch=arch,
                      includes=[*shared, *U.include_roots(the_plan)], jobs=jobs,
                      macros=V.build_macros(options), project=U.include_roots(the_plan))
    wall = time.monotonic() - start
    cpu = _children_cpu() - cpu

    def rel(p: Path) -> str:
        return p.resolve().relative_to(out.resolve()).as_posix()

    failed = {rel(r.path) for r in result.failed()}
    programs: dict[str, bool] = {}
    # an -I directory inside the corpus (the samples' Common/) is no program of its own,
    # unless it compiles a translation unit of its own: a project whose build passes its
    # own root with -I (Eigen's, relion's) is still a program
    # (by path: Common/ given as a corpus of its own makes Common/helper_math.h, which no
    # sample includes and verify compiles alone, a program of that name otherwise)
    def under(path: str, folder: str) -> bool:
        return path == folder or path.startswith(folder + "/")

    inside = [rel(d) for d in shared if out.resolve() in d.resolve().parents]
    units = [rel(r.path) for r in result.runs if r.path.suffix.lower() in U.UNIT_SUFFIXES]
    helpers = {h for h in inside if not any(under(u, h) for u in units)}
    for r in result.runs:
        name = program_of(rel(r.path), len(corpus))
        if any(under(rel(r.path), h) for h in helpers):
            continue
        programs[name] = programs.get(name, True) and rel(r.path) not in failed
    first: dict[Path, V.Verdict] = {}
    for v in result.verdicts:
        first.setdefault(v.unit.resolve(), v)
    categories = collections.Counter(f"{category(v.diagnostic.message)} [{v.kind}]"
                                     for v in first.values())
    unpredicted = [f"{_where(v, out)}: {v.diagnostic.message}"
                   for v in result.verdicts if v.kind == V.UNPREDICTED]
    predicted = [v for v in result.verdicts if v.kind == V.PREDICTED]
    on_line = sum(1 for v in predicted if any(f.line <= v.line <= (f.end_line or f.line)
                                              for f in v.findings))
    runs = len(result.runs)
    return {
        "target": rocm,
        "engine": engine,
        "compiler": chosen.describe(target, arch),
        "units": runs,
        "units_pass": runs - len(failed),
        "programs": len(programs),
        "programs_pass": sum(programs.values()),
        "programs_failing": sorted(p for p, ok in programs.items() if not ok),
        "errors": {k: result.count(k) for k in V.KINDS},
        "errors_total": len(result.verdicts) + sum(v.more for v in result.verdicts),
        "predicted_on_line": on_line,
        "seconds_per_unit": round(sum(r.seconds for r in result.runs) / runs, 3) if runs else 0.0,
        "cpu_seconds_per_unit": round(cpu / runs, 3) if runs else 0.0,
        "wall_seconds": round(wall, 1),
        "convert_seconds": round(converted, 1),
        "first_errors": categories.most_common(12),
        "unpredicted": unpredicted,
        # counted apart from units pass/fail: not checked at all, or checked on their own
        "not_reached_count": len(result.unreached),
        "not_reached": [f"{rel(p)} (included by {rel(i)}:{n})" for p, (i, n) in sorted(result.unreached.items())],
        "alone_count": len(result.alone),
        "alone": sorted(rel(p) for p in result.alone),
        "verdicts": [[rel(v.unit), _where(v, out), v.kind, v.diagnostic.message]
                     for v in result.verdicts],
    }


def _where(v: V.Verdict, out: Path) -> str:
    """file:line of a verdict, relative to the output tree where it is inside it."""
    path = v.path
    if path is not None and out.resolve() in path.resolve().parents:
        path = path.resolve().relative_to(out.resolve())
    return f"{path}:{v.line}"


def _children_cpu() -> float:
    """User + system seconds of the finished child processes (the compiler runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def show(r: dict) -> str:
    pct = lambda a, b: f"{100 * a / b:.0f} %" if b else "-"  # noqa: E731
    lines = [f"== ROCm {r['target']} ({r['engine']} engine): {r['compiler']}",
             f"units    {r['units_pass']}/{r['units']} compile ({pct(r['units_pass'], r['units'])})",
             f"programs {r['programs_pass']}/{r['programs']} compile "
             f"({pct(r['programs_pass'], r['programs'])})",
             f"errors   {r['errors_total']} ({sum(r['errors'].values())} judged): "
             + ", ".join(f"{n} {k}" for k, n in r["errors"].items())
             + f" ({r['predicted_on_line']} of the predicted by a finding on the error's own line, "
             "the rest within a few lines or by name)",
             f"time     {r['seconds_per_unit']} s wall and {r['cpu_seconds_per_unit']} s CPU per unit "
             f"(the compiler's; {r['wall_seconds']} s wall for all; convert {r['convert_seconds']} s)",
             f"included files not reached by any unit (not checked alone): {len(r['not_reached'])}",
             f"headers no file includes, compiled alone (among the units): {len(r['alone'])}",
             "first errors of failing units:"]
    lines += [f"  {n:4d}  {c}" for c, n in r["first_errors"]]
    if r["unpredicted"]:
        lines.append("unpredicted errors:")
        lines += [f"  {u}" for u in r["unpredicted"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="*", type=Path, help="directories of CUDA programs "
                    "(default: the repository's fixtures/ and examples/)")
    ap.add_argument("--rocm", action="append", help="target (repeatable; default 7.2.1 and 6.3)")
    ap.add_argument("--compiler", help="as hipport verify --compiler")
    ap.add_argument("--offload-arch", default=V.DEFAULT_ARCH)
    ap.add_argument("--engine", choices=("tree-sitter", "clang"), default="tree-sitter",
                    help="convert's analysis engine (clang: libclang, as the compile tier uses "
                    "where installed)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-I", "--include-dir", action="append", type=Path, default=[],
                    help="extra include directory for the compiler (repeatable)")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                    help="a macro the HIP build defines, as convert -D (repeatable): for the "
                         "#if branches and the compile, as a project's build passes it")
    ap.add_argument("-U", "--undefine", action="append", default=[], metavar="NAME",
                    help="a macro the HIP build does not define, as convert -U (repeatable)")
    ap.add_argument("--keep", type=Path, help="keep the converted trees here")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    corpus = [p.resolve() for p in args.corpus] or DEFAULT_CORPUS
    results = []
    with tempfile.TemporaryDirectory(prefix="hipport-compile-bench-") as tmp:
        base = args.keep or Path(tmp)
        for rocm in args.rocm or ["7.2.1", "6.3"]:
            try:
                results.append(run(corpus, rocm, compiler=args.compiler, arch=args.offload_arch,
                                   jobs=args.jobs, out=base / f"rocm-{rocm}",
                                   includes=[p.resolve() for p in args.include_dir],
                                   engine=args.engine, defines=tuple(args.define),
                                   undefines=tuple(args.undefine)))
            except V.NoCompiler as e:
                print(f"compile bench: {e}", file=sys.stderr)
                return 2
            if not args.json:
                print(show(results[-1]), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
