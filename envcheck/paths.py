"""Where envcheck keeps its own files (one per-user cache directory, overridable for tests and CI, and the state
folder a crash's log goes to), and the one rule for the folders and files it makes there.

envcheck runs as root in CI, Slurm health checks and image builds, and what it writes there may hold credentials
(an index URL's password in a snapshot or a log) and decides what undo installs (the snapshot). So a folder envcheck
writes its own files in must be the user's alone: made readable by its owner only, and refused (exit 2) when someone
else could write it, for then they could put a link where envcheck writes its next log, or a snapshot of their own.
The files themselves are created new, never through a link or over a file that is there already, and read back only
when they are regular files of the user's."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Mapping, Optional, TextIO

from . import shell
from .errors import UsageError
from .userfile import read_open

__all__ = ["cache_dir", "default_cutlass_dir", "log_dir", "usable_folder", "folder_origin", "new_file", "read_own_file",
           "write_crash_log"]


def cache_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    env = os.environ if env is None else env
    if env.get("ENVCHECK_CACHE_DIR"):
        return Path(env["ENVCHECK_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "envcheck"


def default_cutlass_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """Where `envcheck fix` fetches CUTLASS unless --cutlass-dir says otherwise."""
    return cache_dir(env) / "cutlass"


def log_dir() -> Path:
    """Where a crash's log goes (write_crash_log): envcheck's state folder."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "envcheck"


def usable_folder(folder: Path, what: str, *, create: bool = False, root: Optional[Path] = None) -> Path:
    """`folder`, checked: nothing on its way is a file, and, where it exists, nobody but its owner can change it.

    With create, it is made where missing (every folder made readable by its owner only) and must take a new file.
    Where it exists, it and every folder from `root` (envcheck's own tree: the cache or state folder; default: folder
    itself) down to it must belong to the user running envcheck and be writable by nobody else; every folder above
    root must belong to that user or to root and be writable by nobody else unless it is sticky (as /tmp is: there
    nobody can move another's folder away). Anything else is a UsageError naming `what` (say, the variable that chose
    the folder), the folder, and what to do."""
    try:
        if create:
            import tempfile  # only where a folder is made: doctor never needs it

            _make(folder)
            _check_private(folder, root or folder, what)
            with tempfile.TemporaryFile(dir=folder):
                pass
        else:
            existing = next((p for p in (folder, *folder.parents) if os.path.lexists(p)), None)
            if existing is not None and not existing.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "a file is in the way", str(existing))
            if existing == folder:
                _check_private(folder, root or folder, what)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
        raise UsageError(f"{what}: cannot {'write to' if create else 'use'} {folder}: {exc.strerror or exc}{where}") from None
    return folder


def _make(folder: Path) -> None:
    """Make folder and whatever is missing above it, each readable by its owner only (mkdir(parents=True) would give
    the folders above it the umask's mode, group-writable under umask 002)."""
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # another run made it meanwhile: checked like any other
            pass


def _check_private(folder: Path, root: Path, what: str) -> None:
    me = os.geteuid()
    real, real_root = Path(os.path.realpath(folder)), Path(os.path.realpath(root))
    own = [real] + [p for p in real.parents if p == real_root or real_root in p.parents]
    above = [p for p in real.parents if p not in own]
    # The folders the path names on its way, links not resolved: a link in a folder others can write can be turned.
    named = [Path(os.path.abspath(p)) for p in Path(os.path.abspath(folder)).parents]
    for path in own:
        info = os.stat(path)
        if info.st_uid != me:
            raise UsageError(f"{what}: {path} belongs to {_user(info.st_uid)}, not to you ({_user(me)}): whoever owns it "
                             f"could change what envcheck writes there. {_remedy(what)}")
        if info.st_mode & 0o022:
            chmod = shell.line(("chmod", "go-w", str(path)))
            raise UsageError(f"{what}: {path} can be written by others (mode {stat.S_IMODE(info.st_mode):04o}): anyone "
                             f"could put a link there where envcheck writes next, or a file of their own. Make it yours "
                             f"alone ({chmod}, and look at what is in it), or: {_remedy(what)}")
    for path in dict.fromkeys(above + named):
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        if info.st_uid not in (me, 0):
            raise UsageError(f"{what}: {path}, a folder above {folder}, belongs to {_user(info.st_uid)}: they could put "
                             f"a folder of their own in its place. {_remedy(what)}")
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            raise UsageError(f"{what}: {path}, a folder above {folder}, can be written by others and is not sticky "
                             f"(mode {stat.S_IMODE(info.st_mode):04o}): anyone could move {folder} away and put their "
                             f"own in its place. {_remedy(what)}")


def _remedy(what: str) -> str:
    variable = what.split("=", 1)[0] if "=" in what.split(" ", 1)[0] else ""
    return f"Point {variable} at a folder of your own" if variable else "Use a folder of your own"


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def new_file(path: Path, what: str) -> TextIO:
    """A new file of envcheck's own (a log), readable by its owner only, open for writing: created here, never opened
    through a link or over a file that is there already (either is a UsageError naming `what` and the file)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return open(os.open(path, flags, 0o600), "w", encoding="utf-8")
    except OSError as exc:
        reason = "something is there already (a link or a file)" if exc.errno == errno.EEXIST else exc.strerror or exc
        raise UsageError(f"{what}: cannot create {path}: {reason}") from None


def read_own_file(path: Path, what: str, limit: int) -> Optional[str]:
    """The text of a file envcheck wrote in a folder of its own (a snapshot), or None when there is none. A link, a
    file that is not regular or not the user's, one over `limit` bytes or not UTF-8 is a UsageError naming `what`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = "a symbolic link, not the file envcheck wrote" if exc.errno == errno.ELOOP else exc.strerror or exc
        raise UsageError(f"{what}: cannot read it: {reason}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        raise UsageError(f"{what}: " + ("not a regular file" if not stat.S_ISREG(info.st_mode) else
                                        f"belongs to {_user(info.st_uid)}, not to you: envcheck did not write it"))
    return read_open(fd, what, limit, "far more than envcheck writes")


def folder_origin(env: Mapping[str, str], *names: str) -> str:
    """Which variable chose envcheck's folder, for messages: `NAME=value`, or '' when none did."""
    name = next((n for n in (*names, "ENVCHECK_CACHE_DIR", "XDG_CACHE_HOME") if env.get(n)), None)
    return f"{name}={env[name]}" if name else ""


def write_crash_log(exc: BaseException) -> Path:
    """Write the traceback of a crash inside envcheck to a log (redacted, readable by its owner only); its path.

    The log goes into envcheck's state folder when that is the user's alone (usable_folder), created new (new_file:
    never through a link); else into a new file of a random name in the temporary folder."""
    import datetime
    import tempfile
    import traceback

    from .redact import Redactor

    text = Redactor()("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        path = usable_folder(log_dir(), "the crash log folder", create=True) / f"crash-{stamp}-{os.getpid()}.log"
        with new_file(path, "the crash log") as log:
            log.write(text)
        return path
    except (UsageError, OSError):
        pass
    try:  # mkstemp: a new file (O_EXCL) of a name nobody could guess, readable by its owner only
        fd, name = tempfile.mkstemp(prefix=f"envcheck-crash-{stamp}-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as log:
            log.write(text)
        return Path(name)
    except OSError:
        raise exc
