"""`vtopo iperf`, `vtopo ping` and `vtopo rr`: measurements between two nodes of a deployed lab, from a terminal.

The host and measure layers are imported inside the handlers, so that registering these commands costs nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from vtopo.cli.common import Command, deployed_for_caller

if TYPE_CHECKING:
    from vtopo.deployed import DeployedLab
    from vtopo.measure import IntervalSample, MeasureEndpoint, PingReply, RRSample, RunResult
    from vtopo.measure.base import MeasureRun, R, S


def _pair(args: argparse.Namespace) -> tuple[DeployedLab, MeasureEndpoint, MeasureEndpoint, str, str]:
    lab = deployed_for_caller(args.lab)
    source, destination = lab.endpoint(args.source), lab.endpoint(args.destination)
    address = args.address or lab.target_address(args.source, args.destination, args.ip_version)[0]
    return lab, source, destination, address, lab.path(args.source, args.destination)


def _run(run: MeasureRun[S, R, Any], show: Callable[[S], None] | None) -> R:
    """Run to the end; Ctrl-C cancels it and leaves no process behind."""
    try:
        return run.run(on_sample=show)
    except KeyboardInterrupt:
        run.cancel()
        raise


def _rate(bits_per_second: float | None) -> str:
    if bits_per_second is None:
        return "-"
    return f"{bits_per_second / 1e9:.2f} Gb/s" if bits_per_second >= 1e9 else f"{bits_per_second / 1e6:.1f} Mb/s"


def _show_interval(sample: IntervalSample) -> None:
    extra = ""
    if sample.retransmits is not None:
        extra = f"  retransmits {sample.retransmits}"
    elif sample.packets:
        extra = f"  jitter {sample.jitter_ms or 0:.3f} ms  lost {sample.lost_packets or 0}/{sample.packets}"
    arrow = "<-" if sample.direction == "reverse" else "->"
    print(f"  {arrow} {sample.start:5.1f}-{sample.end:5.1f} s  {_rate(sample.bits_per_second):>12}{extra}", flush=True)


def cmd_iperf(args: argparse.Namespace) -> int:
    from vtopo.measure import IperfOptions, IperfRun

    lab, source, destination, address, path = _pair(args)
    options = IperfOptions(protocol="udp" if args.udp else "tcp", duration_s=args.time, interval_s=args.interval,
                           parallel=args.parallel, reverse=args.reverse, bidir=args.bidir, bitrate=args.bitrate,
                           length=args.length, window=args.window, zerocopy=args.zerocopy)
    problems = options.problems()
    if problems:
        print("\n".join(f"error: {p}" for p in problems), file=sys.stderr)
        return 2
    if not args.json:
        print(f"iperf3 {args.source} -> {args.destination} ({address}, {path}): {options.describe()}", flush=True)
    run = IperfRun(source, destination, address, options, lab=lab.context.topology.name, path=path)
    result = _run(run, None if args.json else _show_interval)
    if args.json:
        print(result.to_json())
    else:
        main = result.main
        cpu = (f"; CPU {result.cpu_host.total:.0f}% in {args.source}, {result.cpu_remote.total:.0f}% in "
               f"{args.destination}" if result.cpu_host and result.cpu_remote else "")
        sent = _rate(main.sent.bits_per_second) if main else "-"
        print(f"sender {sent}, receiver {_rate(result.mean_bits_per_second)}"
              + (f", {result.retransmits} retransmits" if result.retransmits is not None else "")
              + (f", {result.lost_percent:.2f}% lost" if result.lost_percent is not None else "") + cpu)
    if args.save or args.out:
        _save(args.out, lab.context.topology.name, result)
    return 0


def _save(out: Path | None, lab: str, result: RunResult) -> None:
    """Add the run to the history file named with -o, or else to the lab's own in the user's data directory; never
    to a path the lab's record holds (its source is whatever the deploying client said)."""
    from vtopo.measure import history_path, load_history, save_history

    path = out or history_path(lab)
    save_history(path, [*load_history(path), result])
    print(f"saved in {path}", file=sys.stderr)


def _show_reply(reply: PingReply) -> None:
    text = f"{reply.rtt_ms:.3f} ms" if reply.rtt_ms is not None else "no reply"
    print(f"  seq {reply.seq}: {text}", flush=True)


def cmd_ping(args: argparse.Namespace) -> int:
    from vtopo.measure import PingOptions, PingRun

    lab = deployed_for_caller(args.lab)
    source, destination = args.source, args.destination
    address = args.address or lab.target_address(source, destination, args.ip_version)[0]
    print(f"ping {destination} ({address}, {lab.path(source, destination)}) from {source}", flush=True)
    run = PingRun(lab.endpoint(source), lab.endpoint(destination), address,
                  PingOptions(count=args.count, interval_s=args.interval))
    result = _run(run, _show_reply)
    print(result.summary())
    return 0 if result.received else 1


def _show_rr(sample: RRSample) -> None:
    print(f"  {sample.start:5.1f}-{sample.end:5.1f} s  {sample.per_second:,.0f} transactions/s", flush=True)


def cmd_rr(args: argparse.Namespace) -> int:
    from vtopo.measure import RROptions, RRRun

    lab, source, destination, address, path = _pair(args)
    print(f"TCP request/response {args.source} -> {args.destination} ({address}, {path}), {args.size}-byte "
          "messages", flush=True)
    result = _run(RRRun(source, destination, address, RROptions(duration_s=args.time, size=args.size)), _show_rr)
    print(f"{result.transactions_per_second:,.0f} transactions/s over {result.seconds:.1f} s")
    return 0


def add_commands(command: Command) -> None:
    sub = command("iperf", cmd_iperf, "iperf3 between two nodes of a deployed lab, intervals as they arrive")
    _pair_arguments(sub)
    sub.add_argument("-u", "--udp", action="store_true", help="UDP instead of TCP")
    sub.add_argument("-t", "--time", type=int, default=10, help="seconds (default 10)")
    sub.add_argument("-i", "--interval", type=float, default=1.0, help="seconds between samples (default 1)")
    sub.add_argument("-P", "--parallel", type=int, default=1, help="parallel streams")
    sub.add_argument("-R", "--reverse", action="store_true", help="the destination sends")
    sub.add_argument("--bidir", action="store_true", help="both directions at once")
    sub.add_argument("-b", "--bitrate", help="target bitrate, e.g. 100M (UDP)")
    sub.add_argument("-l", "--length", help="buffer length, e.g. 64 or 1K (the OVS vhost-user experiment's sizes)")
    sub.add_argument("-w", "--window", help="socket buffer / TCP window, e.g. 256K")
    sub.add_argument("-Z", "--zerocopy", action="store_true", help="zero-copy send (TCP)")
    sub.add_argument("--json", action="store_true", help="print one machine-readable result instead")
    sub.add_argument("--save", action="store_true", help="add the run to the lab's history (LAB.measure.json in "
                     "your data directory: ~/.local/share/vtopo/histories)")
    sub.add_argument("-o", "--out", type=Path, metavar="FILE", help="add the run to this history file instead")
    sub = command("ping", cmd_ping, "ping from node A to node B: reachability and RTT min/avg/max/mdev")
    _pair_arguments(sub)
    sub.add_argument("-c", "--count", type=int, default=5)
    sub.add_argument("-i", "--interval", type=float, default=0.2)
    sub = command("rr", cmd_rr, "TCP request/response rate between two nodes (transactions/s, like TCP_RR)")
    _pair_arguments(sub)
    sub.add_argument("-t", "--time", type=float, default=5.0, help="seconds (default 5)")
    sub.add_argument("-s", "--size", type=int, default=1, help="request and response size in bytes (default 1)")


def _pair_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("lab")
    sub.add_argument("source")
    sub.add_argument("destination")
    sub.add_argument("--address", help="aim at this address of the destination instead of the one vtopo picks")
    family = sub.add_mutually_exclusive_group()
    family.add_argument("-4", dest="ip_version", action="store_const", const=4, help="aim at an IPv4 address")
    family.add_argument("-6", dest="ip_version", action="store_const", const=6,
                        help="aim at an IPv6 address of the destination (never a link-local one)")
