"""Simulated hosts for tests (scripts/sim-host.sh): start and stop them, run commands inside, and list what labs left
there."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_process import Agent
from residue import snapshot
from spread_labs import LabBuilder, here
from vtopo.model import io
from vtopo.model.sites import Site

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "sim-host.sh"
ROOT = Path("/run/vtopo-sim")
ENGINE_LEFTOVERS = "from vtopo.host import oci_engine; print(*oci_engine.leftovers('/run/vtopo'), sep='\\n')"
HOST_LINKS = ("lo", "uplink", "ovs-netdev", "ovs-system")
"""A simulated host's own interfaces: its underlay, and those of its Open vSwitch once a lab has started it."""


@dataclass(frozen=True)
class SimulatedHost:
    name: str
    address: str

    @property
    def directory(self) -> Path:
        return ROOT / self.name

    @property
    def site(self) -> Site:
        ssh = self.directory / "ssh"
        return Site(self.name, f"root@{self.address}", identity=str(ssh / "id_ed25519"),
                    known_hosts=str(ssh / "known_hosts"))

    @classmethod
    def up(cls, name: str) -> SimulatedHost:
        environment = {**os.environ, "VTOPO_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(sys.path)}
        started = subprocess.run([str(SCRIPT), "up", name], capture_output=True, text=True, env=environment,
                                 timeout=60)
        assert started.returncode == 0, f"sim-host.sh up {name}: {started.stderr}{started.stdout}"
        said = started.stdout
        match = re.search(r"address (\S+)$", said.strip())
        assert match, said
        return cls(name, match.group(1))

    def down(self) -> None:
        subprocess.run([str(SCRIPT), "down", self.name], capture_output=True, text=True, timeout=120, check=True)

    def inside(self, *argv: str) -> list[str]:
        """The command line that runs `argv` inside the host's network and mount namespaces."""
        holder = (self.directory / "holder.pid").read_text().strip()
        return ["nsenter", "--target", holder, "--net", "--mount", "--", *argv]

    def vtopo_argv(self, *args: str) -> list[str]:
        return self.inside(str(self.directory / "bin" / "vtopo"), *args)

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.inside(*argv), capture_output=True, text=True, timeout=timeout)

    def vtopo(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.vtopo_argv(*args), capture_output=True, text=True, timeout=timeout)

    @property
    def agent_pid(self) -> int:
        return int((self.directory / "run" / "agent.pid").read_text())

    def start_agent(self) -> None:
        self.vtopo("agent", "--daemon", "--pid-file", "/run/vtopo/agent.pid", "--config",
                   str(self.directory / "agent.toml"))

    def channels(self) -> list[int]:
        """The processes of this host's end of a client's ssh channel to its agent (`vtopo agent --stdio`)."""
        return self._processes(lambda argv: b"agent" in argv and b"--stdio" in argv)

    def cut_off(self) -> None:
        """This host stops answering, as one that went away: its sshd, every session it holds (one still starting
        its end of a channel, before that runs the agent, too) and each channel's agent are killed."""
        for pid in self._processes(lambda argv: os.path.basename(argv[0]).startswith(b"sshd")) + self.channels():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _processes(self, chosen: Callable[[list[bytes]], bool]) -> list[int]:
        """The processes in this host's network namespace whose command line is `chosen`: the simulated hosts share
        this machine's processes, each in its own network namespace."""
        ours = os.readlink(f"/proc/{self.agent_pid}/ns/net")
        found = []
        for entry in Path("/proc").iterdir():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if chosen(argv) and os.readlink(entry / "ns" / "net") == ours:
                    found.append(int(entry.name))
            except (OSError, ValueError):
                continue
        return found

    def residue(self) -> list[str]:
        """What labs left on this host: namespaces, interfaces besides its own, nftables tables, lab records and run
        directories."""
        left = [f"namespace {name}" for name in self.run("ip", "netns", "list").stdout.split()]
        left += [f"link {line.split()[0]}" for line in self.run("ip", "-br", "link").stdout.splitlines()
                 if line.split()[0].split("@")[0] not in HOST_LINKS]
        left += [f"nft {line}" for line in self.run("nft", "list", "tables").stdout.splitlines() if "vtopo-" in line]
        labs = self.directory / "lib" / "labs"
        left += [f"record {path.name}" for path in labs.iterdir()] if labs.is_dir() else []
        left += [f"run directory {path.name}" for path in (self.directory / "run").iterdir() if path.is_dir()]
        return left + self.engine_leftovers()

    def engine_leftovers(self) -> list[str]:
        """runc's containers, bundle mounts and cgroups of this host's image nodes, as its own vtopo sees them."""
        listed = self.run("env", f"VTOPO_CGROUP_PARENT=vtopo-sim-{self.name}", f"PYTHONPATH={os.pathsep.join(sys.path)}",
                          sys.executable, "-c", ENGINE_LEFTOVERS)
        assert listed.returncode == 0, listed.stderr
        return [line for line in listed.stdout.splitlines() if line]


@dataclass
class Sites:
    agent: Agent  # the real host's
    b: SimulatedHost
    c: SimulatedHost
    directory: Path

    def builder(self, name: str) -> LabBuilder:
        return LabBuilder(name, [here(), self.b.site, self.c.site])

    def save(self, lab: LabBuilder) -> Path:
        path = self.directory / f"{lab.topology.name}.vtopo"
        io.save(lab.topology, path)
        return path

    def deploy(self, lab: LabBuilder) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(None, "deploy", str(self.save(lab)), "--allow-site", "b", "--allow-site", "c",
                                timeout=240)

    def vtopo(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(None, *args, timeout=240)

    @contextmanager
    def running(self, lab: LabBuilder) -> Iterator[Sites]:
        """`lab` deployed over the sites while the block runs, then destroyed, leaving nothing on any host."""
        before = snapshot()
        deployed = self.deploy(lab)
        assert deployed.returncode == 0, deployed.stderr
        try:
            yield self
        finally:
            destroyed = self.vtopo("destroy", lab.topology.name)
            assert destroyed.returncode == 0, destroyed.stderr
        assert self.residue() == {}, "a simulated host keeps something of the lab"
        assert snapshot() - before == {}, "the real host keeps something of the lab"

    def residue(self) -> dict[str, list[str]]:
        return {host.name: left for host in (self.b, self.c) if (left := host.residue())}


@contextmanager
def running_sites() -> Iterator[Sites]:
    """Simulated hosts b and c, and an agent of the tests' own on the real host, all configured by default (the
    client deploying a lab reads the VNI range from /etc/vtopo/agent.toml, the defaults when there is none)."""
    hosts: list[SimulatedHost] = []
    try:
        hosts = [SimulatedHost.up("b"), SimulatedHost.up("c")]
        with Agent.running() as agent, tempfile.TemporaryDirectory() as directory:
            yield Sites(agent, hosts[0], hosts[1], Path(directory))
    finally:
        for host in hosts:
            host.down()
