"""What happens to deployed labs, heard as it happens: one thread, waiting on one netlink socket (every interface of
the host and of each lab namespace, and each namespace's end: vtopo.host.netlink.LinkEvents), on a pidfd per
process the labs started (zebra, ospfd, dnsmasq, QEMU...), on inotify for the files nodes' status details are read
from (a DHCP server's leases) and on what libvirt's event thread hands it (a VM's domain stopped: vtopo.host.
domain_events). Nothing is polled: the thread sleeps until the kernel or libvirt says something changed."""
from __future__ import annotations

import os
import selectors
import threading
from collections.abc import Iterable
from pathlib import Path

from inotify_simple import INotify, flags

from vtopo import ops as o
from vtopo.host import processes
from vtopo.host.domain_events import DomainEvents
from vtopo.host.heard import (DetailChanged, DomainEnded, Heard, InterfaceChanged, Listener, NamespaceEnded,
                              ProcessEnded, Unheard)
from vtopo.host.kernel_host import read_pid
from vtopo.host.lab_parts import Interface
from vtopo.host.netlink import EventsLost, InterfaceEvent, LinkEvents, NamespaceGone, NetlinkError


class Watcher:
    """Watches what labs made, lab by lab (`watch`, `forget`), and tells `listener` of each change."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self._guard = threading.Lock()
        self._events: LinkEvents | None = None  # open while a lab's interfaces or namespaces are watched (`_listen`)
        self._interfaces: dict[tuple[int | None, str], tuple[str, Interface]] = {}  # (nsid, name) -> lab, interface
        self._namespaces: dict[int, tuple[str, str]] = {}  # nsid -> lab, netns
        self._processes: dict[int, tuple[str, o.StartProcess]] = {}  # pidfd -> lab, its op
        self._files = INotify(nonblocking=True)
        self._directories: dict[str, int] = {}  # a watched directory -> its watch
        self._named: dict[int, dict[str, set[tuple[str, str]]]] = {}  # watch -> file name -> (lab, node owner)
        self._changes = 0  # how many times what is watched changed: a descriptor ready may be closed and reused since
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._files, selectors.EVENT_READ)
        self._domains: DomainEvents | None = None  # made for the first lab with a VM's domain
        self._domains_ended: list[tuple[str, o.StartDomain]] = []  # handed over by libvirt's event thread
        self._wake, self._woken = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)[::-1]
        self._selector.register(self._woken, selectors.EVENT_READ)
        self._nudge, self._nudged = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)[::-1]
        self._selector.register(self._nudged, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="vtopo watcher", daemon=True)
        self._thread.start()

    def watch(self, lab: str, interfaces: Iterable[Interface], namespaces: Iterable[str],
              started: Iterable[o.StartProcess], files: Iterable[tuple[str, str]] = (),
              domains: Iterable[o.StartDomain] = ()) -> list[o.StartProcess | o.StartDomain]:
        """Watch a lab's interfaces, namespaces, processes, `files` (node owner, path: what its status detail is
        read from) and VMs' domains, replacing what was watched of it; the processes and domains that are not
        running now, which no event will report.

        What the kernel said before this call is heard first, against what was watched until now: a lab destroyed and
        deployed again has interfaces of the same names (and namespaces the kernel may give the same ids), and the
        old ones' removal must not be taken for the new ones'."""
        for earlier, what in self._heard_from_kernel():
            self._listener(earlier, what)
        self._forget(lab)
        ids: dict[str | None, int | None] = {None: None}
        gone: list[o.StartProcess | o.StartDomain] = []
        with self._guard:
            self._changes += 1
            events = self._listen()
            for netns in namespaces:
                try:
                    ids[netns] = nsid = events.nsid_of(netns)
                except NetlinkError:
                    continue  # gone already: its parts are missing
                self._namespaces[nsid] = (lab, netns)
            for interface in interfaces:
                if interface.netns in ids:  # not in a namespace gone already
                    self._interfaces[(ids[interface.netns], interface.name)] = (lab, interface)
            for op in started:
                pidfd = _pidfd_of(op)
                if pidfd is None:
                    gone.append(op)
                    continue
                self._processes[pidfd] = (lab, op)
                self._selector.register(pidfd, selectors.EVENT_READ)
            for owner, path in files:
                self._watch_file(lab, owner, path)
        domains = list(domains)
        if domains:
            if self._domains is None:
                self._domains = DomainEvents(self._domain_ended)
            gone += self._domains.watch(lab, domains)
        return gone

    def _watch_file(self, lab: str, owner: str, path: str) -> None:
        """Its directory is watched (the file may not be there yet, or be written anew under its name); a directory
        gone already has nothing to tell."""
        directory, name = os.path.split(path)
        watch = self._directories.get(directory)
        if watch is None:
            try:
                watch = self._files.add_watch(directory, flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_TO
                                              | flags.CREATE | flags.DELETE | flags.DONT_FOLLOW | flags.ONLYDIR)
            except OSError:
                return
            self._directories[directory] = watch
        self._named.setdefault(watch, {}).setdefault(name, set()).add((lab, owner))

    def _listen(self) -> LinkEvents:
        """The socket that hears the labs' interfaces and namespaces, opened if none is. It is closed while no lab is
        watched (see `forget`): a deploy changes a link thousands of times, each change a message to read in this
        process, and this thread's reading them (0.1-0.2 s at 400 containers on a bridge) took the interpreter from
        the agent's deploy of the lab, which nobody watches yet."""
        if self._events is None:
            self._events = LinkEvents()
            self._selector.register(self._events, selectors.EVENT_READ)
        return self._events

    def forget(self, lab: str) -> None:
        """Stop watching a lab (destroyed); with no lab left to watch, stop listening to the kernel."""
        self._forget(lab)
        with self._guard:
            if self._events is not None and not self._interfaces and not self._namespaces:
                self._changes += 1
                self._selector.unregister(self._events)
                self._events.close()
                self._events = None

    def _forget(self, lab: str) -> None:
        """Stop watching a lab (destroyed, or about to be watched anew)."""
        with self._guard:
            self._changes += 1
            self._interfaces = {key: value for key, value in self._interfaces.items() if value[0] != lab}
            self._namespaces = {nsid: value for nsid, value in self._namespaces.items() if value[0] != lab}
            for pidfd in [pidfd for pidfd, (watched, _) in self._processes.items() if watched == lab]:
                self._close_pidfd(pidfd)
            for directory, watch in list(self._directories.items()):
                named = {name: kept for name, owners in self._named.get(watch, {}).items()
                         if (kept := {(watched, owner) for watched, owner in owners if watched != lab})}
                if named:
                    self._named[watch] = named
                else:
                    self._unwatch(directory, watch)
        if self._domains is not None:
            self._domains.forget(lab)

    def _unwatch(self, directory: str, watch: int) -> None:
        del self._directories[directory]
        self._named.pop(watch, None)
        try:
            self._files.rm_watch(watch)
        except OSError:  # the directory went, and its watch with it
            pass

    def close(self) -> None:
        os.write(self._wake, b"x")
        self._thread.join()
        if self._domains is not None:
            self._domains.close()
        with self._guard:
            for pidfd in list(self._processes):
                self._close_pidfd(pidfd)
        self._selector.close()
        if self._events is not None:
            self._events.close()
        self._files.close()
        for end in (self._wake, self._woken, self._nudge, self._nudged):
            os.close(end)

    def _close_pidfd(self, pidfd: int) -> None:
        del self._processes[pidfd]
        self._selector.unregister(pidfd)
        os.close(pidfd)

    def _run(self) -> None:
        while True:
            changes = self._changes
            for key, _ in self._selector.select():
                if self._changes != changes:
                    break  # a listener (a lab probed anew) or another thread changed what is watched: select again
                if key.fileobj == self._woken:
                    return
                if isinstance(key.fileobj, LinkEvents):  # or one closed since: _heard_from_kernel reads the open one
                    heard = self._heard_from_kernel()
                elif key.fileobj is self._files:
                    heard = self._heard_from_files()
                elif key.fileobj == self._nudged:
                    heard = self._heard_from_libvirt()
                else:
                    heard = self._heard_from_process(int(key.fd))
                for lab, what in heard:
                    self._listener(lab, what)

    def _heard_from_kernel(self) -> list[tuple[str, Heard]]:
        """What the kernel said since the last read, to the labs watched now."""
        heard: list[tuple[str, Heard]] = []
        with self._guard:
            while self._events is not None and (events := self._events.read(self._namespaces)) is not None:
                heard += self._heard_of(events)
        return heard

    def _heard_of(self, events: list[InterfaceEvent | NamespaceGone | EventsLost]) -> list[tuple[str, Heard]]:
        heard: list[tuple[str, Heard]] = []
        for event in events:
            if isinstance(event, InterfaceEvent):
                if (found := self._interfaces.get((event.nsid, event.name))) is not None:
                    heard.append((found[0], InterfaceChanged(found[1], event.up)))
            elif isinstance(event, NamespaceGone):
                if (ended := self._namespaces.pop(event.nsid, None)) is not None:
                    heard.append((ended[0], NamespaceEnded(ended[1])))
            else:
                watched = {lab for lab, _ in [*self._interfaces.values(), *self._namespaces.values()]}
                heard += [(lab, Unheard()) for lab in sorted(watched)]
        return heard

    def _heard_from_files(self) -> list[tuple[str, Heard]]:
        """Each node whose detail file changed since the last read, once."""
        changed: set[tuple[str, str]] = set()
        with self._guard:
            for event in self._files.read(timeout=0):
                if event.mask & flags.IGNORED:  # the directory went (its lab was destroyed)
                    directory = next((path for path, watch in self._directories.items() if watch == event.wd), None)
                    if directory is not None:
                        del self._directories[directory]
                    self._named.pop(event.wd, None)
                else:
                    changed |= self._named.get(event.wd, {}).get(event.name, set())
        return [(lab, DetailChanged(owner)) for lab, owner in sorted(changed)]

    def _domain_ended(self, lab: str, op: o.StartDomain) -> None:
        """On libvirt's event thread: hand the news to the watching thread."""
        with self._guard:
            self._domains_ended.append((lab, op))
        os.write(self._nudge, b"x")

    def _heard_from_libvirt(self) -> list[tuple[str, Heard]]:
        with self._guard:
            os.read(self._nudged, 1 << 16)  # a pipe's whole buffer: every nudge so far
            ended, self._domains_ended = self._domains_ended, []
        return [(lab, DomainEnded(op)) for lab, op in ended]

    def _heard_from_process(self, pidfd: int) -> list[tuple[str, Heard]]:
        with self._guard:
            if pidfd not in self._processes:
                return []  # forgotten meanwhile
            lab, op = self._processes[pidfd]
            self._close_pidfd(pidfd)
        return [(lab, ProcessEnded(op))]


def _pidfd_of(op: o.StartProcess) -> int | None:
    """A pidfd of the process `op` started, when it runs (its pid file names it, and its command line is its own)."""
    pid = read_pid(Path(op.pid_file))
    if pid is None:
        return None
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return None
    if not processes.process_alive(pid, Path(op.argv[0]).name):  # checked once the pidfd pins the process
        os.close(pidfd)
        return None
    return pidfd
