"""The documentation cannot drift from the code: the CLI page lists every command and option the
CLI has, and the Python examples (docs pages and docstrings) run on the real sample."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import re

import pytest
from conftest import DATA, REPO

DOCS = REPO / "docs"
# Pages whose ```pycon blocks are doctests, and modules whose docstring examples are.
DOCTEST_PAGES = ("api.md",)
DOCTEST_MODULES = ("mathsearch.searcher", "mathsearch.systems.base", "mathsearch.readers.topics",
                   "mathsearch.evaluation.evaluate")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _cli_docs():
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "scripts" / "cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_page_lists_every_command_and_option():
    cli_docs = _cli_docs()
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `(mathsearch[^`]*)`\n(.*?)(?=^## `|\Z)", page, re.S | re.M))
    missing = []
    commands = 0
    for path, command, ctx in cli_docs.walk():
        if len(path) == 1:
            continue
        commands += 1
        name = " ".join(path)
        if name not in sections:
            missing.append(f"command `{name}`")
            continue
        for _shown, _help, flags in cli_docs.options_of(command, ctx):
            missing += [f"`{name} {flag}`" for flag in flags if f"{flag}" not in sections[name]]
        for param in command.params:
            if param.param_type_name == "argument" and param.name not in sections[name]:
                missing.append(f"argument {param.name} of `{name}`")
    assert commands >= 15, commands  # index, run, search, ... and qrels' sub-commands
    assert not missing, "docs/cli.md lacks " + ", ".join(missing) + ": run `python scripts/cli_docs.py`"


def test_cli_page_is_what_the_cli_renders():
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == _cli_docs().render(), (
        "docs/cli.md is stale: run `python scripts/cli_docs.py`")


def test_cli_page_check_notices_a_missing_option(tmp_path):
    cli_docs = _cli_docs()
    page = tmp_path / "cli.md"
    page.write_text(cli_docs.render().replace("--collection-only", "--collection"), encoding="utf-8")
    assert cli_docs.main(["--check", "--out", str(page)]) == 1
    page.write_text(cli_docs.render(), encoding="utf-8")
    assert cli_docs.main(["--check", "--out", str(page)]) == 0


@pytest.fixture
def docs_folder(tmp_path, sample_index, monkeypatch):
    """A folder laid out as a user's checkout: ``index`` (the sample's) and ../shared/data/arqmath."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "index").symlink_to(sample_index, target_is_directory=True)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "arqmath").symlink_to(DATA, target_is_directory=True)
    monkeypatch.chdir(repo)
    return repo


def _pycon_blocks(text: str) -> str:
    return "\n".join(re.findall(r"^```pycon\n(.*?)^```", text, re.S | re.M))


def _run(test: doctest.DocTest) -> doctest.TestResults:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("page", DOCTEST_PAGES)
def test_docs_page_examples_run(page, docs_folder):
    text = _pycon_blocks((DOCS / page).read_text(encoding="utf-8"))
    test = doctest.DocTestParser().get_doctest(text, {}, page, str(DOCS / page), 0)
    assert len(test.examples) >= 10, len(test.examples)
    result = _run(test)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of docs/{page} failed (above)"


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples_run(module_name, docs_folder):
    module = importlib.import_module(module_name)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    assert tests, f"{module_name} has no docstring example"
    for test in tests:
        result = _run(test)
        assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {test.name} failed (above)"


# --- The README's quick start and Getting started print what the commands print -----------------

QUICK_START_PAGES = (REPO / "README.md", DOCS / "getting-started.md")
NOT_RUN = ("serve",)  # runs until stopped: the web tests drive it


def _console_sessions(text: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) of each ``$ mathsearch ...`` in ```console blocks."""
    sessions: list[tuple[str, list[str]]] = []
    for block in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M):
        for line in block.splitlines():
            if line.startswith("$ "):
                sessions.append((line[2:], []))
            elif sessions and line.strip():
                sessions[-1][1].append(line)
    return [(cmd, out) for cmd, out in sessions if cmd.startswith("mathsearch ")]


def _pattern(shown: str) -> re.Pattern:
    """A shown line as a pattern: '...' stands for what was cut, a time in seconds for any time."""
    text = " ".join(shown.split())
    parts = [re.escape(p) for p in text.split("...")]
    pattern = ".*".join(parts)
    pattern = re.sub(r"\d+(?:\\\.\d+)?(\\ s\b)", r"[\\d.]+\1", pattern)  # 29.8 s -> any seconds
    return re.compile(pattern)


def _argv(command: str, cwd) -> list[str]:
    import glob
    import shlex
    import sys

    words = shlex.split(command, comments=True)
    args: list[str] = []
    for word in words[1:]:
        args += sorted(glob.glob(word, root_dir=cwd)) or [word] if "*" in word else [word]
    return [sys.executable, "-m", "mathsearch", *args]


def test_quick_start_output_is_what_the_commands_print(tmp_path):
    """Every command of the README's quick start and of Getting started is run on the real sample,
    in a folder laid out as a user's checkout, and every output line they show must appear, in order."""
    import os
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "arqmath").symlink_to(DATA, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "COLUMNS": "200"}
    printed: dict[str, list[str]] = {}
    checked = 0
    for page in QUICK_START_PAGES:
        sessions = _console_sessions(page.read_text(encoding="utf-8"))
        assert len(sessions) >= 6, (page.name, sessions)
        for command, shown in sessions:
            if command.split()[1] in NOT_RUN:
                continue
            argv = _argv(command, repo)
            key = " ".join(argv)  # the same command on both pages runs once
            if key not in printed:
                done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
                assert done.returncode == 0, (command, done.stderr[-2000:])
                printed[key] = [" ".join(line.split()) for line in (done.stdout + done.stderr).splitlines()]
            lines = iter(printed[key])
            for want in shown:
                pattern = _pattern(want)
                assert any(pattern.fullmatch(line) for line in lines), (
                    f"{page.name}: `{command}` shows a line it does not print (in this order): {want!r}\n"
                    + "\n".join(printed[key][:40]))
                checked += 1
    assert checked >= 20, checked


def test_readme_is_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8")) <= 12_000
