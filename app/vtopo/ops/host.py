"""The host an op acts on: the primitive actions every op is made of, each one both run and shown.

An op's `apply(host)` calls these methods. vtopo.host.kernel_host.KernelHost carries them out (netlink, OVS, nftables,
files, processes, libvirt); vtopo.ops.script.ScriptHost writes each as the iproute2, tc, nft, ovs-vsctl or shell lines
that do the same. `vtopo deploy --explain` is `apply` on a ScriptHost: the script is what runs, by construction.

Where the kernel's words and the command line's differ, the op decides once, in the arguments it passes, and each
host only spells that decision: a route's protocol (RouteProtocol), a bridge's timers (in clock_t, USER_HZ per
second, as netlink and iproute2 both take them), an IPv6 address's duplicate address detection (`nodad`).

Writing a new op:
1. a frozen dataclass subclassing Op (ops/base.py), its fields plain values (the journal stores them as JSON);
2. `requires()` and `provides()` name the resources it needs and makes; `inverse()` is the op that removes what it
   made (its `apply` must not mind when that is gone already), or None when it goes with what it lives in;
3. `apply(self, host)` calls the methods below. If the op needs an action the host lacks, add the method here, its
   lines to ScriptHost and its doing to KernelHost;
4. a specimen of the op in tests/test_explain_faithful.py (a new command's reading goes in tests/script_reader.py, a
   new kernel call's recording in tests/recorded_kernel.py): it checks, field by field, that what KernelHost asks of
   the kernel and the tools is what ScriptHost wrote.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Protocol

USER_HZ = 100  # the clock_t a bridge's timers travel in, through netlink and on iproute2's command line alike


def clock_t(seconds: float) -> int:
    return round(seconds * USER_HZ)


class RouteProtocol(IntEnum):
    """What a route is tagged with: the kernel's RTPROT_* number, its lower-case name iproute2's (rt_protos)."""

    BOOT = 3
    STATIC = 4

    @property
    def word(self) -> str:
        return self.name.lower()


class Host(Protocol):
    """The primitive actions of ops. A netns of None (or "" for a user namespace) is the host's own."""

    @property
    def lab_tag(self) -> str:
        """The tag on every object of the lab (lo's alias in each of its namespaces)."""

    # ---------------------------------------------------------------- namespaces
    def add_user_namespace(self, path: str, uid: int, gid: int) -> None: ...

    def add_netns(self, name: str, userns: str) -> None:
        """A network namespace whose lo is up and carries the lab's tag, by which cleanup finds the namespace."""

    def isolate_node(self, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, userns: str,
                     binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...],
                     host_read_only: bool) -> None: ...

    def run_image(self, *, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, pid_ns: str,
                  image: str, digest: str, run_root: str, image_owner: int, userns: str, ids: tuple[int, int] | None,
                  binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...], memory_mb: int, cpus: float,
                  disk_mb: int) -> None:
        """A node from an OCI image, run by the OCI engine in the node's namespaces (see RunImage)."""

    def remove_image_container(self, netns: str, run_root: str) -> None:
        """Gone already is fine."""

    def delete_netns(self, name: str) -> None: ...

    def remove_namespace_files(self, paths: tuple[str, ...]) -> None: ...

    # ---------------------------------------------------------------- network devices
    def add_bridge(self, name: str, *, stp: bool, forward_delay: int, ageing_time: int, vlan_filtering: bool) -> None:
        """A Linux bridge in the host's namespace; its timers in clock_t."""

    def add_veth(self, name: str, netns: str | None, peer: str, peer_netns: str | None, *,
                 master: str | None = None, queues: int) -> None:
        """A veth pair, each end with `queues` transmit and receive queues."""

    def add_macvlan(self, name: str, netns: str | None, lower: str, lower_netns: str | None, mode: str) -> None: ...

    def add_macvtap(self, name: str, lower: str, mode: str) -> None: ...

    def add_vlan(self, name: str, netns: str | None, parent: str, vid: int) -> None:
        """An 802.1Q VLAN device `name` on `parent`, both in `netns`, tagging its frames with `vid`."""

    def add_tap(self, name: str) -> None: ...

    def add_vxlan(self, name: str, netns: str | None, *, vni: int, local: str, remote: str, port: int,
                  mtu: int) -> None:
        """A point-to-point VXLAN device made in the host's namespace (its UDP socket stays there), put in `netns`."""

    def move_link(self, name: str, netns: str, new_name: str) -> None: ...

    def delete_link(self, name: str, netns: str | None) -> None:
        """Gone already is fine."""

    def set_master(self, name: str, master: str) -> None: ...

    def set_hairpin(self, name: str, enabled: bool) -> None: ...

    def add_bridge_vlan(self, name: str, vid: int, *, pvid: bool, untagged: bool) -> None:
        """VLAN `vid` on bridge port `name`: `pvid`, untagged frames coming in join it; `untagged`, its frames leave
        without a tag."""

    def delete_bridge_vlan(self, name: str, vid: int) -> None: ...

    def set_link(self, name: str, netns: str | None, *, mtu: int | None = None, mac: str | None = None,
                 alias: str | None = None, up: bool | None = None, carrier: bool | None = None) -> None:
        """The given properties of a link, in one change; None leaves one as it is. `carrier` False cuts the carrier
        of a link that stays up (IFLA_PROTO_DOWN)."""

    def add_address(self, name: str, netns: str | None, cidr: str, *, nodad: bool) -> None: ...

    def add_route(self, netns: str | None, destination: str, gateway: str, device: str,
                  protocol: RouteProtocol) -> None: ...

    def delete_address(self, name: str, netns: str | None, cidr: str) -> None:
        """The address, gone from the interface (one already gone is no error)."""

    def delete_route(self, netns: str | None, destination: str, gateway: str, device: str) -> None:
        """The route, gone from the namespace's main table (one already gone is no error)."""

    def set_sysctl(self, netns: str | None, key: str, value: str, userns: str) -> None:
        """Write a net.* sysctl of `netns`; as root of `userns` when set (the namespace is that user namespace's)."""

    def set_impairment(self, name: str, netns: str | None, *, delay_ms: float, jitter_ms: float, loss_pct: float,
                       rate_mbit: float) -> None: ...

    def set_tx_checksum(self, name: str, netns: str | None, enabled: bool) -> None: ...

    # ---------------------------------------------------------------- Open vSwitch and nftables
    def vsctl(self, commands: list[list[str]]) -> None:
        """ovs-vsctl commands in one transaction."""

    def add_flows(self, bridge: str, flows: tuple[str, ...]) -> None: ...

    def contain_forwarding(self, table: str, device_prefix: str, host_node_devices: tuple[str, ...],
                           host_addresses: tuple[str, ...], tunnels: tuple[tuple[int, str], ...]) -> None: ...

    def delete_nft_table(self, table: str) -> None: ...

    # ---------------------------------------------------------------- files
    def make_directory(self, path: str, mode: int, user: str, ids: tuple[int, int] | None) -> None:
        """A directory with `mode`, given to `user` (and its group) when one is named, or to the uid and gid `ids`."""

    def write_file(self, path: str, content: str, *, private: bool, executable: bool = False) -> None:
        """`private`: root's alone; else readable by the daemons that drop privileges, and run by them when
        `executable`."""

    def remove_directory(self, path: str) -> None: ...

    def remove_file(self, path: str) -> None: ...

    # ---------------------------------------------------------------- processes and domains
    def start_process(self, *, argv: tuple[str, ...], netns: str | None, pid_file: str, ready_path: str,
                      ready_banner: str, user: str, groups: tuple[str, ...], tap_fds: tuple[tuple[int, str], ...],
                      tun_fds: tuple[tuple[int, str], ...], device_fds: tuple[tuple[int, str], ...],
                      image_fds: tuple[tuple[int, str], ...], directory: str, enter: tuple[str, ...]) -> None: ...

    def stop_process(self, pid_file: str, match: str, netns: str | None) -> None: ...

    def signal_processes(self, netns: str, signal: str) -> None:
        """Send SIG`signal` to every process in `netns`; KILL: again until none is left."""

    def load_config(self, argv: tuple[str, ...]) -> None: ...

    def run_command(self, node: str, argv: tuple[str, ...], place: str) -> None: ...

    def read_state(self, node: str, argv: tuple[str, ...]) -> None:
        """Run a command that shows what a node has become (`vtopo save`); the host keeps what it printed."""

    def start_domain(self, uri: str, name: str, xml: str, vhost: bool) -> None: ...

    def resume_domain(self, uri: str, name: str) -> None: ...

    def destroy_domain(self, uri: str, name: str) -> None: ...
