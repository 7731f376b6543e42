"""Write docs/reference-experiments.md: each reference experiment in our words with its published figures, beside
the figures `vtopo experiment` measured on this host (docs/experiments/LAB.experiment.json); and README.md's table
of VM figures from the same results. No figure is typed by hand: run `make reference-experiments` (as root) to
measure again, `make reference-docs` to rewrite the page and the README table."""
from __future__ import annotations

import json
from pathlib import Path

from vtopo.experiment.results import figure, spread

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "experiments"
TARGET = ROOT / "docs" / "reference-experiments.md"
README = ROOT / "README.md"
README_START = "<!-- make reference-docs writes this table: start -->"
README_END = "<!-- make reference-docs writes this table: end -->"
VM_LABS = ("vm-tap-vs-macvtap", "vhost-on-off", "vm-router")
NOT_MEASURED = "Not measured in rounds on this host yet: run `make reference-experiments`"

HEADER = """# The reference experiments, reproduced

vtopo started from five published experiments in virtual networking. Each one is summarised below in our own
words with the figures it published, next to the vtopo lab that rebuilds it, that lab's experiment, and the
figures `vtopo experiment` measured on this machine, with the host they were measured on.

The tables are generated: `make reference-experiments` (as root) deploys each lab, runs its experiment and keeps
the results in `docs/experiments/`; `make reference-docs` rewrites this page from them. Nothing here is typed
by hand. Absolute figures depend on the host; compare the ratios, as far as they hold.

Each experiment runs in rounds, and each round on the lab deployed afresh: a cell shows its mean and the lowest
and highest of its round means, and a ratio the spread of its rounds. A ratio whose rounds fall on both sides of
1.0 is written as no difference measurable here, whatever its mean. A comparison whose condition this host cannot
make (vhost-net on a kernel without it) gives no ratio at all: its line says why.
"""

SECTIONS = [
    ("QEMU/KVM guests: a tap on a bridge against macvtap", "vm-tap-vs-macvtap", """\
**What was set up.** Two ways to give a QEMU/KVM guest its NIC. (a) A tap device enslaved to a Linux bridge.
(b) A macvtap in bridge mode on a lower device, with no bridge at all. QEMU has no macvtap option of its own:
the guest gets the file /dev/tapN (N is the macvtap's ifindex) as an open descriptor, and its MAC must be the
macvtap's, or frames never reach it.

**What was measured.** iperf across two hosts on a 100 Mb/s link: 93.1 Mb/s through the tap, 93.1 Mb/s
through macvtap. No difference: the wire was the limit.

**Here.** Both guests run under TCG (no usable KVM), the host measures each through its own way in (its
address on the bridge; its own macvlan beside the macvtap). The guest CPU, not the device, is the limit, so
the ratio is what carries over, not the figures."""),
    ("Containers: NIC, veth + bridge and macvlan", "macvlan-vs-veth", """\
**What was set up.** Network namespaces as containers, joined two ways: (a) a veth pair with one end in the
namespace and the other on a host bridge; (b) a macvlan child of a lower device per namespace. The macvlan
modes (private, vepa, bridge, passthru, source) decide which siblings can talk; a bridge-mode container
reaches the host only if the host has a bridge-mode macvlan of its own on the same lower device.

**What was measured.** iperf: the physical NIC 94.1 Mb/s, veth 94.016 Mb/s, macvlan 94.033 Mb/s. macvlan
sent fewer, larger packets in one of the application tests.

**Here.** There is no physical NIC a lab may use (vtopo never sends traffic out of its labs), so the baseline
is the loopback inside v1's own namespace: the same stack with no virtual link. The teaching labs
macvlan-bridge, macvlan-private and macvlan-vepa show the modes, each with checks that fail if the mode is
changed."""),
    ("vhost-net on and off", "vhost-on-off", """\
**What was set up.** A libvirt guest with a virtio NIC on the default network. vhost-net is on by default;
`<driver name='qemu'/>` in the interface XML turns it off. With it on, /proc/PID/fd of QEMU holds
/dev/vhost-net and a `vhost-PID` kernel thread moves the packets; with it off QEMU spends its time in read,
ioctl and writev.

**What was measured.** host → guest iperf3: 29.5 Gb/s with vhost-net, 16.4 Gb/s without (1.80×). netperf
TCP_RR: 36.5k against 27.2k transactions/s (1.34×); UDP_RR 37.7k against 27.5k.

**Here.** This kernel has no vhost-net and no usable KVM: both guests run with vhost off under TCG, so this
machine cannot make the difference, and the comparison says so instead of giving a ratio. The lab still runs
both measurements on both guests: their round means show how far two identical guests differ here."""),
    ("L2 bridge against L3 routing on the host", "host-routed-bridges", """\
**What was set up.** Host networking for VMs: a bridge with an address (host-only), with or without a tap,
STP and forward delay settings; then two numbered bridges routed by the host itself, Quagga OSPF with the host
in area 0, and a VM as a Linux router gateway.

**What was measured.** iperf host → VM 18.8 Gb/s (tap + bridge) and 18.4 Gb/s (bridge); VM → VM 12.0 and
13.6 Gb/s; routed L3 VM → VM 12.9 Gb/s, about 0.95 of the bridged figure.

**Here.** Two numbered bridges routed by the host, with containers instead of TCG guests so that the data path,
not the emulated CPU, is measured: switched c1 → c2 against routed c1 → c3. The vm-router lab rebuilds the
VM-as-router case; l2-vs-l3 does the OSPF part with FRR."""),
    ("A VM as the router between two bridges", "vm-router", """\
**What was set up.** The last case of the host-networking setup above: a VM with IP forwarding on as the router
gateway between two bridges, with a NIC on each.

**What was measured.** The reference publishes no figure of its own for the router VM, so the comparison has none.

**Here.** vmr runs under TCG; containers c1 and c2 use it as their default gateway, and neither bridge gives the
host an address, so every routed packet crosses the VM's two taps and QEMU copies it twice. c1 → c2 (forwarded by
the guest's kernel) is compared with c1 → vmr (received by an iperf3 server in the guest, which copies every byte
up to user space under emulation)."""),
    ("Open vSwitch by packet size", "ovs-openflow", """\
**What was set up.** QEMU attached to Open vSwitch by vhost-user (OVS-DPDK): dpdkvhostuser ports, a hugepage
memory backend shared with the switch, OpenFlow rules `in_port=1,actions=output:3`, PMD threads pinned to
receive queues, testpmd in the guest.

**What was measured.** Loopback through the VM by packet size 64/128/256/512/1024 B: 3.20/5.63/9.81/15.2/20.0
Gb/s, about a third of what OVS alone forwarded (9.00/16.1/20.0 Gb/s at 64/128/256 B; larger sizes were not
measured): the virtio-net path costs the rest. The 20.0 Gb/s, through the VM at 1024 B and for OVS alone at
256 B, is the line rate of the reference setup's two 10 GbE ports, not a limit of OVS or of virtio-net: the
ratios that end there are lower bounds.

**Here.** vhost-user needs OVS built with DPDK, hugepages and a NIC-free DPDK setup; this host has no
openvswitch kernel module and runs OVS on its userspace (netdev) datapath without DPDK. The lab keeps the
reference's flow rules between containers, whose interfaces are the switch's internal ports (OVS's own port
device, moved into each container), and measures UDP at each packet size; the ratio of 1024-byte to 64-byte
throughput is what compares. No wire caps it here: the CPU that runs OVS's userspace datapath does."""),
]


def _published(lab: str) -> dict[str, str]:
    """Each comparison's published figure as the lab file gives it now, so a figure corrected in the lab shows here."""
    document = json.loads((ROOT / "topologies" / f"{lab}.vtopo").read_text())
    return {c["name"]: c.get("published") or "–" for c in document.get("experiment", {}).get("comparisons", [])}

RECONVERGENCE_TITLE = "Reconvergence after a link goes down"
RECONVERGENCE = """\
This one is vtopo's own: no published figure stands beside it.

**What is measured.** h1 pings h3 every 5 ms across three routers in a triangle. The experiment takes the link
the pings use, r1–r3, down with the lab's own link operation (`vtopo link LAB r1 r3 down`), and counts the
requests lost until r1 and r3 send them round by r2 (the replies' TTL drops by one). The outage is known to
within one interval, and one shorter than the interval loses no request: it counts as 0 s. The link then comes
back up, and the next run starts once the pings take it again. Taking a link down drops the carrier at both of
its ends, so no protocol waits for a neighbour to fall silent: what differs is what each does next."""
RECONVERGENCE_LABS = [
    ("OSPF", "ospf-reconvergence", "hello 1 s, dead 4 s (vtopo's defaults for a router); FRR's SPF throttle as it "
     "ships: 0 ms delay, 50 ms initial hold, 5 s maximum hold. Each end floods a new router LSA at once and runs "
     "SPF."),
    ("RIP", "rip-reconvergence", "RIPv2 with FRR's timers, written in each router's configuration: update 30 s, "
     "timeout 180 s, garbage collection 120 s. r1 and r3 drop what they learned over the link as it loses carrier, "
     "but RIP keeps only the best route: the way round comes with r2's next periodic update."),
    ("BGP", "bgp-reconvergence", "eBGP, an AS per router: keepalive 3 s, hold 9 s, advertisement interval 0. The "
     "session over the link ends as its interface goes down (fast external failover, FRR's default), and the path "
     "by r2, received already, takes over."),
]


def reconvergence() -> str:
    """The reconvergence section: one row per protocol, from each lab's results."""
    lines = [f"## {RECONVERGENCE_TITLE}", "", RECONVERGENCE, "",
             "| protocol | lab | timers | outage, mean | round means, lowest–highest | measured |",
             "|---|---|---|---:|---:|---:|"]
    hosts, dates = set(), []
    for protocol, lab, timers in RECONVERGENCE_LABS:
        data, link = _results(lab), f"[`{lab}`](../topologies/{lab}.vtopo)"
        if data is None:
            lines.append(f"| {protocol} | {link} | {timers} | {NOT_MEASURED} | | |")
            continue
        cell = data["cells"][0]
        failed = f" ({len(cell['errors'])} failed)" if cell["errors"] else ""
        lines.append(f"| {protocol} | {link} | {timers} | {figure(cell['mean'])} {cell['unit']} | "
                     f"{spread(cell['round_means'])} {cell['unit']} | {data['rounds']} rounds of {data['repeats']}"
                     f"{failed} |")
        hosts.add(", ".join(f"{key} {value}" for key, value in data["host"].items()))
        dates.append(data["started_at"])
    if dates:
        when = min(dates) if min(dates) == max(dates) else f"{min(dates)} to {max(dates)}"
        lines += ["", f"Measured {when} with `vtopo experiment topologies/LAB.vtopo --rounds N`, each round on the "
                  "lab deployed afresh."]
    lines += ["", *(f"Host: {host}." for host in sorted(hosts)), ""]
    return "\n".join(lines)


def _results(lab: str) -> dict | None:
    """The lab's results, if it was measured in rounds; a result of one run says nothing of how far it holds."""
    path = RESULTS / f"{lab}.experiment.json"
    data = json.loads(path.read_text()) if path.exists() else None
    return data if data is not None and "rounds" in data else None


def measured(lab: str) -> str:
    data = _results(lab)
    if data is None:
        return f"*{NOT_MEASURED}.*\n"
    rounds = data["rounds"]
    lines = [f"Measured {data['started_at']} in {rounds} round(s), each on the lab deployed afresh, of "
             f"{data['repeats']} run(s) per cell after {data['warmup']} warm-up run(s) (`vtopo experiment "
             f"topologies/{lab}.vtopo --rounds {rounds}`):", "",
             "| cell | unit | mean | round means, lowest–highest |", "|---|---|---:|---:|"]
    for cell in data["cells"]:
        lines.append(f"| {cell['name']} | {cell['unit']} | {figure(cell['mean'])} | {spread(cell['round_means'])} |")
    if data["ratios"]:
        lines += ["", "| comparison | measured here | published |", "|---|---|---|"]
    published = _published(lab)
    for ratio in data["ratios"]:
        lines.append(f"| {ratio['name']} | {ratio['verdict']} | {published.get(ratio['name'], '–')} |")
    lines += ["", "Host: " + ", ".join(f"{key} {value}" for key, value in data["host"].items()) + "."]
    lines += [f"- Not reproducible here: {limitation}" for limitation in data.get("limitations", [])]
    lines.append("")
    return "\n".join(lines)


def render() -> str:
    parts = [HEADER]
    for title, lab, prose in SECTIONS:
        parts.append(f"## {title}\n\n{prose}\n\nLab: [`topologies/{lab}.vtopo`](../topologies/{lab}.vtopo)\n\n"
                     f"{measured(lab)}")
    parts.append(reconvergence())
    return "\n".join(parts)


def vm_figures() -> str:
    """README's table of the VM labs' experiments: each cell's path, mean and round means, then each lab's ratios."""
    lines = ["| lab | measured | path | mean (round means) |", "|---|---|---|---:|"]
    ratios, hosts = [], set()
    for lab in VM_LABS:
        data = _results(lab)
        if data is None:
            lines.append(f"| `{lab}` | {NOT_MEASURED} | | |")
            continue
        hosts.add(", ".join(f"{key} {value}" for key, value in data["host"].items()))
        for cell in data["cells"]:
            failed = f", {len(cell['errors'])} failed" if cell["errors"] else ""
            lines.append(f"| `{lab}` | {cell['name']} | {cell.get('path', '')} | {figure(cell['mean'])} "
                         f"{cell['unit']} ({spread(cell['round_means'])}, {data['rounds']} rounds of "
                         f"{data['repeats']} runs{failed}) |")
        ratios += [f"- {ratio['name']} (`{lab}`): {ratio['verdict']}" for ratio in data["ratios"]]
    lines += ["", *ratios, ""]
    lines += [f"Host: {host}." for host in sorted(hosts)]
    return "\n".join(lines).strip()


def readme_with_vm_figures(readme: str) -> str:
    head, rest = readme.split(README_START, 1)
    tail = rest.split(README_END, 1)[1]
    return f"{head}{README_START}\n{vm_figures()}\n{README_END}{tail}"


def main() -> None:
    TARGET.write_text(render())
    README.write_text(readme_with_vm_figures(README.read_text()))
    print(f"wrote {TARGET.relative_to(ROOT)} and the VM figures in {README.name}")


if __name__ == "__main__":
    main()
