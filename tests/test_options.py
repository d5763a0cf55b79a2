"""The options table: one row per option gives its flag, its [tool.hipport] key, its parser
and how the two combine; unknown keys are errors naming the closest one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.findings import Severity
from hipport.options import FIELDS, ConfigError, Options, fields_for, resolve

KERNEL = b"__global__ void k(unsigned m) { __shfl_sync(0xffffffff, m, 0); cudaDeviceSynchronize(); }\n"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def project(tmp_path: Path, config: str, name: str = "k.cu", data: bytes = KERNEL) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.hipport]\n" + config)
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_bytes(data)
    return src


def test_extensions_from_config_mean_what_the_flag_means(tmp_path: Path) -> None:
    # The flag used to add the dot and the config reader did not: "cu" matched nothing.
    src = project(tmp_path, 'extensions = ["CU"]\n', name="k.CU")
    r = run("scan", str(src), "-f", "json")
    assert r.exit_code == 0 and '"code": "HP201"' in r.stdout
    assert resolve({"extensions": "cu, .cuh"}).extensions == (".cu", ".cuh")
    assert resolve({}, {"extensions": ["cu"]}).extensions == (".cu",)


def test_unknown_config_key_is_a_usage_error_naming_the_closest(tmp_path: Path) -> None:
    src = project(tmp_path, 'failon = "medium"\n')
    r = run("check", str(src / "k.cu"), "--no-cache")
    assert r.exit_code == 2
    assert "unknown key 'failon'" in r.output and "did you mean 'fail-on'" in r.output
    assert "pyproject.toml" in r.output


def test_sub_tables_read_elsewhere_are_known_keys() -> None:
    assert resolve({}, {"sync": {"pairs": []}}) == Options()


@pytest.mark.parametrize("table, message", [
    ({"roc": "yes"}, "roc must be true or false"),
    ({"extensions": ".cu"}, None),  # one string is accepted as a comma list
    ({"exclude": [1]}, "exclude must be a list of strings"),
    ({"launch-syntax": "nvcc"}, "launch-syntax must be one of 'cuda', 'hip'"),
    ({"jobs": -1}, "jobs must be 0 or more"),
    ({"fail-on": "fatal"}, "fail-on"),
    ({"severity": ["HP101"]}, 'severity must be a table of CODE = "level"'),
])
def test_bad_values_name_the_key(table: dict, message: str | None) -> None:
    if message is None:
        resolve({}, table, Path("p.toml"))
        return
    with pytest.raises(ConfigError) as e:
        resolve({}, table, Path("p.toml"))
    assert str(e.value).startswith("p.toml: [tool.hipport]: ") and message in str(e.value)


def test_flags_replace_or_extend_the_config() -> None:
    table = {"rocm": "6.3", "exclude": ["a/*"], "ignore": ["HP101"], "hip-guards": ["MY_HIP"],
             "severity": {"HP104": "info", "HP201": "low"}}
    opts = resolve({"rocm": "7.2", "exclude": ("b/*",), "ignore": ("hp2xx",)}, table)
    assert opts.rocm == (7, 2, 0)  # replace: the flag wins
    assert opts.exclude == ("a/*", "b/*")  # extend: config, then flags
    assert opts.ignore == {"HP101", "HP2"}
    assert opts.hip_guards[-1] == "MY_HIP" and "__HIPCC__" in opts.hip_guards
    assert opts.severity_overrides == {"HP104": Severity.INFO, "HP201": Severity.LOW}
    assert resolve({}, table).rocm == (6, 3, 0)
    assert resolve({}, {}, apply_fixes=True).apply_fixes


def test_codes_match_as_prefixes_however_written() -> None:
    opts = Options(ignore=frozenset({"hp1xx"}))
    assert not opts.reports("HP101") and opts.reports("HP201")
    opts = Options(select=frozenset({"HP2"}), ignore=frozenset({"HP201"}))
    assert opts.reports("HP202") and not opts.reports("HP201") and not opts.reports("HP101")


def test_every_row_is_reachable_and_every_flag_is_on_its_commands() -> None:
    names = {f.name for f in FIELDS}
    assert len(names) == len(FIELDS)
    assert names <= set(Options.__dataclass_fields__)
    for f in FIELDS:
        assert f.flag or f.key, f.name
        assert f.example and f.help
        for command in f.commands:
            if f.flag:
                assert f in fields_for(command)
                assert f.flag in run(command, "--help").output, (command, f.flag)


def test_select_and_ignore_from_the_command_line(tmp_path: Path) -> None:
    f = tmp_path / "k.cu"
    f.write_bytes(KERNEL)
    everything = run("check", str(f), "--no-cache", "--fail-on", "info").output
    assert "HP201" in everything
    only = run("check", str(f), "--no-cache", "--fail-on", "info", "--select", "HP2").output
    assert "HP201" in only and all(" HP2" in line for line in only.splitlines() if ": HP" in line)
    none = run("check", str(f), "--no-cache", "--fail-on", "info", "--ignore", "HP2XX,HP1")
    assert "HP201" not in none.output


def test_map_takes_the_format_flag_of_every_other_command() -> None:
    new = run("map", "cudaMalloc", "-f", "json")
    old = run("map", "cudaMalloc", "--json")  # the old spelling keeps working
    assert new.exit_code == old.exit_code == 0 and new.stdout == old.stdout
    assert '"cuda": "cudaMalloc"' in new.stdout


def test_readme_lists_every_option_once_with_an_example() -> None:
    import re

    import click

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Options"):readme.index("### The report and its rules")]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    spelled: list[str] = []
    for row in rows:
        assert len(row) == 4 and row[3].strip(" |`"), row  # option | commands | meaning | example
        spelled += re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", row[0])
    flags = {o for cmd in main.commands.values() for p in cmd.params
             if isinstance(p, click.Option) and not p.hidden for o in p.opts}
    for flag in flags - {"-h", "--help"}:
        assert spelled.count(flag) == 1, flag
    assert set(spelled) <= flags


def test_help_gives_every_option_one_example() -> None:
    import click

    for name, cmd in main.commands.items():
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and p.name != "help":
                assert (p.help or "").count("Example:") == 1, (name, p.name)
    assert "Example: --rocm 6.3" in run("scan", "--help").output
