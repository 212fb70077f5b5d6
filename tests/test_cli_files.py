"""The files a run reads and writes: which a directory walk skips, serial and parallel runs
alike, syntax errors, permissions, symbolic links, encodings and line endings, and the
content cache.  (The flags, formats and configuration are in test_cli.py.)"""

from __future__ import annotations

import os
import stat

import pytest

from tests.test_cli import LEGACY, MIGRATED, REPORT_ONLY, invoke


# -- discovery ------------------------------------------------------------------------------
def test_skips_vcs_virtualenvs_build_and_node_modules(tmp_path):
    for directory in (".git", "build", "node_modules", "env1", "src"):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "m.py").write_text(LEGACY)
    (tmp_path / "env1" / "pyvenv.cfg").write_text("home = /usr\n")
    result = invoke(tmp_path, "--check")
    assert result.stderr.count("would rewrite") == 1
    assert f"would rewrite {tmp_path / 'src' / 'm.py'}" in result.stderr


def test_parallel_and_serial_give_identical_output(tmp_path):
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(LEGACY if index % 3 else REPORT_ONLY)
    serial = invoke(tmp_path, "--check", "--format", "json", "-j", "1")
    parallel = invoke(tmp_path, "--check", "--format", "json", "-j", "2")
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.stdout == parallel.stdout
    assert serial.stderr == parallel.stderr
    written = invoke(tmp_path, "-j", "2")
    assert written.exit_code == 1
    assert all(p.read_text() in (MIGRATED, REPORT_ONLY) for p in tmp_path.glob("*.py"))


# -- files --------------------------------------------------------------------------------
def test_syntax_error_file_is_reported_untouched_and_others_migrated(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import jax.numpy as jnp\nx = jnp.DeviceArray(\n")
    good = tmp_path / "good.py"
    good.write_text(LEGACY)
    result = invoke(tmp_path)
    assert result.exit_code == 2
    assert f"{bad}:3:1: error: not valid Python" in result.stderr or f"{bad}:2" in result.stderr
    assert bad.read_text() == "import jax.numpy as jnp\nx = jnp.DeviceArray(\n"
    assert good.read_text() == MIGRATED


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_read_only_file_is_reported_not_written(tmp_path):
    path = tmp_path / "ro.py"
    path.write_text(LEGACY)
    path.chmod(0o444)
    result = invoke(path)
    assert result.exit_code == 2
    assert "read-only" in result.stderr
    assert path.read_text() == LEGACY
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_permissions_are_kept(tmp_path):
    path = tmp_path / "x.py"
    path.write_text(LEGACY)
    path.chmod(0o751)
    invoke(path)
    assert path.read_text() == MIGRATED
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["x.py"], "no temporary files left behind"


def test_symlink_is_written_through(tmp_path):
    target = tmp_path / "real.py"
    target.write_text(LEGACY)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    result = invoke(link)
    assert result.exit_code == 1
    assert link.is_symlink()
    assert target.read_text() == MIGRATED


def test_walk_skips_symlinks_and_dangling_links_are_errors(tmp_path):
    (tmp_path / "src").mkdir()
    target = tmp_path / "real.py"
    target.write_text(LEGACY)
    (tmp_path / "src" / "link.py").symlink_to(target)
    assert invoke(tmp_path / "src", "--check").exit_code == 0
    dangling = tmp_path / "dangling.py"
    dangling.symlink_to(tmp_path / "missing.py")
    result = invoke(dangling)
    assert result.exit_code == 2 and "dangling symbolic link" in result.stderr


def test_a_file_reached_two_ways_is_found_once(tmp_path):
    from jaxmigrate.migrator.discovery import discover

    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "a.py").write_text(LEGACY)
    alias = tmp_path / "alias"
    alias.symlink_to(tmp_path / "src", target_is_directory=True)
    given = [tmp_path / "src", alias, package / "a.py", alias / "pkg" / "a.py", alias / "pkg"]
    files, missing = discover([str(path) for path in given], [])
    assert files == [package / "a.py"] and not missing
    files, _missing = discover([str(alias), str(tmp_path / "src")], [])
    assert files == [alias / "pkg" / "a.py"]
    assert "1 file checked" in invoke(alias, tmp_path / "src", "--check").stderr


@pytest.mark.parametrize(
    "raw",
    [
        LEGACY.replace("\n", "\r\n").encode(),
        b"\xef\xbb\xbf" + LEGACY.encode(),
        ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + LEGACY).encode("latin-1"),
        LEGACY.rstrip("\n").encode(),
        LEGACY.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\r\n").encode(),
    ],
    ids=["crlf", "bom", "latin-1-cookie", "no-final-newline", "mixed-newlines"],
)
def test_encodings_and_line_endings_round_trip(tmp_path, raw):
    path = tmp_path / "e.py"
    path.write_bytes(raw)
    assert invoke(path).exit_code == 1
    new = path.read_bytes()
    assert new.startswith(b"\xef\xbb\xbf") == raw.startswith(b"\xef\xbb\xbf")
    assert (b"\r\n" in new) == (b"\r\n" in raw)
    assert new.endswith(b"\n") == raw.endswith(b"\n")
    if b"latin-1" in raw:
        assert b"caf\xe9" in new
    assert b"jax.Array" in new and b"DeviceArray" not in new
    assert invoke(path).exit_code == 0, "second run is a no-op"


def test_undecodable_file_is_an_error(tmp_path):
    path = tmp_path / "u.py"
    path.write_bytes(b"x = '\xff\xfe'  # DeviceArray\n")
    result = invoke(path)
    assert result.exit_code == 2
    assert "cannot decode" in result.stderr
    assert path.read_bytes() == b"x = '\xff\xfe'  # DeviceArray\n"


# -- the content cache --------------------------------------------------------------------
def test_cache_gives_identical_results_and_parses_nothing_when_warm(tmp_path, monkeypatch):
    import jaxmigrate.migrator.engine as engine

    for index in range(4):
        (tmp_path / f"m{index}.py").write_text(LEGACY if index % 2 else REPORT_ONLY)
    cache = tmp_path / "cache"
    cold = invoke(tmp_path, "--check", "--format", "json", "--cache-dir", cache, "-j", "1")
    assert any(cache.rglob("*.json"))

    def no_parsing(*args, **kwargs):
        raise AssertionError("a warm cache must not parse")

    monkeypatch.setattr(engine.cst, "parse_module", no_parsing)
    monkeypatch.setattr(engine, "ast_facts", no_parsing)
    warm = invoke(tmp_path, "--check", "--format", "json", "--cache-dir", cache, "-j", "1")
    assert warm.stdout == cold.stdout and warm.exit_code == cold.exit_code == 1
    uncached = invoke(tmp_path, "--check", "--no-cache", "-j", "1")  # the patch does bite:
    assert (
        uncached.exit_code == 2 and "AssertionError: a warm cache must not parse" in uncached.stderr
    )


def test_cache_rewrites_from_a_warm_entry(tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "a.py").write_text(LEGACY)
    invoke(tmp_path / "a.py", "--check", "--cache-dir", cache)
    assert invoke(tmp_path / "a.py", "--cache-dir", cache).exit_code == 1
    assert (tmp_path / "a.py").read_text() == MIGRATED


def test_the_cache_keeps_within_its_bound_least_recently_used_first(tmp_path):
    """A sweep deletes the least recently used entries (a read counts as a use) down to three
    quarters of the limit, and a killed writer's temporary files; it runs at most hourly."""
    import time

    from jaxmigrate.migrator.cache import ResultCache, sweep

    cache = ResultCache(tmp_path, "settings")
    now = time.time()
    for index in range(40):
        cache.put(f"file {index}".encode(), {"output": "x" * 1000})
        path = cache._path(f"file {index}".encode())
        os.utime(path, (now - 4000 + index, now - 4000 + index))  # file 0 the oldest
    assert cache.get(b"file 0") is not None  # read now: the most recently used
    stale = cache.directory / "ab" / "half.tmp"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{")
    os.utime(stale, (now - 7200, now - 7200))
    sizes = [p.stat().st_size for p in tmp_path.rglob("*.json")]
    limit = sum(sizes) // 2
    freed = sweep(tmp_path, limit, force=True)
    kept = sum(p.stat().st_size for p in tmp_path.rglob("*.json"))
    assert freed > 0 and kept <= limit * 3 // 4 and not stale.exists()
    assert cache.get(b"file 0") is not None  # used last, kept
    assert cache.get(b"file 1") is None and cache.get(b"file 39") is not None
    cache.put(b"file 40", {"output": "y" * 100000})
    assert sweep(tmp_path, 1) == 0  # swept less than an hour ago: not again
    assert sweep(tmp_path, 1, force=True) > 0 and not list(tmp_path.rglob("*.json"))


def test_runs_with_changing_settings_leave_a_bounded_cache(tmp_path, monkeypatch):
    """Twenty runs under as many targets (each a new set of entries) stay within the bound
    the environment sets, and the last run's entries are the ones kept."""
    import jaxmigrate.migrator.cache as cache_module

    monkeypatch.setattr(cache_module, "SWEEP_EVERY", 0.0)
    monkeypatch.setenv("JAXMIGRATE_CACHE_MAX_MB", "0.02")  # about 20 kB
    project, cache = tmp_path / "p", tmp_path / "cache"
    project.mkdir()
    for index in range(6):
        (project / f"m{index}.py").write_text(LEGACY + f"\nX{index} = {index}\n")
    targets = [f"0.4.{minor}" for minor in range(14, 34)]
    for target in targets:
        invoke(project, "--check", "--cache-dir", cache, "--target-version", target, "-j", "1")
    total = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    assert 0 < total <= 0.02 * 2**20 + 4096
    warm = invoke(project, "--check", "--cache-dir", cache, "--target-version", targets[-1])
    assert warm.exit_code == 1 and len(list(cache.rglob("*.json"))) >= 6


def test_cache_remembers_syntax_errors(tmp_path):
    cache = tmp_path / "cache"
    (tmp_path / "bad.py").write_text("import jax.numpy as jnp\nx = (jnp.DeviceArray\n")
    first = invoke(tmp_path / "bad.py", "--cache-dir", cache)
    second = invoke(tmp_path / "bad.py", "--cache-dir", cache)
    assert first.exit_code == second.exit_code == 2
    assert first.stderr == second.stderr
