"""The line typed into a VM's console shell (the rest is tested against real guests in tests/labs/test_vms.py)."""
from __future__ import annotations

import re
import socket
import threading

from vtopo.serial_console import LINE_BYTES, _relay, typed_line


def test_the_echo_of_the_typed_line_never_looks_like_a_marker() -> None:
    line = typed_line(["iperf3", "-c", "10.0.0.2", "--title", "a b"], "beef").decode()
    assert "vtopo-start-beef" not in line and "vtopo-exit-" in line and "-beef" not in line.replace('"beef"', "")
    assert line.endswith("\n") and line.count("\n") == 1
    assert "'a b'" in line, "arguments are quoted for the guest's shell"


def test_bare_names_are_found_on_path_not_as_busybox_applets() -> None:
    assert '"$(which ping || echo ping)" -c 1' in typed_line(["ping", "-c", "1"], "0").decode()
    assert typed_line(["/bin/ping", "-c", "1"], "0").decode().split("; ")[1] == "/bin/ping -c 1"


def test_a_guest_printing_without_end_of_line_is_relayed_in_parts_of_a_bounded_size(capfdbinary) -> None:
    """What the guest prints is its owner's to shape: a line that never ends is held LINE_BYTES at a time."""
    guest, console = socket.socketpair()
    endless = b"x" * (LINE_BYTES * 8)
    printing = threading.Thread(target=guest.sendall,
                                args=(b"vtopo-start-beef\n" + endless + b"\nvtopo-exit-3-beef\n",))
    printing.start()
    with guest, console:
        assert _relay(console, b"vtopo-start-beef", re.compile(rb"vtopo-exit-(\d+)-beef")) == 3
    printing.join()
    relayed = capfdbinary.readouterr().out.split(b"\n")
    assert b"".join(relayed) == endless and max(len(part) for part in relayed) < 2 * LINE_BYTES
