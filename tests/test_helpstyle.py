"""--help and --version as a user reads them: every command's help names what an option takes by its metavar, never
by a Python type; the README's table of commands is the list --help gives."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import envcheck
from envcheck.cli import app, main
from readme import help_commands, readme_commands

COMMANDS = sorted(typer.main.get_command(app).commands)
# typer 0.29's labels: <bool>, <str>, <path>, <float>, <list[Path]> (a `<` followed by a letter; help text has `<=`).
TYPE_LABEL = re.compile(r"<[A-Za-z][\w\[\], |.]*>")


def help_text(*args: str, rich: bool = True) -> str:
    env = {**os.environ, "COLUMNS": "220", "TYPER_USE_RICH": "1" if rich else "0"}
    done = subprocess.run([sys.executable, "-m", "envcheck", *args, "--help"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_names_values_by_their_metavar_never_a_python_type(command, rich):
    text = help_text(*([command] if command else []), rich=rich)
    assert not TYPE_LABEL.findall(text), TYPE_LABEL.findall(text)
    assert "--help" in text and ("Usage: envcheck" in text)


def test_every_option_that_takes_a_value_declares_its_metavar():
    """What keeps the help free of typer's labels (envcheck/helpstyle.py shows the metavar alone)."""
    group = typer.main.get_command(app)
    missing = [f"{name} {param.opts[0]}" for name, command in group.commands.items() for param in command.params
               if param.param_type_name == "option" and not param.is_flag and param.metavar is None]
    assert missing == []


def test_a_flag_is_shown_alone_and_an_option_with_its_metavar():
    rows = {line.split()[1]: line for line in help_text("doctor").splitlines() if line.startswith("│ --")}
    assert rows["--json"].split()[2:4] == ["Same", "as"]  # nothing between the flag and its help
    assert rows["--python"].split()[2] == "PATH" and rows["--format"].split()[2] == "FORMAT"


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_says_the_version_where_envcheck_is_and_the_python(flag, capsys):
    assert main([flag]) == 0
    out = capsys.readouterr().out
    found = re.fullmatch(r"envcheck (\S+) from (\S+) \(python (\d+\.\d+\.\d+), (\S+)\)\n", out)
    assert found, out
    assert found[1] == envcheck.__version__
    assert Path(found[2]) == Path(envcheck.__file__).resolve().parent
    assert found[3] == ".".join(map(str, sys.version_info[:3])) and found[4] == sys.executable


def test_the_readme_table_of_commands_is_the_list_help_gives():
    assert readme_commands() == help_commands(help_text()) == set(COMMANDS)


def test_the_readme_reader_sees_a_command_missing_from_the_table():
    """The comparison above can fail: a table without `verify` reads as one."""
    table = "# envcheck\n\n## Commands\n\n| command | what it does |\n|---|---|\n| `envcheck doctor` | check |\n| `envcheck lock` | lock |\n"
    assert readme_commands(table) == {"doctor", "lock"}


# --------------------------------------------------------------------------------------------------------------
# Help names only what exists (issue 26): every flag a command's help mentions is one it takes


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
QUOTED = re.compile(r"`envcheck (\w+)([^`]*)`")  # another command's line, quoted: its flags are that command's


def flags_of(name: str) -> set[str]:
    command = typer.main.get_command(app).commands[name]
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}


def mentioned(text: str, own: str) -> set[tuple[str, str]]:
    """(command, flag) for every flag the text names: a quoted `envcheck CMD ...` names CMD's, the rest `own`'s."""
    found = {(cmd, flag) for cmd, rest in QUOTED.findall(text) for flag in FLAG.findall(rest)}
    return found | {(own, flag) for flag in FLAG.findall(QUOTED.sub("", text))}


def unknown_flags(name: str, text: str) -> list[str]:
    commands = typer.main.get_command(app).commands
    return sorted(f"{cmd} {flag}" for cmd, flag in mentioned(text, name)
                  if cmd not in commands or flag not in flags_of(cmd) | {"--help"})


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_a_command_s_help_names_is_one_it_takes(command, rich):
    """explain and bundle named --no-gpu, which neither takes; every flag in every help, a command's own or one of a
    command it quotes (`envcheck lock --profile`), is a flag of that command."""
    text = re.sub(r"(--[a-z0-9-]*-)\n\s*", r"\1", help_text(command, rich=rich))  # click's 80 columns split a flag at a -
    assert len(FLAG.findall(text)) >= 2  # the reader reads the help, not an empty page
    assert unknown_flags(command, text) == []


def test_the_reader_of_help_sees_a_flag_that_is_not_there():
    assert unknown_flags("explain", "judge (with --no-gpu on a machine without one)") == ["explain --no-gpu"]
    assert unknown_flags("bundle", "as `envcheck lock --profile --bogus` does") == ["lock --bogus"]
    assert unknown_flags("lock", "with --from-env (or --python)") == []


def test_profile_s_help_is_one_line_the_same_on_every_command():
    """--profile's help was one chain of defaults per command (issue 31 item 8): one line, the same wherever the flag
    is, and how each command chooses in the README section it names."""
    group = typer.main.get_command(app)
    helps = {name: param.help for name, command in group.commands.items() for param in command.params
             if "--profile" in param.opts}
    assert set(helps) >= {"doctor", "fix", "smoke", "bench", "lock", "bundle", "dockerfile", "explain"}, helps
    assert len(set(helps.values())) == 1, helps
    text = next(iter(helps.values()))
    assert len(text) <= 120 and " else " not in text and ". " not in text, text
    section = re.search(r"README: ([A-Z][a-z ]+)\)", text).group(1)
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    said = readme.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    assert "without torch" in said.lower() and "`pip install torch`" in said, section
