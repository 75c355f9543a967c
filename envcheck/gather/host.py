"""The `host` object of a report: which machine it was made on, for a fleet to group and tell apart."""

from __future__ import annotations

import os
from typing import Optional

from ..model import Driver, Facts, Host

__all__ = ["host_of", "anonymous", "local_hostname"]


def anonymous(hostname: str) -> str:
    """A stable stand-in for a hostname: the same node hashes the same way in every report."""
    import hashlib  # only --anonymize needs it

    return "sha256:" + hashlib.sha256(hostname.encode("utf-8")).hexdigest()[:16]


def local_hostname() -> str:
    """This machine's name as socket.gethostname() says it: where there is uname (Linux, macOS), its nodename, which
    gethostname reads there too; socket, a measured part of doctor's start-up, is imported only where there is not."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def host_of(facts: Optional[Facts], *, anonymize: bool = False, hostname: Optional[str] = None) -> Host:
    name = hostname if hostname is not None else local_hostname()
    driver = facts.driver if facts is not None and isinstance(facts.driver, Driver) else None
    return Host(
        hostname=anonymous(name) if anonymize else name,
        driver=driver.version if driver else None,
        driver_cuda=driver.cuda if driver else None,
        gpus=tuple(g.name for g in driver.gpus) if driver else (),
        gpu_uuids=tuple(g.uuid for g in driver.gpus if g.uuid) if driver else (),
    )
