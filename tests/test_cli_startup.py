"""The CLI starts at once: importing it, and the commands that need no host, load no heavy library.

What a command imports is asserted rather than how long it takes, which would depend on the machine's load;
tests/benchmarks/test_startup_bench.py measures the times."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

HEAVY = ("pyroute2", "networkx", "PySide6", "shiboken6", "scapy", "matplotlib", "numpy", "yaml", "libvirt",
         "vtopo.measure", "vtopo.host.netlink", "vtopo.host.applier", "vtopo.deployed", "vtopo.gui")
LAB = Path(__file__).parents[1] / "topologies" / "l2-vs-l3.vtopo"


def said_and_modules_after(statements: str, environment: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """What a fresh interpreter printed running `statements`, and the modules it has loaded then."""
    code = f"{statements}\nimport sys\nprint(' '.join(sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, **(environment or {})})
    *said, loaded = result.stdout.splitlines()
    return "\n".join(said), loaded.split()


def modules_after(statements: str, environment: dict[str, str] | None = None) -> list[str]:
    """The modules a fresh interpreter has loaded after running `statements`."""
    return said_and_modules_after(statements, environment)[1]


def test_the_venvs_interpreter_finds_vtopo_without_an_import_hook():
    """scripts/setup.sh names app/ and plugins/ in a plain .pth: setuptools' editable finder, for packages from two
    folders, would load pathlib and importlib.util into every start of the venv's Python (9 ms of `python -c pass`)."""
    loaded = modules_after("import vtopo, vtopo_kinds")
    assert {"pathlib", "importlib.util"}.isdisjoint(loaded)
    assert not [name for name in loaded if "editable" in name]


def heavy_modules_after(statements: str, environment: dict[str, str] | None = None) -> set[str]:
    """The HEAVY packages a fresh interpreter has loaded after running `statements`."""
    loaded = modules_after(statements, environment)
    return {heavy for heavy in HEAVY if any(name == heavy or name.startswith(heavy + ".") for name in loaded)}


def test_importing_the_cli_and_building_its_parser_loads_nothing_heavy():
    assert heavy_modules_after("import vtopo.cli.main\nvtopo.cli.main.build_parser()") == set()


def test_the_parser_loads_only_the_command_line():
    """`vtopo --help` reads no lab: the model, the kinds and the agent's protocol load with the commands that use
    them. vtopo.user_data, plain paths, is the one module below the command line that it loads."""
    loaded = modules_after("import vtopo.cli.main\nvtopo.cli.main.build_parser()")
    below = {name for name in loaded if name.startswith("vtopo.") and not name.startswith("vtopo.cli")}
    assert below == {"vtopo.named_errors", "vtopo.user_data"}


def test_the_agents_client_loads_only_the_protocol_and_what_it_reports():
    """`vtopo status` through the agent: the request and its answer, and how to reach another site, without the terms
    a lab is compiled on (vtopo.lab_terms, which a deploy's consent is typed with)."""
    loaded = modules_after("import vtopo.client.agent_client")
    below = {name for name in loaded if name.startswith("vtopo.") and not name.startswith("vtopo.client")}
    assert below == {"vtopo.protocol", "vtopo.reports", "vtopo.ssh", "vtopo.model", "vtopo.model.rules",
                     "vtopo.model.sites"}


def test_status_of_no_labs_in_the_process_loads_nothing_heavy(tmp_path: Path):
    """Root's `vtopo status` with no agent listening runs one in its process: with no lab to probe, neither the
    compiler's NetworkX nor the applier's pyroute2 loads."""
    empty = {"VTOPO_STATE_DIR": str(tmp_path / "state"), "VTOPO_AGENT_SOCKET": str(tmp_path / "agent.sock")}
    if os.geteuid() != 0:
        pytest.skip("only root's commands run an agent in their own process")
    assert heavy_modules_after("from vtopo.cli.main import main\nassert main(['status']) == 0", empty) == set()


def test_status_of_no_labs_in_the_process_reads_only_the_record(tmp_path: Path):
    """The agent root's command runs in its process reads its record of no lab: the deployer, the compiler, the kinds,
    the ops and the lab model load with the first lab the record holds, or the first request that builds one."""
    empty = {"VTOPO_STATE_DIR": str(tmp_path / "state"), "VTOPO_AGENT_SOCKET": str(tmp_path / "agent.sock")}
    if os.geteuid() != 0:
        pytest.skip("only root's commands run an agent in their own process")
    said, loaded = said_and_modules_after("from vtopo.cli.main import main\nassert main(['status']) == 0", empty)
    assert said == "no lab is deployed"
    assert "vtopo.server.agent_server" in loaded  # it did answer in this process
    assert {"vtopo.host.deployer", "vtopo.compile", "vtopo.kinds.registry", "vtopo.kinds.contract", "vtopo.ops",
            "vtopo.model.topology", "vtopo.server.live_lab"}.isdisjoint(loaded)


def test_listing_kinds_loads_nothing_heavy():
    assert heavy_modules_after("from vtopo.cli.main import main\nmain(['kinds'])") == set()


def test_listing_kinds_loads_nothing_a_lab_needs():
    """The kinds' contract names the lab's classes only as types, names are hashed (OpenSSL) when a lab is compiled,
    a VM's libvirt domain is written (XML) when libvirt runs it, and what the hooks tell the host layer about a
    running node (its files, image, DHCP leases...) is made when a hook first names it: listing the kinds loads none
    of them."""
    loaded = modules_after("from vtopo.cli.main import main\nmain(['kinds'])")
    assert {"vtopo.model.topology", "_hashlib", "xml.etree.ElementTree", "vtopo.kinds.running",
            "vtopo.kinds.leases"}.isdisjoint(loaded)


@pytest.mark.parametrize("argv", [["validate", "--offline"], ["plan", "--offline"]])
def test_compiling_a_lab_without_the_host_loads_only_networkx(argv):
    assert heavy_modules_after(f"from vtopo.cli.main import main\nmain({[*argv, str(LAB)]!r})") == {"networkx"}


@pytest.mark.parametrize("argv", [["validate", "--offline"], ["validate"]], ids=["offline", "this host's facts"])
def test_validating_a_lab_loads_no_op(argv):
    """Validating resolves the lab: its rules make no op, so neither the ops' classes nor lowering load. A lab with no
    macvlan or macvtap has no lower device to look for on the host, the one question only its plan answers."""
    loaded = modules_after(f"from vtopo.cli.main import main\nmain({[*argv, str(LAB)]!r})")
    assert not [name for name in loaded if name.startswith("vtopo.ops") or name in (
        "vtopo.compile.compiler", "vtopo.compile.links", "vtopo.compile.containers", "vtopo.compile.plan")]


def test_validating_a_lab_with_a_lower_device_lowers_it():
    """A macvlan's lower device is named in the plan: validating against this host's facts lowers the lab."""
    lab = LAB.with_name("macvlan-bridge.vtopo")
    loaded = modules_after(f"from vtopo.cli.main import main\nmain({['validate', str(lab)]!r})")
    assert "vtopo.compile.compiler" in loaded


def test_validating_without_the_host_loads_no_host_layer():
    """`vtopo validate --offline` checks the lab against default facts: what this host lacks is not asked, and the
    host layer (its preflight, the dry runs' thread pool) does not load, nor what the kinds tell it about a running
    node (the configurations its programs must accept among them)."""
    said, loaded = said_and_modules_after(f"from vtopo.cli.main import main\nmain({['validate', '--offline', str(LAB)]!r})")
    assert said == f"{LAB}: valid (7 nodes, 6 links)"
    assert not [name for name in loaded if name.startswith(("vtopo.host", "concurrent.futures", "vtopo.kinds.running"))]


def test_showing_a_lab_loads_nothing_heavy():
    """`vtopo show` reads the lab and compiles none: importing the compiler does not load NetworkX."""
    assert heavy_modules_after(f"from vtopo.cli.main import main\nmain({['show', str(LAB)]!r})") == set()


def test_help_of_every_command_prints():
    """argparse expands % in help texts only when it prints them, so a stray % breaks `vtopo --help` alone."""
    from vtopo.cli.main import build_parser

    parser = build_parser()
    assert "vtopo link" in parser.format_help()
    for name, command in _commands(parser).items():
        assert command.format_help(), name


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction)).choices


def test_a_command_is_parsed_by_its_parser_alone_the_same_as_among_all():
    """`vtopo COMMAND ...` builds COMMAND's parser alone: it is the one the parser of every command holds."""
    from vtopo.cli.main import build_parser

    for name, command in _commands(build_parser()).items():
        alone = _commands(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == command.format_help(), name


def test_a_command_of_no_such_name_is_told_every_command():
    said = subprocess.run([sys.executable, "-m", "vtopo", "validat", "lab.vtopo"], capture_output=True, text=True)
    assert said.returncode == 2 and "invalid choice: 'validat' (choose from 'validate'," in said.stderr


def test_a_command_that_answers_and_exits_runs_without_the_cycle_collector():
    """As the program, `vtopo validate` exits once it has answered: the collector's passes would be time lost, from
    the command line's first import on (the program's entry point imports it only once it has turned the collector
    off). The same command called in a process that goes on (a test, the designer) leaves the collector on."""
    program = (f"import gc, sys\nsys.argv = {['vtopo', 'validate', '--offline', str(LAB)]!r}\nimport vtopo.cli\n"
               "print('vtopo.cli.main' in sys.modules)\ntry:\n    vtopo.cli.run()\nexcept SystemExit:\n"
               "    print(gc.isenabled())")
    called = f"import gc\nfrom vtopo.cli.main import main\nmain({['validate', '--offline', str(LAB)]!r})\nprint(gc.isenabled())"
    main_loaded_first, *_, collecting = said_and_modules_after(program)[0].splitlines()
    assert main_loaded_first == "False" and collecting == "False"
    assert said_and_modules_after(called)[0].splitlines()[-1] == "True"


def test_validating_against_this_hosts_facts_loads_only_networkx():
    assert heavy_modules_after(f"from vtopo.cli.main import main\nmain({['validate', str(LAB)]!r})") == {"networkx"}


def test_validating_a_lab_without_images_reads_no_image_store():
    """The host's facts include the OCI images a lab's nodes name: a lab that names none reads no image store."""
    said, loaded = said_and_modules_after(f"from vtopo.cli.main import main\nmain({['validate', str(LAB)]!r})")
    assert said == f"{LAB}: valid (7 nodes, 6 links)"
    assert "vtopo.host.facts" in loaded and "vtopo.host.image_store" not in loaded


def test_validating_a_lab_without_vms_loads_no_libvirt_code():
    """KVM and libvirtd are probed only for a lab with VMs: the module that talks to libvirtd (and starts it, with
    the host's processes and files) does not load for one without."""
    said, loaded = said_and_modules_after(f"from vtopo.cli.main import main\nmain({['validate', str(LAB)]!r})")
    assert said == f"{LAB}: valid (7 nodes, 6 links)"
    assert not {"vtopo.host.libvirtd", "vtopo.host.processes"} & set(loaded)


@pytest.mark.parametrize("vtopo", [f"{sys.executable} -m vtopo", str(Path(sys.executable).with_name("vtopo"))],
                         ids=["python -m vtopo", "console script"])
def test_output_cut_short_by_its_reader_ends_quietly(tmp_path: Path, vtopo: str) -> None:
    """`vtopo plan LAB | head -1`: the reader goes away long before vtopo has printed the 2,402 steps."""
    from benchmarks.test_deploy_bench import star
    from vtopo.model import io

    lab = tmp_path / "big.vtopo"
    io.save(star(400), lab)
    shell = f"{vtopo} plan --offline {lab} | head -1"
    result = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, check=True)
    assert result.stdout.split()[:2] == ["1.", "create"] and result.stderr == ""


def test_errors_are_named_without_loading_their_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent answers on threads: a request may fail while another thread is importing vtopo.deployed, whose
    NotDeployed is not defined yet (and so cannot have been raised), and a module nobody imported is not loaded."""
    from vtopo.model.problems import LabError
    from vtopo.named_errors import loaded

    monkeypatch.setitem(sys.modules, "vtopo.deployed", types.ModuleType("vtopo.deployed"))  # partly imported
    monkeypatch.delitem(sys.modules, "vtopo.lab_operations", raising=False)
    names = ("vtopo.deployed:NotDeployed", "vtopo.lab_operations:OperateError", "vtopo.model.problems:LabError")
    assert loaded(names) == (LabError,)
    assert "vtopo.lab_operations" not in sys.modules
