"""`vtopo capture`: packets on a link end, interface or bridge of a deployed lab, one line each as they arrive."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType

from vtopo.cli.common import Command, deployed_for_caller


def cmd_capture(args: argparse.Namespace) -> int:
    from vtopo.capture import (STOPPING_SIGNALS, Capture, CaptureError, resolve, stream_pcap,  # scapy takes a second
                               summarize)

    lab = deployed_for_caller(args.lab, "capture on")  # the agent captures for a user who is not root
    try:
        target = resolve(lab.context, args.target)
        if args.pcap:
            return stream_pcap(target, args.filter, args.count)
    except CaptureError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for stopping in STOPPING_SIGNALS:  # a capture told to stop ends as Ctrl-C ends it: saved, its file removed
        signal.signal(stopping, _interrupted)
    capture = Capture(target, args.filter, args.count, ring_size=100_000)
    listening = False
    try:  # whatever ends it (a failed start, Ctrl-C however early), its temporary file goes with it
        capture.start()
        listening = True
        where = f"namespace {target.netns}" if target.netns else "the host"
        bpf = f", filter {args.filter!r}" if args.filter else ""
        print(f"capturing on {target.label} ({target.device} in {where}){bpf}", file=sys.stderr, flush=True)
        for packet in capture.follow():
            print(summarize(packet).line(capture.started_s), flush=True)
    except CaptureError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        capture.stop()
        if args.write and listening:
            capture.save(args.write)
        capture.close()
    print(f"{capture.captured} packets captured, {capture.kernel_drops} dropped by the kernel"
          + (f"; saved in {args.write}" if args.write else ""), file=sys.stderr)
    return 0


def _interrupted(_signal: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def add_commands(command: Command) -> None:
    sub = command("capture", cmd_capture, "show packets on a node's interface or a bridge of a deployed lab "
                  "as they pass: vtopo capture LAB NODE[:IFACE]")
    sub.add_argument("lab")
    sub.add_argument("target", metavar="NODE[:IFACE]", help="c1:eth0, a bridge port br0:p1, or a whole bridge br0")
    sub.add_argument("-f", "--filter", default="", metavar="BPF", help="a tcpdump filter, e.g. 'icmp or arp'")
    sub.add_argument("-c", "--count", type=int, help="stop after this many packets")
    sub.add_argument("-w", "--write", type=Path, metavar="FILE.pcapng", help="also save the whole capture here")
    sub.add_argument("--pcap", action="store_true", help="write tcpdump's raw pcap stream on stdout until stdin "
                     "ends (how another site's vtopo captures on this one, over ssh)")
