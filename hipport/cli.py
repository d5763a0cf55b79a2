"""The command line: click commands that parse flags into Options and call one function.

No logic lives here: flags come from the options table (``hipport.options.FIELDS``, through
``hipport.cliopts``) and each command calls the stage that does its job. Heavy modules
(tree-sitter, the mapping tables) are imported inside the commands so that
``hipport --version`` and ``--help`` start instantly.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hipport import __version__
from hipport.cliopts import (
    EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Group, add_examples, build_options, color_option, common_options,
    convert_stdin,
    new_statistics, observed, print_check, print_errors, print_statistics, statistics_option,
    stdin_given, stdin_option, stdout_bytes, summary_line, table_options, with_progress,
    write_report,
)

if TYPE_CHECKING:
    from hipport.options import Options


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="hipport")
def main() -> None:
    """Port CUDA to ROCm/HIP with a real parser, and report what needs a person.

    \b
      hipport convert src/ -o hip/      rewrite CUDA sources as HIP (+ hipport-report.md)
      hipport scan src/                 the porting-risk report alone, no files written
      hipport check a.cu b.cuh          the commit gate (pre-commit, CI)
      hipport deps path/to/repo         how portable a research repository is to ROCm
      hipport map cudaMalloc            a name's mapping across ROCm releases
      hipport rules [HP201]             the rule catalogue, or one rule's page

    Targets: --rocm 6.3 or --rocm 7.2.1 (default). A PATH of - reads standard input.
    Exit status: 0 ok, 1 findings at or above --fail-on (or files --check would change),
    2 usage or I/O errors, 130 interrupted.
    """


# -- verify -------------------------------------------------------------------------

def _compile_options(f):
    """Flags for the compile check, shared by ``convert --verify`` and ``verify`` (the GPU
    it checks for is the first ``--offload-arch``, a flag of the options table)."""
    return click.option("--compiler", metavar="EXE", default=None,
                        help="clang to check with (against the nearest cached HIP header set), "
                             "or a hipcc to use as it is. Default: the target's ROCm if installed, "
                             "else the newest clang++-22..19.")(f)


def _run_verify(ctx: click.Context, opts: "Options", units: list, roots: list[Path],
                includes: list[Path] | None = None) -> int:
    from hipport.pipeline import effective_jobs
    from hipport.verify import DEFAULT_ARCH, build_macros, run_and_report

    # the check is for one GPU: the first --offload-arch
    arch = opts.offload_arch[0].split(":")[0] if opts.offload_arch else DEFAULT_ARCH
    return run_and_report(units, target=opts.rocm, arch=arch,
                          includes=[*(opts.include_dirs if includes is None else includes),
                                    *roots],
                          jobs=effective_jobs(opts), echo=click.echo,
                          compiler=ctx.params["compiler"], macros=build_macros(opts), project=roots)


def _fetch_headers(ctx: click.Context) -> None:
    from hipport.headers import HeaderError, fetch

    try:
        fetch(echo=lambda line: click.echo(f"hipport verify: {line}", err=True))
    except HeaderError as e:
        click.echo(f"hipport: verify: {e}", err=True)
        ctx.exit(EXIT_USAGE)


@main.command("verify")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--fetch-headers", is_flag=True,
              help="First build the HIP 6.2 and 7.1 header sets under the cache from Triton's "
                   "wheels on PyPI (pip download; the only network access hipport makes).")
@_compile_options
@table_options("verify")
@common_options
@click.pass_context
def verify_command(ctx: click.Context, paths: tuple[Path, ...], fetch_headers: bool,
                   **_: object) -> None:
    """Syntax-check converted HIP code against the target release's HIP headers, linking
    each error to findings.

    \b
    The compiler, for the --rocm target:
      1. the installed ROCm (HIPCC, ROCM_PATH, hipcc/amdclang++ on PATH, /opt/rocm)
         when its HIP version is the target's;
      2. else clang (--compiler, default the newest clang++-22..19 on PATH) with the
         cached header set nearest the target (HIP 6.2 for 6.3, 7.1 for 7.2.1), built
         once by `hipport verify --fetch-headers`.
    The first output line says which was used.

    Each translation unit is checked host and device side (-fsyntax-only); headers through
    the units that include them, or alone. Every error is classed: predicted (a finding
    spanning its line, or the line of the macro it was expanded from), older-compiler (it names a HIP API the tables date after the
    headers' version), not-installed (a ROCm library's header is missing here) or
    unpredicted (a gap in hipport's rules).

    Exit status: 0 when everything compiles or fails only for older-compiler/not-installed
    reasons, 1 on other compile errors, 2 when no compiler or header set is available.
    """
    from hipport.verify_units import units_from_paths

    if fetch_headers:
        _fetch_headers(ctx)
        if not paths:
            ctx.exit(0)
    elif not paths:
        raise click.UsageError("give the converted files or directories to check "
                               "(or --fetch-headers)")
    inputs = list(paths)
    opts = build_options(ctx, inputs)
    roots = [p if p.is_dir() else p.parent for p in inputs]
    ctx.exit(_run_verify(ctx, opts, units_from_paths(inputs, opts), roots))


# -- convert ------------------------------------------------------------------------

@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", metavar="PATH",
              help="Output file (one input file), directory (mirrors the tree), or - for stdout.")
@click.option("--in-place", is_flag=True, help="Overwrite the inputs, keeping FILE.prehip backups.")
@click.option("--no-backup", is_flag=True, help="With --in-place: keep no .prehip backups.")
@click.option("--diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 and list the files a conversion would change "
                   "(with --diff, print their diff too).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the report (format from the extension: .md .json .sarif .html .txt).")
@click.option("--no-report", is_flag=True, help="Write no report file.")
@click.option("--verify", is_flag=True,
              help="Then syntax-check the written units (see hipport verify --help).")
@_compile_options
@stdin_option
@statistics_option
@table_options("convert")
@common_options
@click.pass_context
def convert(ctx: click.Context, paths: tuple[Path, ...], output: str | None, in_place: bool,
            no_backup: bool, diff: bool, check_only: bool, report_path: Path | None,
            no_report: bool, quiet: bool, **_: object) -> None:
    """Rewrite CUDA sources as HIP for the target ROCm release.

    \b
    Where output goes:
      hipport convert a.cu -o a.hip         one file
      hipport convert src/ -o hip/          mirror a tree (other files copied)
      hipport convert a.cu -o -             to standard output
      cat a.cu | hipport convert - -o -     standard input to standard output
      hipport convert src/ --in-place       overwrite, keeping FILE.prehip backups
      hipport convert src/ --diff           show a unified diff, write nothing
      hipport convert src/ --check          exit 1 if anything would change (CI)
      hipport convert src/                  src-hip/ beside src/ (a.cu alone: a.cu.hip)

    The porting-risk report goes to hipport-report.md in the output root (--report to
    choose, --no-report for none). Names the target cannot map are left as written and
    reported, never guessed.
    """
    from hipport.convert import UsageError, convert as run_convert, plan
    from hipport.pipeline import collect, exit_status

    inputs = list(paths)
    opts = build_options(ctx, inputs, apply_fixes=True)
    stats = new_statistics(ctx)
    if stdin_given(inputs):
        ctx.exit(convert_stdin(ctx, opts, output, diff=diff, check_only=check_only,
                                in_place=in_place, stats=stats))
    try:
        the_plan = plan(inputs, output, in_place=in_place, diff=diff, backup=not no_backup,
                        check=check_only)
    except UsageError as e:
        raise click.UsageError(str(e)) from e
    if ctx.params["verify"] and (the_plan.diff or the_plan.stdout or the_plan.check):
        raise click.UsageError("--verify checks written files: it cannot be used with -o -, --diff or --check")
    units: list = []
    observe = (lambda r: stats.add_result(r, opts)) if stats is not None else None
    results = with_progress(run_convert(the_plan, opts, stdout_bytes, observe), quiet, inputs, opts)
    if ctx.params["verify"]:
        from hipport.verify_units import units_from_convert

        results = units_from_convert(the_plan, results, units)
    # Under --check nothing is converted: statuses read "would convert", as in scan.
    report = collect(results, opts, "convert --check" if the_plan.check else "convert")
    dest = report_path
    if dest is None and not no_report and the_plan.report_dir is not None:
        dest = the_plan.report_dir / "hipport-report.md"
    print_errors(report)  # first: a report that cannot be written must not hide them
    if dest is not None and not no_report:
        try:
            write_report(report, dest, None)
        except OSError as e:
            click.echo(f"hipport: error: {dest}: cannot write report: {e.strerror or e}", err=True)
            ctx.exit(EXIT_USAGE)
    changed = [f.path for f in report.files if f.status in ("converted", "would convert")]
    if the_plan.check:
        for path in changed:
            click.echo(f"hipport: would convert {path}", err=True)
    if stats is not None:
        print_statistics(stats, err=True)
    if not quiet:
        line = summary_line(report)
        if dest is not None and not no_report:
            line += f"; report: {dest}"
        click.echo(line, err=True)
    status = exit_status(report, opts.fail_on if ctx.params.get("fail_on") else None)
    if the_plan.check and changed:
        status = max(status, EXIT_FINDINGS)
    if ctx.params["verify"]:
        from hipport.verify_units import converted_dirs, include_roots

        status = max(status, _run_verify(ctx, opts, units, include_roots(the_plan),
                                         converted_dirs(the_plan, opts.include_dirs)))
    ctx.exit(status)


# -- scan ---------------------------------------------------------------------------

@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "markdown", "json", "sarif", "html"]),
              default="text", help="Report format (default text; colored on a terminal).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report to a file instead of standard output.")
@color_option
@stdin_option
@statistics_option
@table_options("scan")
@common_options
@click.pass_context
def scan(ctx: click.Context, paths: tuple[Path, ...], fmt: str, output: Path | None,
         quiet: bool, color: str, **_: object) -> None:
    """Report what needs a person to port PATHS to HIP; writes no sources.

    Every finding has a stable rule code (hipport rules CODE explains it), a severity, the
    exact line, and what to do. Suppress one with // hipport: ignore[HP201]. With
    --statistics, counts per rule and per API family are printed instead of the report.
    """
    from hipport.cliopts import use_color
    from hipport.pipeline import collect, exit_status, scan_paths
    from hipport.report import render

    inputs = list(paths)
    opts = build_options(ctx, inputs)
    stats = new_statistics(ctx)
    if stdin_given(inputs):
        from hipport.stdin import process_stdin

        result, data = process_stdin(opts, ctx.params["stdin_filename"])
        if stats is not None:
            stats.add_findings(result.findings)
            stats.add_file(Path(result.path), opts, data)
        results = [result]
    else:
        results = observed(with_progress(scan_paths(inputs, opts), quiet, inputs, opts), stats, opts)
    report = collect(results, opts, "scan")
    if output is not None:
        print_errors(report)  # first: a report that cannot be written must not hide them
        try:
            write_report(report, output, fmt)
        except OSError as e:
            click.echo(f"hipport: error: {output}: cannot write report: {e.strerror or e}", err=True)
            ctx.exit(EXIT_USAGE)
    if stats is not None:
        print_statistics(stats)
    elif output is None:
        paint = fmt == "text" and use_color(color, sys.stdout)
        click.echo(render(report, fmt, color=paint), nl=False, color=paint)
    if output is None:
        print_errors(report)  # on standard error too, so a redirected report still shows them
    if not quiet and (output is not None or fmt != "text" or stats is not None):
        click.echo(summary_line(report), err=True)
    ctx.exit(exit_status(report, opts.fail_on if ctx.params.get("fail_on") else None))


# -- check --------------------------------------------------------------------------

@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--baseline", "baseline_path", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Fail only on findings not recorded in FILE (made with --write-baseline).")
@click.option("--write-baseline", "write_baseline_path", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Record every current finding in FILE and exit 0 (2 on errors).")
@click.option("--no-cache", is_flag=True,
              help="Neither read nor write the result cache ($HIPPORT_CACHE_DIR, else ~/.cache/hipport).")
@click.option("--output-format", "output_format", type=click.Choice(["text", "github", "json", "sarif"]),
              default="text", help="text: compiler-style lines (default); github: GitHub Actions "
                                   "annotations; json or sarif: the report.")
@color_option
@stdin_option
@statistics_option
@table_options("check")
@common_options
@click.pass_context
def check(ctx: click.Context, paths: tuple[Path, ...], baseline_path: Path | None,
          write_baseline_path: Path | None, no_cache: bool, output_format: str, color: str,
          quiet: bool, **_: object) -> None:
    """The commit gate: exit 1 when FILES have findings at or above --fail-on.

    \b
    One line per finding, compiler style:
      src/reduce.cu:12:5: HP201 high: ... [warp-mask-32bit]
    Exit status: 0 clean, 1 findings at or above --fail-on, 2 unreadable files or bad
    configuration. Results are cached by file content, target and options. For an
    existing codebase, record today's findings once with --write-baseline and gate new
    code with --baseline. Suppress one finding with // hipport: ignore[HP201].
    """
    from hipport.check import BaselineError, gate, run_check, write_baseline

    if baseline_path is not None and write_baseline_path is not None:
        raise click.UsageError("--baseline and --write-baseline do not go together")
    inputs = list(paths)
    opts = build_options(ctx, inputs)
    stats = new_statistics(ctx)
    try:
        if stdin_given(inputs):
            from hipport.stdin import process_stdin

            result, data = process_stdin(opts.with_(apply_fixes=False), ctx.params["stdin_filename"])
            run = gate([result], opts, baseline_path)
            if stats is not None:
                stats.add_file(Path(result.path), opts, data)
        else:
            run = run_check(inputs, opts, baseline=baseline_path, use_cache=not no_cache)
            if stats is not None:
                for outcome in run.report.files:
                    if outcome.status in ("would convert", "unchanged"):
                        stats.add_file(Path(outcome.path), opts)
        print_errors(run.report)
        if write_baseline_path is not None:
            if run.report.errors:
                click.echo(f"hipport: baseline not written: {len(run.report.errors)} file(s) failed", err=True)
                ctx.exit(EXIT_USAGE)
            n = write_baseline(write_baseline_path, run.report.findings)
            if not quiet:
                click.echo(f"hipport: {n} findings recorded in {write_baseline_path}", err=True)
            ctx.exit(EXIT_OK)
    except BaselineError as e:
        click.echo(f"hipport: error: {e}", err=True)
        ctx.exit(EXIT_USAGE)
    if stats is not None:
        stats.add_findings(run.report.findings)
        print_statistics(stats)
    else:
        print_check(run.report, output_format, color)
    if not quiet and (run.report.findings or run.status):
        line = summary_line(run.report)
        if baseline_path is not None:
            line += f"; {run.baselined} baselined"
        click.echo(line, err=True)
    if not quiet and run.report.findings:
        from hipport.report.text import how_to_read

        worst = sorted(run.report.findings, key=lambda f: (-f.severity, f.code))
        click.echo(how_to_read([worst[0].code]), err=True)
    ctx.exit(run.status)


# -- sync ---------------------------------------------------------------------------

@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@table_options("sync")
@common_options
@click.pass_context
def sync(ctx: click.Context, paths: tuple[Path, ...], quiet: bool, **_: object) -> None:
    """Regenerate the HIP twins declared in [tool.hipport.sync]; exit 1 if any changed.

    \b
      [tool.hipport.sync]
      pairs = [["src/a.cu", "hip/a.hip"]]
      dirs = [["src/cuda", "src/hip"]]
      rename = { ".cu" = ".hip" }
    With PATHS (pre-commit passes the staged files), only the twins of those sources, or
    those twins themselves, are regenerated. Changed twins are left in place to be staged.
    """
    from hipport.options import ConfigError, find_project_config
    from hipport.sync import display, exit_status, read_twins, regenerate, select

    opts = build_options(ctx, [Path.cwd()])
    config = ctx.params.get("config_path") or find_project_config(Path.cwd())
    if config is None:
        raise click.UsageError("no pyproject.toml with [tool.hipport.sync] here or above")
    try:
        twins = select(read_twins(config, opts), paths)
    except ConfigError as e:
        raise click.UsageError(str(e)) from e
    results = [regenerate(t, opts) for t in twins]
    for r in results:
        if r.status == "regenerated":
            click.echo(f"hipport sync: regenerated {display(r.twin.twin)} from {display(r.twin.source)}")
        elif r.status == "error":
            click.echo(f"hipport: error: {r.error}", err=True)
    if not quiet and results:
        changed = sum(r.status == "regenerated" for r in results)
        click.echo(f"hipport sync: {len(results)} twins, {changed} regenerated", err=True)
    ctx.exit(exit_status(results))


# -- deps ---------------------------------------------------------------------------

@main.command("deps")
@click.argument("repos", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "markdown", "json", "jsonl", "html", "sarif"]),
              default="text", help="Output format; jsonl prints one line per repository (batch scoring); "
                                   "sarif is one log with a run per repository.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to a file instead of standard output.")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="SCORE",
              help="Exit 1 when any repository scores below SCORE.")
@click.option("--no-kernels", is_flag=True, help="Do not scan the repository's own CUDA/C++ sources.")
@table_options("deps")
@click.pass_context
def deps_command(ctx: click.Context, repos: tuple[Path, ...], fmt: str, output: Path | None,
                 fail_under: float | None, no_kernels: bool, **_: object) -> None:
    """Score how portable research REPOS are to ROCm (0-100, grade A-F) and say what blocks them.

    Reads requirements*.txt, pyproject.toml, setup.py/setup.cfg (parsed, never run),
    environment.yml, Dockerfiles, .gitmodules and the Python imports; scans the repository's
    own CUDA sources with the HP rules. Every lost point is attributed in the output.
    """
    from hipport.deps import assess_or_fail
    from hipport.deps.model import Failure
    from hipport.report.deps import render_all

    if len(repos) > 1 and fmt not in ("jsonl", "text", "sarif"):
        click.echo("hipport: error: several repositories need --format jsonl (or text, sarif)", err=True)
        ctx.exit(EXIT_USAGE)
    # Each repository with its own [tool.hipport]; a broken one is a Failure, not the end.
    results = [assess_or_fail(r, lambda r=r: build_options(ctx, [r]), scan_own_sources=not no_kernels)
               for r in repos]
    failures = [a for a in results if isinstance(a, Failure)]
    for f in failures:
        click.echo(f"hipport: error: {f.root}: {f.message}", err=True)
    results = [a for a in results if not isinstance(a, Failure) or fmt in ("jsonl", "text")]
    text = render_all(results, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as e:
            click.echo(f"hipport: error: {output}: cannot write: {e.strerror or e}", err=True)
            ctx.exit(EXIT_USAGE)
    scored = [a for a in results if not isinstance(a, Failure)]
    for a in scored:
        for issue in a.issues:
            click.echo(f"hipport: warning: {a.root}/{issue}", err=True)
    below = fail_under is not None and any(a.score < fail_under for a in scored)
    ctx.exit(EXIT_USAGE if failures else EXIT_FINDINGS if below else EXIT_OK)


# -- rules --------------------------------------------------------------------------

@main.command("rules")
@click.argument("code", required=False)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", help="text (default), json, or markdown (a docs page).")
def rules_command(code: str | None, fmt: str) -> None:
    """List every rule, or print one rule's page: hipport rules HP201.

    CODE may also be a slug (warp-mask-32bit). The list shows each rule's code, severity,
    slug, the ROCm releases it applies to, and title.
    """
    from hipport.report import catalog
    from hipport.rules import load

    rules = load().rules
    if code is None:
        click.echo(catalog.render_list(rules.values(), fmt), nl=False)
        return
    rule = catalog.find(rules, code)
    if rule is None:
        click.echo(catalog.unknown_message(rules, code), err=True)
        raise click.exceptions.Exit(EXIT_USAGE)
    click.echo(catalog.render_page(rule, fmt), nl=False)


# -- map ----------------------------------------------------------------------------

@main.command("map")
@click.argument("name")
@table_options("map")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="text (default) or json.")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Deprecated: -f json.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="pyproject.toml to read [tool.hipport] (and its project "
                                 "mappings) from (default: nearest to the working directory).")
@click.pass_context
def map_command(ctx: click.Context, name: str, fmt: str, as_json: bool, **_: object) -> None:
    """Show NAME's mapping across ROCm releases: family, kind, HIP/ROC names, version cells
    and the status for 6.3, 7.2.1 (and --rocm VERSION).

    NAME may be a CUDA name (cudaStreamCopyAttributes), a HIP or ROC name (hipMalloc: the
    CUDA names that map to it), a macro (CUDA_VERSION), a namespace (cub) or a header
    (cub/cub.cuh). A project mapping ([tool.hipport.mappings]) is shown with its origin.
    Unknown names exit 2 with close matches.
    """
    import json

    from hipport.mapping import load_table
    from hipport.report.mapping import close_names, describe, format_description
    from hipport.usermaps import describe_pair, format_pair
    from hipport.versions import NAMED_RELEASES

    if as_json:  # the old spelling, kept working (hidden from --help) for existing scripts
        fmt = "json"
    opts = build_options(ctx, [Path.cwd()])
    targets = list(NAMED_RELEASES.values())
    if opts.rocm not in targets:
        targets.append(opts.rocm)
    table = load_table()
    desc = describe(table, name, tuple(targets), roc=opts.roc, experimental=opts.experimental)
    pair = next((m for m in opts.mappings if m.cuda == name), None)
    project = describe_pair(pair, table, tuple(targets), opts) if pair is not None else None
    if desc is None and project is None:
        hint = close_names(table, name)
        click.echo(f"hipport: unknown name {name!r}"
                   + (f"; did you mean: {', '.join(hint)}?" if hint else ""), err=True)
        raise click.exceptions.Exit(EXIT_USAGE)
    if fmt == "json":
        doc = dict(desc or {"name": name, "entries": []})
        if project is not None:
            doc["project_mapping"] = project
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
        return
    parts = [format_pair(project)] if project is not None else []
    if desc is not None:
        parts.append(format_description(desc))
    click.echo("\n".join(parts))


add_examples(main)

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
