"""The line typed into a VM's console shell (the rest is tested against real guests in tests/labs/test_vms.py)."""
from __future__ import annotations

from vtopo.serial_console import typed_line


def test_the_echo_of_the_typed_line_never_looks_like_a_marker() -> None:
    line = typed_line(["iperf3", "-c", "10.0.0.2", "--title", "a b"], "beef").decode()
    assert "vtopo-start-beef" not in line and "vtopo-exit-" in line and "-beef" not in line.replace('"beef"', "")
    assert line.endswith("\n") and line.count("\n") == 1
    assert "'a b'" in line, "arguments are quoted for the guest's shell"


def test_bare_names_are_found_on_path_not_as_busybox_applets() -> None:
    assert '"$(which ping || echo ping)" -c 1' in typed_line(["ping", "-c", "1"], "0").decode()
    assert typed_line(["/bin/ping", "-c", "1"], "0").decode().split("; ")[1] == "/bin/ping -c 1"
