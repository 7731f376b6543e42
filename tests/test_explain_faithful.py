"""One rendering per op: the explanation names the devices, namespaces and arguments the applier uses.

Every op of every shipped lab goes through the real Applier with the kernel and the OVS tools replaced by recorders,
and through its explain() lines, read back the way sh reads them. What the applier handed the kernel or ovs-vsctl
must be what the explanation says.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from vtopo import ops as o
from vtopo.host import applier as applier_module
from vtopo.host import ovs
from vtopo.host.applier import Applier
from vtopo.lab import open_lab, plan_of
from vtopo.model.rules import lab_tag
from vtopo.resources import TOPOLOGIES

LABS = sorted(TOPOLOGIES.glob("*.vtopo"))
NETDEV_OPS = (o.CreateNamespace, o.CreateBridge, o.CreateVeth, o.CreateMacvlan, o.CreateMacvtap, o.CreateTap,
              o.SetMaster, o.ConfigureLink, o.AddAddress, o.AddRoute, o.SetSysctl, o.SetTxChecksum)


class Recorder:
    """Stands in for Netlink or a module of host functions: records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))


def words_of(lines: list[str], prefix: str) -> list[list[str]]:
    """The explanation's commands as sh would split them, with the script's LAB_TAG filled in."""
    return [shlex.split(line.replace('"$LAB_TAG"', shlex.quote(lab_tag(prefix)))) for line in lines
            if line and not line.startswith("#")]


def strings_in(call: tuple[str, tuple[Any, ...], dict[str, Any]]) -> list[str]:
    _, args, kwargs = call
    return [value for value in [*args, *kwargs.values()] if isinstance(value, str) and value]


@pytest.mark.parametrize("lab_file", LABS, ids=[p.stem for p in LABS])
def test_explanation_and_applier_agree(lab_file: Path, monkeypatch: pytest.MonkeyPatch):
    plan = plan_of(open_lab(lab_file).topology)
    ovs_calls: list[tuple[list[str], str | None]] = []
    monkeypatch.setattr(ovs, "_run", lambda argv, input=None, timeout_s=0: ovs_calls.append((list(argv), input)) or "")
    applier = Applier.__new__(Applier)
    applier.tag = plan.prefix
    for op in plan.ops:
        explained = words_of(op.explain(), plan.prefix)
        if isinstance(op, NETDEV_OPS):
            applier.netlink = netlink = Recorder()
            monkeypatch.setattr(applier_module, "namespaces", namespaces := Recorder())
            applier.apply(op)
            words = {word for command in explained for word in command}
            touched = [s for call in netlink.calls + namespaces.calls for s in strings_in(call)]
            assert touched and all(s in words or any(s in word for word in words) for s in touched), (op, touched)
        elif isinstance(op, (o.OvsAddBridge, o.OvsAddPort)):
            ovs_calls.clear()
            applier.apply_ovs_batch([op])
            [(argv, _)] = ovs_calls
            assert " ".join(argv).split(" -- ")[1:] == " ".join(explained[0][1:]).split(" -- "), op
            assert explained[0][0] == argv[0] == "ovs-vsctl"
        elif isinstance(op, o.OvsAddFlows):
            ovs_calls.clear()
            applier.apply(op)
            [(argv, stdin)] = ovs_calls
            first, *body, _ = op.explain()
            assert shlex.split(first.split(" <<")[0]) == argv and body == stdin.splitlines(), op
        elif isinstance(op, o.SetImpairment):
            command = explained[-1]
            assert op.name in command and (op.netns is None or op.netns in command)
            if op.rate_mbit:
                assert str(o.tbf_burst(op.rate_mbit)) in command and f"{o.TBF_LATENCY_MS}ms" in command
        elif isinstance(op, (o.MakeDirectory, o.WriteFile)):
            assert op.path in explained[0]
            if isinstance(op, o.MakeDirectory) and op.mode is not None:
                assert ["chmod", f"{op.mode:o}", op.path] in explained and ["chown", f"{op.user}:", op.path] in explained
        elif isinstance(op, o.StartProcess):
            assert_start_explained(applier, op, explained[-1], monkeypatch)
        elif isinstance(op, o.LoadConfig):
            monkeypatch.setattr(applier_module, "processes", ran := Recorder())
            applier.apply(op)
            [(name, (argv, _seconds), kwargs)] = ran.calls
            assert name == "run_command" and explained == [["(", "cd", kwargs["cwd"], "&&", *argv, ")"]], op


class HostDevices(Recorder):
    """Netlink for a process start: an interface's index, and a descriptor (of /dev/null) for each tap attached."""

    def index(self, _name: str, _netns: str | None) -> int:
        return 7

    def attach_tap(self, _name: str) -> int:
        return os.open(os.devnull, os.O_RDWR)


def assert_start_explained(applier: Applier, op: o.StartProcess, command: list[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The explanation runs the argv the applier starts, behind the same namespace entry and privilege drop, with
    the same umask, and redirects exactly the descriptors the applier hands over."""
    applier.netlink = HostDevices()
    monkeypatch.setattr(applier_module, "processes", started := Recorder())
    monkeypatch.setattr(applier_module, "owned_files", Recorder())
    monkeypatch.setattr(applier_module, "open_device", lambda _path: os.open(os.devnull, os.O_RDWR))
    monkeypatch.setattr(applier_module, "open_image", lambda _path: os.open(os.devnull, os.O_RDONLY))
    applier.apply(op)
    [(name, (argv, netns, *_), kwargs)] = started.calls
    assert name == "start_daemon" and argv == list(op.argv) and netns == op.netns
    if op.user:
        assert command[:5] == ["(", "umask", "077", "&&", "exec"] and command[-2:] == [")", "&"]
        assert kwargs["umask"] == 0o077
        command = command[5:-2]
        assert "--no-new-privs" in kwargs["privileges"] and f"--reuid={op.user}" in kwargs["privileges"]
    if op.directory:
        assert command[:4] == ["(", "cd", op.directory, "&&"] and command[-1] == ")" and kwargs["cwd"] == Path(
            op.directory)
        command = command[4:-1]
    launch = (["ip", "netns", "exec", op.netns] if op.netns else []) + list(kwargs["privileges"])
    assert command[:len(launch) + len(argv)] == launch + argv
    redirected = {int(word.split("<")[0]): word for word in command[len(launch) + len(argv):] if "<" in word}
    assert set(redirected) == set(kwargs["open_files"]) | set(kwargs["inherited_fds"]), (redirected, kwargs)
    for fd, interface in op.tap_fds:
        assert redirected[fd] == f"{fd}<>/dev/tap$(cat" and f"/sys/class/net/{interface}/ifindex)" in " ".join(command)
    for fd, _interface in op.tun_fds:
        assert redirected[fd] == f"{fd}<>/dev/net/tun"
