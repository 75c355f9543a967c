"""A real bash with nothing on its PATH but stub programs that record how they were called.

A command line that envcheck prints is pasted into `bash -c` as a user would paste it. Every program it may name
(git, python3, envcheck, ...) is a stub that appends its argv to a record and does nothing else, and the PATH holds
only the stubs, so a second command smuggled into the line finds no program to run. The shell starts in an empty
folder: a redirection would leave a file there.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence


@dataclass(frozen=True)
class Pasted:
    argvs: list[list[str]]  # what each stub received, in order; a stub on PATH by its name, any other by its path
    returncode: int
    stderr: str
    left: list[str]  # what is in the shell's folder afterwards: a redirection's file


class Stubs:
    def __init__(self, folder: Path, names: Iterable[str] = (), home: Path | None = None):
        self.folder = folder
        self.bin = folder / "bin"
        self.cwd = folder / "cwd"
        self.home = home or folder / "home"
        self.record = folder / "argv.jsonl"
        for path in (self.bin, self.cwd, self.home):
            path.mkdir(parents=True, exist_ok=True)
        for name in names:
            self.add(name)

    def add(self, program: str | Path) -> Path:
        """A stub named `program` on PATH, or at the path `program` (a target interpreter, say)."""
        path = Path(program) if os.sep in str(program) else self.bin / str(program)
        path.parent.mkdir(parents=True, exist_ok=True)
        # /bin/sh's printf writes each argument whole, NUL-terminated, after the count of them.
        path.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$#\" \"$0\" \"$@\" >> {shlex.quote(str(self.record))}\n")
        path.chmod(0o755)
        return path

    def paste(self, text: str, env: Mapping[str, str] | None = None, options: Sequence[str] = ()) -> Pasted:
        """Run text in a real bash as a pasted line, with only the stubs to run (env: more variables, options:
        bash's own, such as -o pipefail)."""
        self.record.write_bytes(b"")
        variables = {"PATH": str(self.bin), "HOME": str(self.home), "LC_ALL": "C.UTF-8", **(env or {})}
        done = subprocess.run(["/bin/bash", "--noprofile", "--norc", *options, "-c", text], cwd=self.cwd,
                              capture_output=True, text=True, env=variables, timeout=60)
        fields = [f.decode("utf-8", "surrogateescape") for f in self.record.read_bytes().split(b"\0")[:-1]]
        argvs = []
        while fields:
            count, fields = int(fields[0]), fields[1:]
            argv, fields = fields[:count + 1], fields[count + 1:]
            if Path(argv[0]).parent == self.bin:
                argv[0] = Path(argv[0]).name
            argvs.append(argv)
        return Pasted(argvs, done.returncode, done.stderr, sorted(os.listdir(self.cwd)))

    def expect(self, text: str, argv: Sequence[str]) -> None:
        """Pasting text runs exactly argv, once, and nothing else: no error, no file left by a redirection. An
        `export NAME=VALUE` (a builtin: no program runs) instead sets exactly that value, which a stub then shows."""
        if argv[0] == "export":
            name, value = argv[1].split("=", 1)
            self.add("show-value")
            pasted = self.paste(f'{text}\nshow-value "${{{name}}}"')
            ran, argv = pasted.argvs, ["show-value", value]
        else:
            pasted = self.paste(text)
            ran = pasted.argvs
        assert pasted.returncode == 0 and not pasted.stderr, f"$ {text}\n{pasted.stderr}"
        assert ran == [list(argv)], f"$ {text}\nran {ran}\nexpected {list(argv)}"
        assert pasted.left == [], f"$ {text} left {pasted.left} in its folder (a redirection)"
