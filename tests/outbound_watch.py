"""Watch a server's outgoing connections without changing it: an audit hook and /proc.

Two independent witnesses, for ``tests/test_server_trust.py``:

- ``audit_env(folder)``: a ``sitecustomize.py`` in ``folder``, put first on
  ``PYTHONPATH``, adds a Python audit hook (PEP 578) to the server and every
  Python process it starts. The hook only *observes*: each ``socket.connect``,
  ``socket.sendto`` and ``socket.getaddrinfo`` naming anything but a loopback
  address or a Unix socket is appended to ``folder/outbound.log``. Nothing is
  patched; the connection still happens (or fails) as it would.
- ``ProcWatch(pid)``: a thread that keeps reading ``/proc/PID/fd`` (the
  process' socket inodes) and ``/proc/PID/net/{tcp,tcp6,udp,udp6}`` and
  notes every socket of that process with a remote address that is not
  loopback (a connect that lived long enough to be seen).

Example:
    >>> env = audit_env(tmp_path)                                 # doctest: +SKIP
    >>> with served_app(data, log, env) as (proc, url), ProcWatch(proc.pid) as watch:
    ...     probe(url)
    >>> assert watch.remote == [] and outside_calls(tmp_path) == []   # doctest: +SKIP
"""

from __future__ import annotations

import ipaddress
import os
import threading
from pathlib import Path

HOOK = '''
import os, sys

_LOG = {log!r}
_LOOPBACK = ("127.", "::1", "localhost", "0.0.0.0", "::", "::ffff:127.")


def _outside(host):
    if host is None or isinstance(host, (bytes, int)):
        return False
    host = str(host)
    return host != "" and not host.startswith(_LOOPBACK) and not host.startswith("/")


def _hook(event, args):
    if event not in ("socket.connect", "socket.sendto", "socket.getaddrinfo"):
        return
    address = args[0] if event == "socket.getaddrinfo" else args[1]
    host = address[0] if isinstance(address, tuple) else (
        address if event == "socket.getaddrinfo" else None)
    if _outside(host):
        with open(_LOG, "a") as f:
            f.write(f"{{os.getpid()}} {{event}} {{address!r}}\\n")


sys.addaudithook(_hook)
'''


def audit_env(folder: Path) -> dict[str, str]:
    """Environment for a server whose outgoing calls are logged to ``folder/outbound.log``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(HOOK.format(log=str(folder / "outbound.log")))
    (folder / "outbound.log").touch()
    from tests.browser import REPO

    return {"PYTHONPATH": os.pathsep.join(
        filter(None, [str(folder), str(REPO), os.environ.get("PYTHONPATH")]))}


def outside_calls(folder: Path) -> list[str]:
    """What the audit hook saw: one line per outgoing call to a non-loopback address."""
    return (folder / "outbound.log").read_text().splitlines()


def _hex_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    address = ipaddress.IPv6Address(words)
    return address.ipv4_mapped or address


def remote_sockets(pid: int) -> list[str]:
    """The sockets of process ``pid`` connected to a non-loopback address: ``proto addr:port``."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1]
                  for fd in os.listdir(f"/proc/{pid}/fd")
                  if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
    except OSError:
        return []
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote, inode = fields[2], fields[9]
            host, port = remote.split(":")
            address = _hex_address(host)
            if inode in inodes and int(port, 16) and not (
                    address.is_loopback or address.is_unspecified):
                found.append(f"{proto} {address}:{int(port, 16)}")
    return found


class ProcWatch:
    """Polls ``remote_sockets(pid)`` in a thread until the ``with`` block ends."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.remote: list[str] = []
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.remote.extend(r for r in remote_sockets(self.pid) if r not in self.remote)
            self.polls += 1
            self._stop.wait(0.005)

    def __enter__(self) -> ProcWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
