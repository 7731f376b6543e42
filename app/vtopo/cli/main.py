"""`vtopo`'s parser, the commands on a lab itself (validate, plan, kinds, show, deploy, destroy, status, cleanup,
exec, console, gui), and how a command's errors end it.

`vtopo --help`, `vtopo kinds` and `vtopo status` start at once because this module and the families of commands it
registers import the model, the host layer (pyroute2), the measure layer and Qt only inside the handlers that use
them, and the compiler (NetworkX) only through `vtopo.lab` inside handlers. tests/test_cli_startup.py checks it.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, cast

from vtopo import __version__
from vtopo.cli.agent_command import AGENT_NOTE
from vtopo.cli.agent_command import add_commands as add_agent_commands
from vtopo.cli.capture import add_commands as add_capture_commands
from vtopo.cli.check import add_commands as add_check_commands
from vtopo.cli.common import agent_client, on_its_site, run_agent_in_process
from vtopo.cli.consent import add_consent_arguments, consent_of
from vtopo.cli.exercise import add_commands as add_exercise_commands
from vtopo.cli.experiment import add_commands as add_experiment_commands
from vtopo.cli.grade import add_commands as add_grade_commands
from vtopo.cli.images import add_commands as add_image_commands
from vtopo.cli.interop import add_commands as add_interop_commands
from vtopo.cli.measure import add_commands as add_measure_commands
from vtopo.cli.operate_commands import add_commands as add_operate_commands
from vtopo.cli.sites import add_commands as add_sites_commands
from vtopo.cli.sites import deploy_spread, destroy_spread, explain_spread, status_spread
from vtopo.named_errors import loaded

if TYPE_CHECKING:
    from vtopo.client.agent_client import AgentClient, AgentError
    from vtopo.deployed import DeployedLab
    from vtopo.lab_terms import HostFacts
    from vtopo.model.problems import LabError, Problem
    from vtopo.model.topology import Topology
    from vtopo.reports import Progress

EXIT_OK, EXIT_FAILED, EXIT_BAD_LAB = 0, 1, 2

# What ends a command, named for vtopo.named_errors.loaded: a lab's problems, each on its line; a refusal, in one line
# instead of a traceback; a failure the agent reports, as it says it.
LAB_ERRORS = ("vtopo.model.problems:LabError",)
ONE_LINE_ERRORS = ("vtopo.deployed:NotDeployed", "vtopo.kinds.contract:CannotRunInside",
                   "vtopo.measure.nodes:MeasureError", "vtopo.host.errors:HostError",
                   "vtopo.client.agent_client:AgentRefused", "vtopo.client.agent_client:AgentUnavailable",
                   "vtopo.model.placement:Unreachable", "vtopo.sites.spread:SitesFailed",
                   "vtopo.oci_archives:ArchiveError")
AGENT_FAILED = ("vtopo.client.agent_client:AgentError",)


def print_problems(problems: list[Problem]) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)


def _facts(args: argparse.Namespace, topology: Topology) -> HostFacts | None:
    """This host's facts, or None (the defaults) with --offline, for CI and for a lab meant for other hosts."""
    if args.offline:
        return None
    from vtopo.host.facts import probe_for
    from vtopo.kinds.registry import installed_kinds

    return probe_for(topology, installed_kinds())


def cmd_address(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from vtopo.compile.auto_addressing import address_links, apply_edits
    from vtopo.lab import open_lab, registry
    from vtopo.model import io
    from vtopo.model.problems import LabError, Problem

    topology = open_lab(args.file).topology
    if args.ipv4:
        topology.update_lab(addressing=replace(topology.addressing, ipv4=args.ipv4, ipv4_prefix=args.ipv4_prefix))
        if wrong := topology.addressing.problems():
            raise LabError([Problem(message, "lab", f"--{key.replace('_', '-')}") for key, message in wrong])
    if topology.addressing.empty:
        raise LabError([Problem("the lab sets no address pool: add \"addressing\": {\"ipv4\": \"10.0.0.0/16\"} to its "
                                "\"lab\" object, or give one with --ipv4", "lab", "$.lab.addressing")])
    edits = address_links(topology, registry(), list(topology.links))
    apply_edits(topology, edits)
    io.save(topology, args.file)
    for shortage in dict.fromkeys(edits.shortages):
        print(f"warning: {shortage}", file=sys.stderr)
    print(f"{args.file}: gave {len(edits.interfaces)} link ends addresses from {topology.addressing.describe()}, and "
          f"{len(edits.settings)} nodes a default gateway")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from vtopo.lab import open_lab, validated
    from vtopo.model.problems import errors_in

    lab = open_lab(args.file)
    problems = validated(lab.topology, _facts(args, lab.topology), consent_of(args))
    print_problems(problems)
    if errors_in(problems):
        print(f"{args.file}: {len(errors_in(problems))} error(s)", file=sys.stderr)
        return EXIT_BAD_LAB
    topology = lab.topology
    print(f"{args.file}: valid ({len(topology.nodes)} nodes, {len(topology.links)} links"
          f"{f', {len(problems)} warning(s)' if problems else ''})")
    return EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    from vtopo.compile.compiler import compile_plan
    from vtopo.compile.resolve import resolve
    from vtopo.lab import open_lab, registry

    lab = open_lab(args.file)
    plan = compile_plan(resolve(lab.topology, registry(), _facts(args, lab.topology), consent_of(args)))
    if args.json:
        sys.stdout.write(plan.dumps())
        return EXIT_OK
    if args.explain:
        owners = None
        if args.node:
            owners = {f"node {name}" for name in args.node}
            owners |= {f"link {lab.topology.describe_link(link)}" for link in lab.topology.links.values()
                       if {lab.topology.nodes[e.node].name for e in link.ends} & set(args.node)}
        spread = explain_spread(lab.topology, _facts(args, lab.topology), consent_of(args), owners)
        sys.stdout.write(spread if spread is not None else plan.explain(owners))
        return EXIT_OK
    print_problems(plan.warnings)
    width = len(str(len(plan.steps)))
    for step in plan.steps:
        print(f"{step.index:>{width}}. {step.op.summary():<60} [{step.op.owner}]")
    return EXIT_OK


def cmd_kinds(args: argparse.Namespace) -> int:
    from vtopo.kinds.registry import load_registry

    kinds = load_registry()
    for problem in kinds.load_problems:
        print(f"warning: {problem}", file=sys.stderr)
    if not kinds.kinds:
        print("no node kinds are installed: vtopo's own come with its distribution, registered as entry points "
              "(pip install . in a checkout; a folder on PYTHONPATH registers none)", file=sys.stderr)
        return EXIT_FAILED
    for name, kind in sorted(kinds.kinds.items()):
        print(f"{name:<10} {kind.role.value:<9} {kind.label}: {kind.description}")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from vtopo.lab import open_lab

    topology = open_lab(args.file).topology
    print(f"lab {topology.name} ({len(topology.nodes)} nodes, {len(topology.links)} links)")
    if topology.notes:
        print("\n" + topology.notes.strip() + "\n")
    for node in topology.nodes.values():
        print(f"  node {node.name:<10} {node.kind:<10} {json.dumps(node.settings) if node.settings else ''}")
        for command in node.startup_commands:
            print(f"       startup command: {command}")
    for link in topology.links.values():
        addresses = [", ".join(e.interface.addresses) for e in link.ends]
        print(f"  link {topology.describe_link(link):<24} {' | '.join(a or '-' for a in addresses)}")
    return EXIT_OK


def cmd_gui(args: argparse.Namespace) -> int:
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
            or os.environ.get("QT_QPA_PLATFORM") in ("offscreen", "minimal")):
        print("vtopo gui: no display found ($DISPLAY and $WAYLAND_DISPLAY are unset).\n"
              "Use the headless CLI instead, for example:\n"
              "  vtopo plan topologies/l2-vs-l3.vtopo --explain\n"
              "  vtopo deploy topologies/l2-vs-l3.vtopo\n"
              "  vtopo --help", file=sys.stderr)
        return EXIT_FAILED
    if importlib.util.find_spec("PySide6") is None:
        print("vtopo gui: the designer needs Qt, which this vtopo was installed without: pip install 'vtopo[gui]'",
              file=sys.stderr)
        return EXIT_FAILED
    from vtopo.gui.app import run

    return run(args.file)


def _progress_printer(verbose: bool) -> Callable[[Progress], None]:
    from vtopo.reports import OUTPUT_STAGE

    last_stage = [""]

    def show(progress: Progress) -> None:
        if progress.stage == OUTPUT_STAGE:  # what a startup command printed: always shown
            for line in progress.message.splitlines():
                print(f"  {progress.owner.removeprefix('node ')}| {line}", flush=True)
            return
        if progress.stage != last_stage[0]:
            last_stage[0] = progress.stage
            print(f"== {progress.stage}", flush=True)
        if verbose:
            print(f"  [{progress.done}/{progress.total}] {progress.message}  ({progress.owner})", flush=True)

    return show


def cmd_deploy(args: argparse.Namespace) -> int:
    from vtopo.model.lab_text import read_text

    text = read_text(args.file)
    if (spread := deploy_spread(args, text, consent_of(args), _progress_printer(args.verbose))) is not None:
        return spread
    report = agent_client().deploy(text, consent_of(args), _progress_printer(args.verbose),
                                   args.update, str(args.file.resolve()), every_step=args.verbose)
    for notice in report.notices:
        print(f"note: {notice}")
    print(f"deployed lab {report.lab} (prefix {report.prefix}): {report.nodes} nodes, {report.links} links, "
          f"{report.ops} operations in {report.seconds:.2f} s")
    return EXIT_OK


def _lab_name(target: str) -> str:
    """The name of the lab `target` is, or names: a lab file is read (which loads the compiler) only if it is one."""
    path = Path(target)
    if path.suffix != ".vtopo" or not path.exists():
        return target
    from vtopo.lab import open_lab

    return open_lab(path).topology.name


def cmd_destroy(args: argparse.Namespace) -> int:
    started = time.monotonic()
    name = _lab_name(args.lab)
    agent = agent_client()
    if (spread := destroy_spread(name, agent, _progress_printer(args.verbose))) is not None:
        return spread
    steps = agent.destroy(name, _progress_printer(args.verbose), every_step=args.verbose)
    print(f"destroyed lab {name}: {steps} operations undone in {time.monotonic() - started:.2f} s")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from vtopo.reports import user_name

    name = _lab_name(args.lab) if args.lab else None
    agent = agent_client()
    if args.watch:
        if not name:
            raise SystemExit("error: vtopo status --watch follows one lab: name it")
        from vtopo.cli.watch import watch_status

        return watch_status(agent, name)
    if name and (spread := status_spread(name, agent)) is not None:
        return spread
    differences: list[str] = []
    if args.verify:
        labs, differences = agent.verify(name)
    else:
        labs = agent.status(name)
    if not labs:
        print("no lab is deployed")
    for lab in labs:
        print(f"lab {lab.lab}{f' (prefix {lab.prefix})' if lab.prefix else ''}"
              f"{f' from {lab.source}' if lab.source else ''}, owner {user_name(lab.owner)}: {lab.state}")
        deployed = _deployed(agent, lab.lab) if args.verbose and os.geteuid() == 0 else None  # root's VMs' processes
        for kind, parts in (("node", lab.nodes), ("link", lab.links)):
            for part in parts:
                print(f"  {kind} {part.name:<24} {part.state}{part.detail}")
                for line in deployed.machine_lines(part.name) if deployed is not None and kind == "node" else []:
                    print(f"  {'':<29}   {line}")
    if args.verify:
        print("\n".join(differences) if differences else "the agent's record is what the host has")
    return EXIT_OK if all(lab.up for lab in labs) and not differences else EXIT_FAILED


def _deployed(agent: AgentClient, lab: str) -> DeployedLab:
    from vtopo.deployed import DeployedLab

    return DeployedLab.of_deployment(agent.deployment(lab))


def cmd_cleanup(args: argparse.Namespace) -> int:
    report = agent_client().cleanup(_progress_printer(args.verbose))
    for name in report.labs:
        print(f"destroyed lab {name}")
    for stray in report.strays:
        print(f"removed stray {stray}")
    for error in report.errors:
        print(f"error: {error}", file=sys.stderr)
    if not (report.labs or report.strays or report.errors):
        print("nothing to clean up")
    return EXIT_FAILED if report.errors else EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    command = args.command_argv[1:] if args.command_argv[:1] == ["--"] else args.command_argv
    client = agent_client()  # measurements start many of it: it stays light
    on_its_site(client, args.lab, args.node, ["exec", args.lab, args.node, "--", *command])
    return client.exec(args.lab, args.node, command)


def cmd_console(args: argparse.Namespace) -> int:
    if os.isatty(0):
        print(f"console of {args.node} ({args.lab}); Ctrl-] leaves it, the VM keeps running\r", file=sys.stderr)
    client = agent_client()
    on_its_site(client, args.lab, args.node, ["console", args.lab, args.node])
    client.console(args.lab, args.node)
    return 0


class _Unread(argparse.ArgumentParser):
    """Where the commands a run does not invoke declare their arguments: nothing reads them, so it keeps none, and
    argparse builds no help formatter to check each one against (the ~150 arguments took ~2 ms of `vtopo validate`)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return argparse.Action(option_strings=[], dest=argparse.SUPPRESS)


def build_parser(invoked: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command `invoked` alone when there is one of that name: a run reads no
    other command's arguments, and building the other parsers is most of the parse (argparse looks for its
    translations on disk for each). What the other commands declare goes to a parser that keeps none of it."""
    parser = argparse.ArgumentParser(prog="vtopo", description="Draw, deploy and measure virtual network labs. "
                                     + AGENT_NOTE)
    parser.add_argument("--version", action="version", version=f"vtopo {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    unread = _Unread(add_help=False, conflict_handler="resolve")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        if invoked is not None and name != invoked:
            return unread
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    offline = "use default host facts instead of probing this host (for CI, or a lab meant for other hosts)"
    sub = command("validate", cmd_validate, "check a lab file against this host (lower devices, images, KVM); "
                  "exit 2 and list every problem if it is not valid")
    sub.add_argument("file", type=Path)
    sub.add_argument("--offline", action="store_true", help=offline)
    add_consent_arguments(sub)
    sub = command("address", cmd_address, "give every link end that holds addresses and has none the next free "
                  "address of the lab's pool (its LAN's subnet, or a new one), and hosts their LAN's router as gateway")
    sub.add_argument("file", type=Path)
    sub.add_argument("--ipv4", metavar="NETWORK", help="set the lab's IPv4 pool first, e.g. 10.0.0.0/16")
    sub.add_argument("--ipv4-prefix", type=int, default=24, metavar="N", help="with --ipv4: the prefix of its subnets "
                     "(default: 24)")
    sub = command("plan", cmd_plan, "show the ordered host operations a lab compiles to on this host")
    sub.add_argument("file", type=Path)
    sub.add_argument("--offline", action="store_true", help=offline)
    sub.add_argument("--explain", action="store_true", help="print the plan as a commented shell script")
    sub.add_argument("--json", action="store_true", help="print the plan as JSON, for tools")
    sub.add_argument("--node", action="append", metavar="NAME", help="with --explain: only these nodes and their links")
    add_consent_arguments(sub)
    command("kinds", cmd_kinds, "list the node kinds installed (built-in and plugins)")
    sub = command("show", cmd_show, "summarise a lab file: nodes, links, addresses, notes")
    sub.add_argument("file", type=Path)
    sub = command("deploy", cmd_deploy, "build a lab on this host (needs root)")
    sub.add_argument("file", type=Path)
    sub.add_argument("-v", "--verbose", action="store_true", help="print every operation as it is applied")
    sub.add_argument("--update", action="store_true", help="if the lab is deployed, apply only what the edit adds "
                     "and takes away, on each of its sites (or destroy and deploy again what cannot change alone)")
    add_consent_arguments(sub)
    sub = command("destroy", cmd_destroy, "remove everything a deployed lab made")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file")
    sub.add_argument("-v", "--verbose", action="store_true")
    sub = command("status", cmd_status, "list deployed labs and the state of each node")
    sub.add_argument("lab", nargs="?")
    sub.add_argument("-v", "--verbose", action="store_true", help="for each VM: its backend, QEMU's pid, and whether "
                     "vhost-net is in effect")
    sub.add_argument("--watch", action="store_true", help="then print each change as the agent hears of it, until "
                     "Ctrl-C (the lab's owner or root)")
    sub.add_argument("--verify", action="store_true", help="probe the host instead of reading the agent's record, "
                     "and say where they differ (the lab's owner or root)")
    sub = command("cleanup", cmd_cleanup, "destroy labs left behind by a crash, and any stray object vtopo tagged")
    sub.add_argument("-v", "--verbose", action="store_true")
    sub = command("exec", cmd_exec, "run a command inside a node: vtopo exec LAB NODE -- CMD...")
    sub.add_argument("lab")
    sub.add_argument("node")
    sub.add_argument("command_argv", nargs=argparse.REMAINDER, metavar="-- CMD")
    sub = command("console", cmd_console, "attach to a VM's serial console (Ctrl-] leaves it)")
    sub.add_argument("lab")
    sub.add_argument("node")
    add_measure_commands(command)
    add_agent_commands(command)
    add_capture_commands(command)
    add_check_commands(command)
    add_exercise_commands(command)
    add_experiment_commands(command)
    add_grade_commands(command)
    add_operate_commands(command)
    add_interop_commands(command)
    add_image_commands(command)
    add_sites_commands(command)
    sub = command("gui", cmd_gui, "open the designer, on FILE or on the default teaching lab")
    sub.add_argument("file", type=Path, nargs="?")
    if invoked is not None and not commands.choices:  # no command of that name: argparse lists them all
        return build_parser()
    return parser


def run_program() -> NoReturn:
    """Run the program's command and exit (vtopo.cli.run, which has turned the cycle collector off for a command that
    answers and exits)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`vtopo status | head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the flush at exit fails no more
        code = 141  # 128 + SIGPIPE, as a shell reports a tool ended by it
    gc.freeze()  # the heap goes with the process: the collections of the interpreter's exit would cost ~40 ms
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` (the program's arguments by default)."""
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words[0] if words and not words[0].startswith("-") else None).parse_args(words)
    run_agent_in_process()
    try:
        return int(args.handler(args))
    except loaded(LAB_ERRORS) as failed:
        print_problems(cast("LabError", failed).problems)
        return EXIT_BAD_LAB
    except loaded(AGENT_FAILED) as failed:
        agent_error = cast("AgentError", failed)
        print("\n".join(agent_error.result.errors), file=sys.stderr)
        if agent_error.details:
            print(agent_error.details if getattr(args, "verbose", False) else "(vtopo deploy -v shows the details)",
                  file=sys.stderr)
        return agent_error.result.code
    except loaded(ONE_LINE_ERRORS) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
