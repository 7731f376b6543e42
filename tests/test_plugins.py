"""Node kinds are plugins: a third-party distribution appears with no change to vtopo itself."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vtopo.lab_terms import default_prefix
from vtopo.kinds.registry import ENTRY_POINT_GROUP, Registry, load_registry
from vtopo.lab import registry
from vtopo.model import io
from vtopo.resources import TOPOLOGIES
from vtopo_kinds.bridge import BridgeKind

THIRD_PARTY = Path(__file__).parent / "data" / "thirdparty_kind"
BUILTIN_PLUGINS = Path(__file__).parents[1] / "plugins" / "vtopo_kinds"
BUILTIN = {"bridge", "container", "host", "macvlan", "macvtap", "ovs", "router", "vm"}


def test_builtin_kinds_come_through_entry_points():
    kinds = registry()
    assert set(kinds.kinds) >= BUILTIN
    assert not kinds.load_problems
    for kind in kinds.kinds.values():
        assert kind.icon_path().suffix == ".svg"


def test_checking_a_lab_loads_the_plugins_of_its_kinds_alone():
    lab = TOPOLOGIES / "bridge-veth.vtopo"  # a bridge and containers
    code = (f"from vtopo.cli.main import main\nassert main(['validate', '--offline', {str(lab)!r}]) == 0\nimport sys\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('vtopo_kinds.'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = result.stdout.splitlines()[-1].split()
    assert loaded == ["vtopo_kinds.bridge", "vtopo_kinds.common", "vtopo_kinds.container", "vtopo_kinds.dhcp",
                      "vtopo_kinds.vlans"]


def test_a_kind_whose_plugin_fails_to_load_troubles_only_the_labs_that_use_it():
    from importlib.metadata import EntryPoint

    kinds = load_registry()
    kinds.unloaded["gateway"] = EntryPoint("gateway", "vtopo_no_such_plugin:GatewayKind", ENTRY_POINT_GROUP)
    lab = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    assert kinds.check_nodes(lab)[1] == []
    node = next(iter(lab.nodes.values()))
    node.kind = "gateway"
    [problem] = kinds.check_nodes(lab)[1]
    assert problem.subject == f"node {node.name}" and problem.path == "$.nodes[0].kind"
    assert problem.message.startswith("plugin gateway (vtopo_no_such_plugin:GatewayKind) failed to load: No module")
    assert "gateway" not in kinds.names() and kinds.load_problems == [problem.message]


def test_an_entry_point_must_carry_its_kinds_name():
    from importlib.metadata import EntryPoint

    kinds = Registry(unloaded={"gateway": EntryPoint("gateway", "vtopo_kinds.container:ContainerKind",
                                                     ENTRY_POINT_GROUP)})
    assert kinds.get("gateway") is None and kinds.get("container") is None
    assert kinds.load_problems == ["plugin gateway (vtopo_kinds.container:ContainerKind) makes the kind 'container': "
                                   "its entry point must carry the kind's name"]


def test_threads_asking_for_a_kind_while_its_plugin_loads_all_get_it(tmp_path, monkeypatch):
    """The designer checks on a worker thread while its GUI thread may ask for the same kind."""
    from importlib.metadata import EntryPoint
    from threading import Thread

    (tmp_path / "vtopo_slow_plugin.py").write_text(
        "import time\ntime.sleep(0.3)\nfrom vtopo_kinds.container import ContainerKind\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    kinds = Registry(unloaded={"container": EntryPoint("container", "vtopo_slow_plugin:ContainerKind",
                                                       ENTRY_POINT_GROUP)})
    found: list[object] = []
    threads = [Thread(target=lambda: found.append(kinds.get("container"))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 3 and all(kind is kinds.loaded["container"] for kind in found)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("source") / THIRD_PARTY.name  # pip builds in place: not in the tracked tree
    shutil.copytree(THIRD_PARTY, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, capture_output=True)
    return target


def run_vtopo(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, env=env)


def test_third_party_kind_is_listed(installed_plugin):
    result = run_vtopo(installed_plugin, "kinds")
    assert result.returncode == 0, result.stderr
    assert "firewall" in result.stdout and "a third-party plugin" in result.stdout


def test_third_party_kind_compiles_in_a_lab(installed_plugin, tmp_path):
    doc = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    doc["nodes"].append({"id": "fw", "name": "fw", "kind": "firewall", "position": {"x": 0, "y": 0},
                         "settings": {"policy": "accept"}})
    doc["links"].append({"id": "fw-link", "a": {"node": "fw", "port": "eth0"}, "b": {"node": "br0", "port": "p9"}})
    lab = tmp_path / "with-firewall.vtopo"
    lab.write_text(json.dumps(doc))
    result = run_vtopo(installed_plugin, "plan", "--offline", str(lab), "--explain")
    assert result.returncode == 0, result.stderr
    assert f"ip netns add {default_prefix(doc['lab']['name'])}-fw" in result.stdout
    assert "net.ipv4.ip_forward=1" in result.stdout
    without = run_vtopo(Path("/nonexistent"), "validate", "--offline", str(lab))
    assert without.returncode == 2 and "unknown kind 'firewall'" in without.stderr


def test_the_plugin_contract_holds_only_what_plugins_use():
    """vtopo.kinds.api is the whole of vtopo a plugin sees: each name in it is used by a built-in kind or by the
    third-party example, so a name nobody needs does not widen the contract that vtopo must keep."""
    import ast

    from vtopo.kinds import api

    used: set[str] = set()
    for module in [*BUILTIN_PLUGINS.glob("*.py"), *THIRD_PARTY.rglob("*.py")]:
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "vtopo.kinds.api":
                used |= {alias.name for alias in node.names}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "api":
                used.add(node.attr)
    assert used == set(api.__all__)


def test_each_kind_has_only_the_capabilities_it_declares():
    """What only some kinds do is a capability a kind's class adds: vtopo asks a kind for it with isinstance, so a
    kind that lacks one (the third-party example has none) is never asked for it."""
    from vtopo.kinds import api

    kinds = registry().kinds
    capabilities = (api.RunsAsContainer, api.RunsMachine, api.ServesDhcp, api.GeneratesConfig, api.SavesState,
                    api.KeepsVlansApart, api.RoutesBetweenVlans, api.MakesTaggedPorts, api.ForwardsInUserspace,
                    api.ProtectsLoops)
    having = {capability.__name__: {name for name, kind in kinds.items() if isinstance(kind, capability)}
              for capability in capabilities}
    assert having == {"RunsAsContainer": {"container", "router"}, "RunsMachine": {"vm"},
                      "ServesDhcp": {"container", "router"}, "GeneratesConfig": {"router"},
                      "SavesState": {"container", "router"}, "KeepsVlansApart": {"bridge", "ovs"},
                      "RoutesBetweenVlans": {"ovs"}, "MakesTaggedPorts": {"ovs"}, "ForwardsInUserspace": {"ovs"},
                      "ProtectsLoops": {"bridge"}}


class ImageWithoutItsCapability(BridgeKind):
    """A third-party kind that writes a capability's hook (RunsAsContainer's image) but adds no capability."""
    name = "imaged"

    def image(self, node: object) -> None:
        return None


def test_a_kind_that_writes_a_capabilitys_hook_without_the_capability_does_not_load():
    from importlib.metadata import EntryPoint

    kinds = Registry(unloaded={"imaged": EntryPoint("imaged", f"{__name__}:ImageWithoutItsCapability",
                                                    ENTRY_POINT_GROUP)})
    assert kinds.get("imaged") is None
    assert kinds.load_problems == [f"plugin imaged ({__name__}:ImageWithoutItsCapability) writes image() without "
                                   "RunsAsContainer: add the capability to the kind's bases, or vtopo never calls it"]


def test_listing_the_kinds_defines_no_op():
    """A plugin names its ops as `api.X` in its hooks: they load with the first hook that yields one, so listing the
    kinds (`vtopo kinds`, the palette) defines none of their dataclasses, a fifth of the command's time."""
    code = ("from vtopo.kinds.registry import load_registry\nassert len(load_registry().kinds) >= 8\nimport sys\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('vtopo.ops'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
