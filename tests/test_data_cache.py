"""The small TOML data files every process reads come through an authenticated JSON cache
entry (``datafiles.toml_data``): the same values as parsing, a foreign or tampered entry is
a miss, one entry per file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hipport import cachefile, datafiles

FILES = ("arguments.toml", "released_headers.toml", "libraries.toml", "gpus.toml", "cuda_aliases.toml")


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the key, outside the cache
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _parsed(name: str) -> dict:
    return tomllib.loads(datafiles.mappings().joinpath(name).read_text(encoding="utf-8"))


def _entry(cache: Path, name: str) -> Path:
    (entry,) = cache.glob(f"data-{name.removesuffix('.toml')}-*.json")
    return entry


@pytest.mark.parametrize("name", FILES)
def test_parsed_and_cached_values_equal_the_file(cache: Path, name: str) -> None:
    first = datafiles.toml_data(name)
    entry = _entry(cache, name)
    assert first == _parsed(name)
    assert datafiles.toml_data(name) == first  # now from the entry
    assert _entry(cache, name) == entry


def test_an_authentic_entry_is_what_is_read(cache: Path) -> None:
    datafiles.toml_data("gpus.toml")
    entry = _entry(cache, "gpus.toml")
    key = cachefile.secret_key(cache)
    entry.write_bytes(cachefile.encode(datafiles.DATA_CACHE_KIND, entry.name, {"marker": 1}, key))
    assert datafiles.toml_data("gpus.toml") == {"marker": 1}


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_a_forged_or_malformed_entry_is_a_miss_and_rewritten(cache: Path, body: bytes) -> None:
    datafiles.toml_data("gpus.toml")
    entry = _entry(cache, "gpus.toml")
    key = cachefile.secret_key(cache)
    if body == b"not json":  # a MAC made with another key
        entry.write_bytes(cachefile.encode(datafiles.DATA_CACHE_KIND, entry.name, {"x": 1}, b"o" * 32))
    else:  # authentic, but not a table
        entry.write_bytes(cachefile.encode(datafiles.DATA_CACHE_KIND, entry.name, [1, 2], key))
    assert datafiles.toml_data("gpus.toml") == _parsed("gpus.toml")
    assert cachefile.load(entry, cache, datafiles.DATA_CACHE_KIND, key, 1 << 20) == _parsed("gpus.toml")


def test_one_entry_per_file(cache: Path) -> None:
    cache.mkdir(parents=True)
    stale = cache / f"data-gpus-{'0' * 32}.json"
    stale.write_bytes(b"old")
    other = cache / f"data-libraries-{'0' * 32}.json"
    other.write_bytes(b"other file's")
    datafiles.toml_data("gpus.toml")
    assert not stale.exists() and other.exists()
    assert _entry(cache, "gpus.toml").name != stale.name


def test_no_home_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory")

    monkeypatch.setattr(datafiles, "cache_dir", no_home)
    assert datafiles.toml_data("gpus.toml") == _parsed("gpus.toml")
