"""`vtopo node` and `vtopo link`: stop, start and restart a node of a running lab, take a link down or up, and
change a running link's impairment without a redeploy. `vtopo save`: write what the running lab has become back
into its file. Each works on a lab spread over sites too, through the agent of every site it concerns
(vtopo.sites.spread_operations)."""
from __future__ import annotations

import argparse
import os
import pwd
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from vtopo.cli.common import Command, agent_client

if TYPE_CHECKING:
    from vtopo.sites.spread_operations import SitesOperator

RATE_UNITS = {"bit": 1e-6, "kbit": 1e-3, "mbit": 1.0, "gbit": 1e3}  # tc's words, in Mbit/s
TIME_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}  # in ms
EXPLAIN = "print the shell script of what the change runs (the ops it applies), and change nothing"


def _quantity(units: dict[str, float], default: str, what: str) -> Callable[[str], float]:
    """An argparse type: a number with one of `units` (tc's spelling, e.g. 10mbit, 20ms), `default` when bare."""
    def parse(text: str) -> float:
        match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*", text.lower())
        if match is None or (match.group(2) or default) not in units:
            raise argparse.ArgumentTypeError(f"{what} {text!r}: give a number with one of {', '.join(units)} "
                                             f"(a bare number is in {default})")
        return float(match.group(1)) * units[match.group(2) or default]

    return parse


def _percent(text: str) -> float:
    value = text.strip().removesuffix("%")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"loss {text!r}: give a percentage, e.g. 1 or 0.5%") from None
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError(f"loss {text!r} must be between 0 and 100%")
    return number


def _operator() -> SitesOperator:
    from vtopo.sites.spread_operations import SitesOperator

    return SitesOperator(agent_client())


def cmd_node(args: argparse.Namespace) -> int:
    from vtopo.protocol import NodeAction

    print(_operator().operate_node(args.lab, args.node, NodeAction(args.action), explain=args.explain),
          end="" if args.explain else "\n")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    from vtopo.model.impairment_change import ImpairmentChange

    change = ImpairmentChange(delay_ms=args.delay, jitter_ms=args.jitter, loss_pct=args.loss, rate_mbit=args.rate)
    if args.action == "set" and change.empty:
        args.parser.error("link ... set needs at least one of --rate, --delay, --jitter, --loss")
    if args.action != "set" and not change.empty:
        args.parser.error(f"--rate, --delay, --jitter and --loss go with `set`, not `{args.action}`")
    operator = _operator()
    if args.action == "set":
        said = operator.set_link_impairment(args.lab, args.a, args.b, change, explain=args.explain)
    else:
        said = operator.set_link_state(args.lab, args.a, args.b, up=args.action == "up", explain=args.explain)
    print(said, end="" if args.explain else "\n")
    return 0


def cmd_save(args: argparse.Namespace) -> int:
    from vtopo.model import io
    from vtopo.reports import user_name
    from vtopo.saving import apply_state

    operator = _operator()
    if args.explain:
        print(operator.explain_save(args.lab), end="")
        return 0
    if not args.output and os.geteuid() == 0:
        owner = next((entry.owner for entry in operator.local.labs() if entry.lab == args.lab), 0)
        if owner != 0:
            return _save_as_owner(args.lab, owner)
    running = operator.read_running(args.lab)
    if not (args.output or running.source):
        args.parser.error(f"lab {args.lab} was not deployed from a file: say where to write it with -o FILE")
    target = Path(args.output or running.source)
    # into the file as it is now (its notes and drawing may have changed since the deploy); -o: the lab as deployed
    topology = io.load(target) if not args.output else io.from_document(running.document)
    changes = apply_state(topology, running.states)
    try:
        io.save(topology, target)
    except OSError as error:
        print(f"error: {user_name(os.geteuid())} cannot write lab {args.lab} into {target} "
              f"({error.strerror or error}): say where to write it with -o FILE", file=sys.stderr)
        return 1
    for change in changes:
        print(change.diff(), end="")
    print(f"saved the running state of {len(running.states)} node(s) of lab {args.lab} into {target} "
          f"({len(changes)} changed)")
    return 0


def _save_as_owner(lab: str, owner: int) -> int:
    """Root's `vtopo save` of a member's lab into its file is the member's own: their client named the file when it
    deployed the lab, so it is written as them (their uid and groups), where they may write. The command has a session
    of its own and no terminal of root's; what it says comes through here."""
    import subprocess

    from vtopo.ops import drop_privileges

    try:
        account = pwd.getpwuid(owner)
    except KeyError:
        print(f"error: lab {lab} belongs to uid {owner}, who has no account here to write its file as: say where to "
              "write it with -o FILE", file=sys.stderr)
        return 1
    groups = tuple(str(gid) for gid in os.getgrouplist(account.pw_name, account.pw_gid))
    as_owner = drop_privileges(str(owner), groups, str(account.pw_gid))
    done = subprocess.run([*as_owner, sys.executable, "-m", "vtopo", "save", lab],
                          env={**os.environ, "HOME": account.pw_dir, "USER": account.pw_name,
                               "LOGNAME": account.pw_name},
                          cwd="/", stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                          start_new_session=True, check=False)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


def add_commands(command: Command) -> None:
    sub = command("node", cmd_node, "start, stop or restart one node of a running lab: vtopo node LAB NODE "
                  "start|stop|restart (a stopped container or router keeps its namespace with its interfaces down "
                  "and its processes frozen, and start resumes them; a stopped VM is powered off and boots again on "
                  "start; restart kills what runs in the node and runs its startup commands again)")
    sub.add_argument("lab")
    sub.add_argument("node")
    sub.add_argument("action", choices=("start", "stop", "restart"))
    sub.add_argument("--explain", action="store_true", help=EXPLAIN)
    sub = command("save", cmd_save, "write what a running lab has become back into its file: each router's running "
                  "configuration (show running-config) and each container's addresses and routes, so that the next "
                  "deploy rebuilds it; a restarted router keeps it too")
    sub.set_defaults(parser=sub)
    sub.add_argument("lab")
    sub.add_argument("-o", "--output", metavar="FILE", help="write the lab as deployed, with that state, to FILE "
                     "(default: into the file the lab was deployed from; root saving a member's lab writes it as "
                     "that member)")
    sub.add_argument("--explain", action="store_true", help="print the shell script of what reading the running state "
                     "runs in the nodes, and change nothing")
    sub = command("link", cmd_link, "take a link of a running lab down or up, or change its impairment live: "
                  "vtopo link LAB A[:PORT] B[:PORT] up|down|set [--rate 10mbit] [--delay 20ms] [--loss 1%%]")
    sub.set_defaults(parser=sub)
    sub.add_argument("lab")
    sub.add_argument("a", metavar="A[:PORT]")
    sub.add_argument("b", metavar="B[:PORT]")
    sub.add_argument("action", choices=("up", "down", "set"))
    sub.add_argument("--explain", action="store_true", help=EXPLAIN)
    sub.add_argument("--rate", type=_quantity(RATE_UNITS, "mbit", "rate"), metavar="RATE",
                     help="rate limit (tbf), e.g. 10mbit or 500kbit; 0 removes it")
    sub.add_argument("--delay", type=_quantity(TIME_UNITS, "ms", "delay"), metavar="TIME",
                     help="one-way delay (netem), e.g. 20ms; 0 removes it")
    sub.add_argument("--jitter", type=_quantity(TIME_UNITS, "ms", "jitter"), metavar="TIME",
                     help="delay variation (netem), e.g. 5ms")
    sub.add_argument("--loss", type=_percent, metavar="PERCENT", help="packet loss (netem), e.g. 1%%")
