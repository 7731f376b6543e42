"""Shared fixtures and the `privileged` marker.

A privileged test needs root and the host tools vtopo drives. Outside CI it skips with the reason;
in CI (CI=true) a privileged test that cannot run fails instead, so a green CI run means it ran.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Generator, Iterator

import pytest

# The suite is never served by an agent that setup started, which may run another checkout's code: vtopo's clients
# look for the agent on a socket of this session, where nothing listens, so root applies plans in its own process
# (this checkout's code). The tests of the agent start their own agents (tests/agent_process.py). Set before vtopo
# is imported: the socket's path is read once.
os.environ["VTOPO_AGENT_SOCKET"] = f"/run/vtopo-tests-{os.getpid()}/agent.sock"

# Tests press Ctrl-C in the processes they start (vtopo iperf, a node's shell). A run started in the background by a
# non-interactive shell inherits SIGINT ignored, and so would every process it starts; the interrupt is put back.
signal.signal(signal.SIGINT, signal.default_int_handler)

from vtopo.cli.common import run_agent_in_process  # noqa: E402
from vtopo.host.libvirtd import LibvirtService  # noqa: E402
from vtopo.host.ovs import OvsService, vsctl  # noqa: E402
from vtopo.gui.workers import GuiThreadCollector  # noqa: E402
from vtopo.host.state import StateStore  # noqa: E402

run_agent_in_process()  # as `vtopo` does: the designer and the clients the tests make run the agent's code for root

REQUIRED_TOOLS = ("ip", "ovs-vsctl", "iperf3", "ethtool")


def _privileged_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, netlink, OVS, or an agent run in the test's own process)"
    missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    if missing:
        return f"needs {', '.join(missing)}: run `make setup` first"
    return None


_MODULES_WITH_PRIVILEGED_TESTS: set[Path] = set()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if "privileged" not in item.keywords:
        return
    reason = _privileged_unavailable()
    if reason is None:
        _MODULES_WITH_PRIVILEGED_TESTS.add(item.path)
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"privileged test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's histories and experiment outputs go to a data directory of its own (VTOPO_DATA_DIR, which the
    commands it starts inherit), never to the user's."""
    home = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("VTOPO_DATA_DIR", str(home))
    return home


@pytest.fixture
def ovs_stopped() -> None:
    """Open vSwitch is stopped, so the test sees vtopo start it (skips if OVS holds bridges vtopo did not make)."""
    service = OvsService()
    if service.running():
        if vsctl([["list-br"]]).split():
            pytest.skip("Open vSwitch runs with bridges vtopo did not make; this test needs to stop it")
        service.stop()


@pytest.fixture(scope="session")
def libvirtd() -> Iterator[LibvirtService]:
    """libvirtd for the libvirt backend, started the way vtopo starts it (pid files of its own) and stopped after the
    suite when the suite started it."""
    service = LibvirtService(Path("/run/vtopo-tests-libvirtd"))
    service.start()
    yield service
    if service.started_by_us():
        service.stop()
        service.pid_dir.rmdir()


def _deployed_labs() -> set[str]:
    names = set()
    for record in StateStore().labs():
        try:
            names.add(record.name)
        except FileNotFoundError:  # destroyed meanwhile
            continue
    return names


@pytest.fixture(autouse=True)
def _cycles_collected_on_the_main_thread() -> Iterator[None]:
    """Once a test made a designer window, the process collects cycles only when the GUI thread asks (as the
    designer does); between tests, the main thread does what its timer would."""
    yield
    if (collector := GuiThreadCollector.installed()) is not None:
        collector.collect_due()


_LABS_BEFORE_THE_MODULE: set[str] = set()


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.geteuid() == 0:  # a plain user's run deploys nothing, and may not read the labs' records
        _LABS_BEFORE_THE_MODULE.update(_deployed_labs())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """Once a module's last test and its fixtures are done, no lab it deployed is left: a lab left behind fails that
    test, naming the lab, and is destroyed so that the tests after it (which may deploy the same file) are not
    refused. Labs deployed before the suite, by the user or the agent they run, are not the suite's. A module without
    a privileged test deploys nothing, so it is not checked: run beside another suite, it would take that suite's labs
    for its own leaks."""
    yield
    if nextitem is not None and nextitem.path == item.path:
        return
    if item.path not in _MODULES_WITH_PRIVILEGED_TESTS:
        return
    left = _deployed_labs() - _LABS_BEFORE_THE_MODULE
    for name in sorted(left):
        subprocess.run([sys.executable, "-m", "vtopo", "destroy", name], capture_output=True, check=False, timeout=300)
    if left:
        raise AssertionError(f"{item.path.name} left deployed: {', '.join(sorted(left))}")
