"""What every command of the CLI shares: flags from the options table, Options from flags
and [tool.hipport] (strictly checked), colour, progress and output helpers.

Kept apart from ``cli`` so that the commands read as what they do. Like ``cli`` it imports
nothing heavy at module level: ``hipport --version`` pays for click and the options table
only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from hipport.options import Field, Options
    from hipport.pipeline import FileResult
    from hipport.statistics import Statistics

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class Group(click.Group):
    """The ``hipport`` group: Ctrl-C ends any command with 130 (the shell's convention for
    SIGINT) and one line, not click's "Aborted!" with 1, which CI reads as "findings"."""

    def invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\nhipport: interrupted", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


# -- flags from the table ---------------------------------------------------------------

def _click_option(f: "Field"):
    """The click flag of one row of the options table (hipport.options.FIELDS)."""
    names = [n for n in (f.short, f.flag) if n]
    kw: dict = {"help": f.help, "metavar": f.metavar}
    if f.kind == "switch":
        kw.update(is_flag=True, default=None)
    elif f.kind == "off":
        kw.update(is_flag=True, flag_value=False, default=None)
    elif f.kind == "multiple":
        kw.update(multiple=True)
    else:
        kw["default"] = None
    if f.choices:
        kw["type"] = click.Choice(f.choices)
        kw.pop("metavar")
    return click.option(*names, f.name, **kw)


def table_options(command: str):
    """Every flag of ``command`` from the options table (hipport.options.FIELDS)."""
    from hipport.options import fields_for

    def decorate(f):
        for row in reversed(fields_for(command)):
            f = _click_option(row)(f)
        return f
    return decorate


def common_options(f):
    """Flags of every command that reads sources: which config, and how much to say."""
    f = click.option("-q", "--quiet", is_flag=True, help="No summary or progress on standard error.")(f)
    return click.option(
        "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="pyproject.toml to read [tool.hipport] from (default: nearest to the first input).")(f)


def stdin_option(f):
    return click.option(
        "--stdin-filename", metavar="NAME", default=None,
        help="With - as the input: the name standard input is read as; its extension decides "
             "whether it is a source, and findings name it (default stdin.cu).")(f)


def statistics_option(f):
    return click.option(
        "--statistics", is_flag=True,
        help="Counts instead of a listing: findings per rule, and CUDA names per API family "
             "(converted, left for a person, unknown to the tables).")(f)


def color_option(f):
    return click.option(
        "--color", type=click.Choice(["auto", "always", "never"]), default="auto",
        help="Colour the text output: auto (default) on a terminal, unless NO_COLOR is set "
             "(FORCE_COLOR forces it).")(f)


# -- Options from flags and config -------------------------------------------------------

def build_options(ctx: click.Context, paths: list[Path], **fixed) -> "Options":
    """Flags → Options over [tool.hipport] and the defaults, then the strict checks: an
    unknown code or key, or a release the tables do not describe, is a usage error."""
    from hipport.options import (
        ConfigError, fields_for, find_project_config, read_project_config, resolve,
    )
    from hipport.strict import check as strict_check

    p = ctx.params
    given = {f.name: p[f.name] for f in fields_for(ctx.command.name or "")
             if p.get(f.name) is not None and p.get(f.name) != ()}
    first = next((q for q in paths if str(q) != "-"), Path.cwd())
    config = p.get("config_path") or find_project_config(first)
    try:
        table = read_project_config(config) if config is not None else {}
        opts = resolve(given, table, config, **fixed)
        if "mappings" in table:
            from hipport.usermaps import read

            opts = opts.with_(mappings=read(table["mappings"], config))
        use_cache = ctx.command.name == "check" and not p.get("no_cache")
        strict_check(opts, given, table, config, lambda: _rule_codes(use_cache))
    except ConfigError as e:
        raise click.UsageError(str(e)) from e
    if opts.engine == "clang":
        from hipport.deep import ClangUnavailable, check_setup  # libclang itself loads lazily

        try:
            check_setup(opts)
        except ClangUnavailable as e:
            raise click.UsageError(str(e)) from e
    elif opts.compile_commands is not None or opts.clang_args:
        raise click.UsageError("-p and --clang-arg apply only with --engine clang")
    return opts


def _rule_codes(use_cache: bool) -> list[str]:
    from hipport.strict import rule_codes

    if not use_cache:
        return rule_codes(None)
    from hipport.datafiles import cache_dir

    return rule_codes(cache_dir())


# -- output -------------------------------------------------------------------------------

def use_color(choice: str, stream: TextIO) -> bool:
    """--color, then NO_COLOR (any non-empty value: off) and FORCE_COLOR (on), then a terminal.

    An explicit ``--color always/never`` wins over the environment, as the flag is the
    nearer intent (the no-color.org convention)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def with_progress(results: "Iterable[FileResult]", quiet: bool, inputs: list[Path] | None = None,
                  opts: "Options | None" = None) -> "Iterator[FileResult]":
    """Results as they are, with a progress line on a terminal unless --quiet: N/M files
    once the tree is counted (a second listing, in a thread), rate, ETA; the current file
    is the last *source* finished."""
    from hipport.progress import track

    total = None
    if inputs is not None and opts is not None:
        from hipport.files import discover

        total = lambda: discover(inputs, opts)  # noqa: E731 - a thunk for the counting thread
    return track(results, describe=lambda r: r.path if r.status != "other" else None,
                 total=total, enabled=False if quiet else None)


def observed(results: "Iterable[FileResult]", stats: "Statistics | None",
             opts: "Options") -> "Iterator[FileResult]":
    """``results`` unchanged, each counted into ``stats`` (when --statistics) on the way."""
    for r in results:
        if stats is not None:
            stats.add_result(r, opts)
        yield r


def stdin_given(inputs: list[Path]) -> bool:
    """Whether the input is ``-`` alone (standard input); ``-`` among paths is a usage error."""
    from hipport.stdin import StdinError, wants_stdin

    try:
        return wants_stdin(inputs)
    except StdinError as e:
        raise click.UsageError(str(e)) from e


def new_statistics(ctx: click.Context) -> "Statistics | None":
    """A Statistics to fill when --statistics was given, else None."""
    if not ctx.params.get("statistics"):
        return None
    from hipport.statistics import Statistics

    return Statistics()


def print_statistics(stats: "Statistics", err: bool = False) -> None:
    from hipport.statistics import render

    click.echo(render(stats), nl=False, err=err)


def print_check(report, output_format: str, color: str) -> None:
    """The gate's findings on standard output in the chosen format."""
    from hipport.check import format_finding, format_github

    if output_format in ("json", "sarif"):
        from hipport.report import render

        with_rules(report)
        click.echo(render(report, output_format), nl=False)
        return
    if output_format == "github":
        for f in report.findings:
            click.echo(format_github(f))
        return
    paint = use_color(color, sys.stdout)
    for f in report.findings:
        line = format_finding(f)
        if paint:  # the location bold, the code and severity coloured by severity, as compilers do
            where, _, rest = line.partition(": ")
            tone = "red" if f.severity >= f.severity.HIGH else "yellow"
            line = click.style(where + ":", bold=True) + " " + click.style(
                f"{f.code} {f.severity}", fg=tone, bold=True) + rest[len(f"{f.code} {f.severity}"):]
        click.echo(line, color=paint)


def summary_line(report) -> str:
    """One line for standard error: files by outcome, rewrites, findings by severity."""
    s = report.summary()
    parts = [f"{s['files']} files"] + [f"{n} {k}" for k, n in s["files_by_status"].items()]
    sev = ", ".join(f"{n} {k}" for k, n in s["by_severity"].items() if n) or "none"
    verb = "rewrites" if report.command == "convert" else "rewrites possible"
    line = f"hipport: {', '.join(parts)}; {s['rewrites']} {verb}; findings: {sev}"
    if s["fixed"]:
        line += f" ({s['fixed']} fixed)"
    return line


def write_report(report, dest: Path, fmt: str | None) -> None:
    from hipport.files import atomic_write
    from hipport.report import render

    fmt = fmt or format_for(dest)
    atomic_write(dest, render(report, fmt).encode("utf-8"))


def format_for(path: Path) -> str:
    return {".json": "json", ".sarif": "sarif", ".html": "html", ".htm": "html",
            ".txt": "text", ".md": "markdown"}.get(path.suffix.lower(), "markdown")


def print_errors(report) -> None:
    """Every per-file error, and every file skipped with a reason (a FIFO, a link out of
    the tree, a binary source), on standard error: whatever else fails, none goes unnamed."""
    for f in report.files:
        if f.status == "error":
            click.echo(f"hipport: error: {f.path}: {f.message}", err=True)
        elif f.status == "skipped" and f.message:
            click.echo(f"hipport: warning: {f.path}: skipped: {f.message}", err=True)


def with_rules(report) -> None:
    """Fill ``report.rules`` for the findings it has (SARIF and JSON describe each rule)."""
    from hipport import rules

    registry = rules.load().rules
    report.rules = {c: registry[c] for c in sorted({f.code for f in report.findings}) if c in registry}


def stdout_bytes(data: str | bytes) -> None:
    out = sys.stdout.buffer
    out.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
    out.flush()


#: One example per option that is not in the options table (those carry their own).
EXAMPLES: dict[str, str] = {
    "output": "-o hip/", "in_place": "--in-place", "no_backup": "--in-place --no-backup",
    "diff": "--diff", "check_only": "--check --diff", "report_path": "--report port.html",
    "no_report": "--no-report", "verify": "--verify", "offload_arch": "--offload-arch gfx942",
    "compiler": "--compiler clang++-19", "fetch_headers": "--fetch-headers",
    "stdin_filename": "--stdin-filename src/k.cu",
    "statistics": "--statistics", "color": "--color never", "config_path": "--config ci/pyproject.toml",
    "quiet": "-q", "fmt": "-f json", "baseline_path": "--baseline .hipport-baseline.json",
    "write_baseline_path": "--write-baseline .hipport-baseline.json", "no_cache": "--no-cache",
    "output_format": "--output-format github", "fail_under": "--fail-under 60",
    "no_kernels": "--no-kernels",
}


def add_examples(group: click.Group) -> None:
    """End every option's --help text with its one example (README lists the same)."""
    from hipport.options import FIELDS

    table = {f.name: f.example for f in FIELDS}
    for command in group.commands.values():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and param.name in (table | EXAMPLES):
                example = table.get(param.name) or EXAMPLES[param.name]
                if "Example:" not in (param.help or ""):
                    param.help = f"{param.help} Example: {example}"


def convert_stdin(ctx: click.Context, opts: "Options", output: str | None, *, diff: bool,
                  check_only: bool, in_place: bool, stats: "Statistics | None") -> int:
    """``convert -``: standard input to standard output (or -o FILE, --diff, --check)."""
    from hipport.convert import unified_diff
    from hipport.files import atomic_write
    from hipport.pipeline import collect, exit_status
    from hipport.stdin import process_stdin

    if in_place or ctx.params["verify"]:
        raise click.UsageError("- (standard input) cannot be converted --in-place or --verify'd")
    if diff and output is not None:
        raise click.UsageError("choose one of -o/--output and --diff")
    result, data = process_stdin(opts, ctx.params["stdin_filename"])
    new = result.output if result.output is not None else data
    if diff or check_only:
        if diff and result.output is not None:
            stdout_bytes(unified_diff(Path(result.path), data, result.output))
    elif output is None or output == "-":
        stdout_bytes(new)
    else:
        try:
            atomic_write(Path(output), new)
        except OSError as e:
            result.status, result.error = "error", f"{output}: cannot write output: {e.strerror or e}"
    report = collect([result], opts, "convert --check" if check_only else "convert")
    if ctx.params["report_path"] is not None and not ctx.params["no_report"]:
        try:
            write_report(report, ctx.params["report_path"], None)
        except OSError as e:
            click.echo(f"hipport: error: {ctx.params['report_path']}: cannot write report: {e.strerror or e}", err=True)
            return EXIT_USAGE
    print_errors(report)
    if check_only and result.output is not None:
        click.echo(f"hipport: would convert {result.path}", err=True)
    if stats is not None:
        stats.add_findings(result.findings)
        stats.add_file(Path(result.path), opts, data)
        print_statistics(stats, err=True)
    if not ctx.params["quiet"]:
        click.echo(summary_line(report), err=True)
    status = exit_status(report, opts.fail_on if ctx.params.get("fail_on") else None)
    return max(status, EXIT_FINDINGS) if check_only and result.output is not None else status
