"""``hipport convert``: where each converted file goes, and writing it there safely.

Destinations (documented in the README and ``hipport convert --help``):

* ``-o -``            one input file, HIP source to standard output;
* ``-o OUT`` (file)   one input file → OUT;
* ``-o DIR``          one input directory mirrored into DIR; several inputs each get
                      ``DIR/<input name>``; other files are copied so the tree builds;
* ``--in-place``      inputs overwritten, each kept as ``FILE.prehip`` unless ``--no-backup``;
* no ``-o``           ``FILE`` → ``FILE.hip``, ``DIR`` → ``DIR-hip`` beside it: never the input;
* ``--rename``        (a tree or in place) ``x.cu`` is written as ``x.hip``;
* ``--diff``          a unified diff on standard output; nothing written;
* ``--check``         nothing written or printed: the caller lists what would change
                      (with ``--diff`` too, the diff is printed).

The report goes to ``hipport-report.md`` in the output root unless ``--report`` says
otherwise.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hipport.files import atomic_write, backup, inside_root, output_path, read_bytes, resolved
from hipport.pipeline import FileResult, run_paths


class UsageError(ValueError):
    """Bad combination of inputs and outputs; exit status 2."""


@dataclass(frozen=True)
class Target:
    """Where one input's results go: a tree root, a single file, or the input itself."""

    input: Path
    root: Path | None = None  # mirror the input's relative paths under root
    file: Path | None = None  # the single output file for a single input file
    in_place: bool = False


@dataclass(frozen=True)
class Plan:
    targets: tuple[Target, ...]
    stdout: bool = False
    diff: bool = False
    check: bool = False  # write nothing; with diff, print the diff
    backup: bool = True
    report_dir: Path | None = None  # where hipport-report.md goes by default


def plan(inputs: list[Path], output: str | None, *, in_place: bool, diff: bool,
         backup: bool = True, check: bool = False) -> Plan:
    """Decide destinations before anything is read, so usage errors cost nothing."""
    if check:
        if output is not None or in_place:
            raise UsageError("--check writes nothing: it cannot be used with -o or --in-place")
        if not inputs:
            raise UsageError("no input paths given")
        return Plan(tuple(Target(i) for i in inputs), diff=diff, check=True)
    result = _plan(inputs, output, in_place=in_place, diff=diff, backup=backup)
    for t in result.targets:
        dest = t.root if t.root is not None else t.file
        if dest is not None and not t.in_place and _real(dest) == _real(t.input):
            raise UsageError(f"{t.input}: the output would overwrite the input "
                             "(use --in-place to mean that)")
    return result


def _plan(inputs: list[Path], output: str | None, *, in_place: bool, diff: bool,
          backup: bool) -> Plan:
    if not inputs:
        raise UsageError("no input paths given")
    if sum(bool(x) for x in (output, in_place, diff)) > 1:
        raise UsageError("choose one of -o/--output, --in-place and --diff")
    if diff:
        return Plan(tuple(Target(i) for i in inputs), diff=True)
    if in_place:
        targets = tuple(Target(i, in_place=True) for i in inputs)
        first = inputs[0]
        return Plan(targets, backup=backup, report_dir=first if first.is_dir() else first.parent)
    if output == "-":
        if len(inputs) != 1 or not inputs[0].is_file():
            raise UsageError("-o - (standard output) takes exactly one input file")
        return Plan((Target(inputs[0]),), stdout=True)
    if output is not None:
        out = Path(output)
        # Anything but a directory counts as a file here: a missing or broken input is an
        # error for the run to name, not a reason to make OUT a directory.
        single_file = len(inputs) == 1 and not inputs[0].is_dir()
        if single_file and not out.is_dir() and not output.endswith(("/", "\\")):
            return Plan((Target(inputs[0], file=out),), report_dir=out.parent)
        if len(inputs) == 1:
            inp = inputs[0]
            t = Target(inp, root=out) if inp.is_dir() else Target(inp, file=out / inp.name)
            return Plan((t,), report_dir=out)
        targets = tuple(
            Target(i, root=out / _name(i)) if i.is_dir() else Target(i, file=out / i.name)
            for i in inputs
        )
        return Plan(targets, report_dir=out)
    targets = tuple(
        Target(i, root=i.parent / f"{_name(i)}-hip") if i.is_dir()
        else Target(i, file=i.with_name(i.name + ".hip"))
        for i in inputs
    )
    first = targets[0]
    return Plan(targets, report_dir=first.root if first.root else first.file.parent)


def _name(p: Path) -> str:
    return Path(_real(p)).name or "input"


def _real(p: Path) -> str:
    """The real path, without raising on a looping link (discovery reports that)."""
    return os.path.realpath(p)


def write_root(target: Target) -> Path | None:
    """The root the writes for ``target`` must stay in: the input (its directory, for a
    file) with --in-place, the mirrored output tree with -o DIR; None for a single output
    file, which the user named exactly."""
    if target.in_place:
        return target.input if target.input.is_dir() else target.input.parent
    return target.root


def destination(target: Target, result: FileResult) -> Path:
    """Where ``result`` is written. ``result.rel`` carries ``--rename``'s new name
    (``x.cu`` → ``x.hip``), in place too; a single output file is the name the user gave."""
    if target.in_place:
        path = result.source.path
        name = Path(result.rel).name
        return path if name == path.name else path.with_name(name)
    if target.file is not None:
        return target.file
    return output_path(target.root, Path(result.rel))


def convert(plan_: Plan, options, emit=print,
            observe: Callable[[FileResult], None] | None = None) -> Iterator[FileResult]:
    """Run the pipeline for each target and write (or print) what it produced.

    Yields every result, after its write, so the caller can build the report and show
    progress; ``observe(result)`` is called before the write (``--statistics`` reads the
    original bytes then). A write error turns that result into an error; the run goes on.
    """
    for target in plan_.targets:
        avoid = target.root if target.root is not None else None
        for result in run_paths([target.input], options, avoid=avoid):
            if observe is not None:
                observe(result)
            if result.status != "error" and result.source is not None:
                _deliver(plan_, target, result, emit)
            yield result


def _deliver(plan_: Plan, target: Target, result: FileResult, emit) -> None:
    src_path = result.source.path
    if plan_.check and not plan_.diff:
        return
    if plan_.diff:
        if result.output is not None:
            emit(unified_diff(src_path, read_bytes(src_path), result.output))
        return
    if plan_.stdout:
        data = result.output if result.output is not None else read_bytes(src_path)
        emit(data.decode("utf-8", "surrogateescape"))
        return
    try:
        dest = destination(target, result)
        root = write_root(target)
        if root is not None and not inside_root(dest, root):
            raise ValueError(f"{resolved(dest)} is outside {root} (through a symbolic link): "
                             "not written")
        renamed = dest.name != src_path.name and target.file is None
        if renamed and src_path.with_name(dest.name).exists():
            raise ValueError(f"--rename would write {dest.name}, but the input has a file of "
                             "that name: rename one of them by hand")
        if target.in_place and renamed:
            atomic_write(dest, result.output if result.output is not None else read_bytes(src_path),
                         mode_from=src_path)
            if plan_.backup:
                backup(src_path)
            os.unlink(src_path)  # the tree now names x.hip: a stale x.cu would be built twice
            result.written_to = str(dest)
            return
        if target.in_place:
            if result.output is not None:
                if plan_.backup:
                    backup(src_path)
                atomic_write(src_path, result.output, mode_from=src_path)
            return
        if resolved(dest) == resolved(src_path):
            raise ValueError("output would overwrite the input (use --in-place to mean that)")
        data = result.output if result.output is not None else read_bytes(src_path)
        atomic_write(dest, data, mode_from=src_path)
        result.written_to = str(dest)
    except (OSError, ValueError) as e:
        result.status = "error"
        result.error = f"cannot write output: {getattr(e, 'strerror', None) or e}"


def unified_diff(path: Path, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    b = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    name = path.as_posix()
    return "".join(difflib.unified_diff(a, b, f"a/{name}", f"b/{name}"))
