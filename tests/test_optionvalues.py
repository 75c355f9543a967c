"""How a command-line value becomes what a command takes (envcheck/optionvalues.py): the same answer as typer's own
pydantic adapter for every value in the tables, on the real parameters of envcheck's commands, and no command line
that imports pydantic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from envcheck import optionvalues
from envcheck.cli import app

coercion = pytest.importorskip("typer._coercion", reason="typer before 0.29 converts through click, not pydantic")
pytest.importorskip("pydantic", reason="typer's own adapters, the reference, need pydantic")

GROUP = typer.main.get_command(app)


def _param(command: str, name: str):
    """A parameter of envcheck's command line as typer made it, `command` '' for the group's own."""
    owner = GROUP if not command else GROUP.commands[command]
    context = owner.make_context(command or "envcheck", [], resilient_parsing=True)
    return context, next(p for p in owner.get_params(context) if p.name == name)


def _answer(runtime, value, param, context):
    """What a conversion makes of the value: ('value', result) or ('refused', the message typer would show)."""
    try:
        return "value", runtime.coerce(value, param=param, ctx=context)
    except typer.BadParameter as refused:
        return "refused", refused.format_message()


def _both(command: str, name: str, value):
    context, param = _param(command, name)
    ours = param._runtime_param
    assert isinstance(ours, optionvalues._Plain), f"{command} {name} keeps typer's pydantic adapter"
    typers = coercion.build_runtime_param(param.type_descriptor)
    assert isinstance(typers, coercion.AdapterRuntimeParam)
    return _answer(ours, value, param, context), _answer(typers, value, param, context)


NUMBERS = ["1", "1.5", " 2 ", "\t3\n", "1e3", "1E-3", "+3", "-5", "0", ".5", "1.", "inf", "-inf", "Infinity", "nan",
           "NaN", "1_000", "1e400", "0x10", "", " ", "abc", "5s", "1 000", "--1", "１２", "٣", "1,5", 300.0, 7, True]
TEXTS = ["", "x", " spaced ", "/a/b", "ünïcode", "-", "--", "$(touch x)", 3, 2.5]
PATHS = ["", ".", "a/b", "~/x", " x ", "/no/such/file", "-"]
FLAGS = [True, False, "1", "0", "true", "True", "YES", "on", "off", "f", "t", "n", "no", "false", "", " ", " yes ",
         "2", "x", 1, 0, 2, 1.0, 0.5]


@pytest.mark.parametrize("value", NUMBERS, ids=repr)
@pytest.mark.parametrize("command, name", [("smoke", "timeout"), ("fix", "lock_timeout")])
def test_a_number_is_read_as_typers_adapter_reads_it(command, name, value):
    ours, typers = _both(command, name, value)
    assert ours == typers or (ours[1] != ours[1] and typers[1] != typers[1])  # nan is not nan


@pytest.mark.parametrize("value", TEXTS, ids=repr)
@pytest.mark.parametrize("command, name", [("doctor", "python"), ("explain", "log"), ("doctor", "output_format")])
def test_text_is_read_as_typers_adapter_reads_it(command, name, value):
    ours, typers = _both(command, name, value)
    assert ours == typers


@pytest.mark.parametrize("value", PATHS, ids=repr)
@pytest.mark.parametrize("command, name", [("doctor", "output"), ("diff", "a")])
def test_a_path_is_read_as_typers_adapter_reads_it(command, name, value):
    ours, typers = _both(command, name, value)
    assert ours == typers and (ours[0] == "refused" or isinstance(ours[1], Path))


def test_a_path_there_but_unreadable_is_refused_as_typer_refuses_it(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    secret.chmod(0)
    if os.access(secret, os.R_OK):
        pytest.skip("this user reads any file (root)")
    ours, typers = _both("diff", "a", str(secret))
    assert ours == typers and ours[0] == "refused" and "not readable" in ours[1]


@pytest.mark.parametrize("value", FLAGS, ids=repr)
@pytest.mark.parametrize("command, name", [("doctor", "as_json"), ("", "version")])
def test_a_flag_is_read_as_typers_adapter_reads_it(command, name, value):
    ours, typers = _both(command, name, value)
    assert ours == typers


@pytest.mark.parametrize("value", [None, (), [], ("9.0",), ["9.0", "12.1"], "9.0", ("a", 3)], ids=repr)
def test_a_list_of_text_is_read_as_typers_adapter_reads_it(value):
    ours, typers = _both("doctor", "gpu_capability", value)
    assert ours == typers


@pytest.mark.parametrize("value", [None, (), ("a.json",), ("a.json", "/b/c.json"), "a.json", ("",)], ids=repr)
def test_a_list_of_paths_is_read_as_typers_adapter_reads_it(value):
    ours, typers = _both("doctor", "evidence", value)
    assert ours == typers


def test_every_parameter_of_every_command_has_its_own_conversion():
    """A parameter added later with a type optionvalues does not know would bring pydantic back: named here."""
    kept = []
    for name, command in [("", GROUP), *sorted(GROUP.commands.items())]:
        context = command.make_context(name or "envcheck", [], resilient_parsing=True)
        kept += [f"{name} {p.name} ({p.type_descriptor.annotation})" for p in command.get_params(context)
                 if not isinstance(p._runtime_param, optionvalues._Plain)]
    assert kept == []


def _imported_pydantic(*args: str, cwd: Path) -> tuple[int, bool, str]:
    """Run envcheck's command line in a fresh interpreter: its exit code, whether pydantic was imported, stderr."""
    code = ("import sys\nfrom envcheck.cli import main\ncode = main(sys.argv[1:])\n"
            "sys.stdout.flush()\nsys.stderr.write('PYDANTIC=%s\\n' % any(m.split('.')[0] in ('pydantic', 'pydantic_core') "
            "for m in sys.modules))\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)
    return done.returncode, "PYDANTIC=True" in done.stderr, done.stderr


def test_no_command_line_imports_pydantic(tmp_path):
    """The commands a user starts with, a value of every type among them, and a value refused: none imports it."""
    log = tmp_path / "three.log"
    log.write_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nModuleNotFoundError: "
                   "No module named 'cutlass'\n")
    report = tmp_path / "report.json"
    code, _, err = _imported_pydantic("doctor", "--json", "--no-gpu", "-o", str(report), cwd=tmp_path)
    assert code in (0, 1) and report.is_file(), err
    lines = [
        (("doctor", "--json", "--no-gpu", "--gpu-capability", "9.0", "--evidence", str(tmp_path / "none.json")), {2}),
        (("explain", str(log)), {0, 1}),
        (("diff", str(report), str(report)), {0}),
        (("smoke", "--timeout", "soon"), {2}),  # refused, naming the flag
        (("fix", "--dry-run", "--no-gpu", "--lock-timeout", "5"), {0, 1, 2}),
        (("doctor", "--help"), {0}),
    ]
    for args, codes in lines:
        code, imported, err = _imported_pydantic(*args, cwd=tmp_path)
        assert code in codes and not imported, (args, code, err)
    assert "--timeout" in _imported_pydantic("smoke", "--timeout", "soon", cwd=tmp_path)[2]
