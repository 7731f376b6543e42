"""`vtopo agent`: the one privileged process. It serves the CLI and the designer on a unix socket.

Each connection carries one request from one caller, identified by the kernel (SO_PEERCRED), never by what the
client says. Only root and members of the vtopo group get an answer. The agent loads and compiles lab documents
itself, under the same trust rules as the CLI; a lab belongs to the uid that deployed it, and only that user or
root may change it, run commands in it or destroy it. Requests for one lab run one at a time; other labs go on.

Each verb is declared once: its request type (vtopo.protocol) and the handler it names in VERBS (`@verb`).
"""
from __future__ import annotations

import fcntl
import grp
import os
import pwd
import selectors
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from vtopo import protocol as p
from vtopo.server.policy import CONFIG, Policy, PolicyError, TunnelRefused
from vtopo.server.jobs import DEPLOYING, DESTROYING, Job, LabJobs, new_deployer
from vtopo.server.live import Follower, LiveLabs
from vtopo.server.long_lived import freeze_survivors
from vtopo.host.errors import HostError
from vtopo.host.owned_files import PASSAGE, make_directory, write_file
from vtopo.host.state import LabRecord, StateStore, Usage, taken_message
from vtopo.lab_terms import Trust, in_group
from vtopo.model.problems import LabError
from vtopo.named_errors import loaded
from vtopo.reports import OUTPUT_STAGE, DeployReport, Progress, ProgressCallback, user_name

if TYPE_CHECKING:  # the deployer and the deployed lab (the compiler, pyroute2, the measure layer) load when a
    # request needs them
    from vtopo.deployed import DeployedLab
    from vtopo.host.deployer import Admission, DeployError
    from vtopo.capture.engine import LabCapture
    from vtopo.host.image_store import StoredImage
    from vtopo.host.preflight import PreflightFailed
    from vtopo.kinds.contract import LabContext, NodeContext
    from vtopo.model.topology import Topology

EXIT_FAILED, EXIT_BAD_LAB = 1, 2
SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ONE_LINE_ERRORS = ("vtopo.host.deployer:DestroyError", "vtopo.host.state:LabTaken", "vtopo.deployed:NotDeployed",
                   "vtopo.kinds.contract:CannotRunInside", "vtopo.measure.nodes:MeasureError",
                   "vtopo.host.errors:HostError", "vtopo.lab_operations:OperateError", "vtopo.host.deployer:DeployCancelled")
PREFLIGHT_FAILED, DEPLOY_FAILED = ("vtopo.host.preflight:PreflightFailed",), ("vtopo.host.deployer:DeployError",)
MAX_FILTER = 4096  # characters of a capture filter
PIPE_BYTES = 1 << 20  # between the tcpdump that listens on a host device and the lab's that filters: a flood's bursts
RATES_PER_S = 10  # how often a client may have a lab's link counters read
RECORD_CHECK_S = 1.0  # how soon a stream of link rates ends after its lab is destroyed


class Refused(Exception):
    """A request the caller may not make; the message says why and who may."""


@dataclass(frozen=True)
class Caller:
    pid: int
    uid: int
    gid: int

    @property
    def root(self) -> bool:
        return self.uid == 0

    @property
    def name(self) -> str:
        return user_name(self.uid)

    def owns(self, owner: int) -> bool:
        """Whether the caller may act on a lab `owner` deployed: its owner and root may."""
        return self.root or self.uid == owner

    def may_connect(self, group: str) -> bool:
        return self.root or in_group(self.uid, group)


def caller_of(connection: socket.socket) -> Caller:
    pid, uid, gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                              struct.calcsize("3i")))
    return Caller(pid, uid, gid)


@dataclass(frozen=True)
class Asked:
    """What a request comes with besides its line: who asks (from the kernel), the descriptors sent with it, the
    way back to the client, and the administrator's configuration as read for this connection (`broken`: why it
    could not be read, which refuses a deploy; the limits hold all the same)."""

    caller: Caller
    fds: list[int]
    send: Replies
    policy: Policy
    broken: str = ""


R = TypeVar("R", bound=p.Message)
Handler = Callable[["Agent", R, Asked], p.Result]
VERBS: dict[type[p.Message], Handler[Any]] = {}
"""Each request type's handler: the agent's verbs, one entry each (`@verb(RequestType)` on the handler)."""


def verb(request: type[R]) -> Callable[[Handler[R]], Handler[R]]:
    """Declare the decorated method as the agent's handler of `request`."""
    def declared(handler: Handler[R]) -> Handler[R]:
        VERBS[request] = handler
        return handler
    return declared


class LabLocks:
    """One lock per lab name: requests touching the same lab are serialized, different labs run at once. A lock is
    kept only while a request holds or waits for it (requests may name any lab)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def held(self, lab: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(lab, (threading.Lock(), 0))
            self._locks[lab] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users = self._locks[lab][1] - 1
                if users:
                    self._locks[lab] = (lock, users)
                else:
                    del self._locks[lab]


class PerUser:
    """What each user holds at once (connections, link-rate streams), up to a limit (root's are not counted)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._open: Counter[int] = Counter()

    @contextmanager
    def held(self, caller: Caller, limit: int) -> Iterator[bool]:
        """Counts one more while the block runs; yields whether it is within the user's `limit`."""
        with self._guard:
            allowed = caller.root or self._open[caller.uid] < limit
            if allowed:
                self._open[caller.uid] += 1
        try:
            yield allowed
        finally:
            if allowed:
                with self._guard:
                    self._open[caller.uid] -= 1
                    if not self._open[caller.uid]:
                        del self._open[caller.uid]


class Agent:
    def __init__(self, group: str = p.GROUP, policy: Path = CONFIG) -> None:
        self.group = group
        self.policy = policy  # the administrator's configuration, read for each connection
        self.locks = LabLocks()
        self.connections = PerUser()  # connections open
        self.rate_streams = PerUser()  # link-rate streams running
        self.jobs = LabJobs()
        self.live = LiveLabs(self.jobs.shown, self.jobs.doing)

    def cancel_deploys(self) -> None:
        """Cancel each deploy under way (they roll back): the agent runs in its client's process, which was
        interrupted."""
        self.jobs.cancel_deploys()

    # ------------------------------------------------------------ connections

    def serve(self, listener: socket.socket) -> None:
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection: socket.socket) -> None:
        """Read the request within the configured time and size, run it, and answer: every request gets an answer,
        if only a line saying why it was refused."""
        with connection:
            caller = caller_of(connection)
            send = Replies(connection)
            if not caller.may_connect(self.group):
                send.send(p.Result(EXIT_FAILED, errors=[f"error: {p.refusal(caller.name)}"]))
                return
            try:
                policy, broken = Policy.read(self.policy), ""
            except PolicyError as error:  # the limits still hold; a deploy says what is wrong
                policy, broken = Policy(self.policy), str(error)
            fds: list[int] = []
            with self.connections.held(caller, policy.connections_per_user) as allowed:
                try:
                    if not allowed:
                        raise Refused(f"{caller.name} has {policy.connections_per_user} connections to the agent open "
                                      "already, the most one user may; close one (a terminal, a capture) and try "
                                      f"again, or ask an administrator to raise connections_per_user in "
                                      f"{policy.source}")
                    request = _read_request(connection, policy, fds)
                    connection.settimeout(None)
                    send.answer(self.handle(request, Asked(caller, fds, send, policy, broken)))
                except (p.ProtocolError, Refused, OSError) as error:
                    send.send(p.Result(EXIT_FAILED, errors=[f"error: {error}"]))
                except Exception as error:  # a bug: the caller gets one line, the agent's log the traceback
                    traceback.print_exc()
                    send.send(p.Result(EXIT_FAILED, errors=[f"error: the agent failed: {type(error).__name__}"]))
                finally:
                    for fd in fds:
                        os.close(fd)

    def handle(self, request: p.Message, asked: Asked) -> p.Result:
        """Run one request by its verb's handler; every refusal and failure becomes a Result, as the CLI would print
        it."""
        try:
            return VERBS[type(request)](self, request, asked)
        except Refused as why:
            return p.Result(EXIT_FAILED, errors=[f"error: {why}"])
        except LabError as error:
            return p.Result(EXIT_BAD_LAB, errors=[str(problem) for problem in error.problems])
        except loaded(PREFLIGHT_FAILED) as failed:
            preflight = cast("PreflightFailed", failed)
            return p.Result(EXIT_FAILED, errors=[*(str(problem) for problem in preflight.problems),
                                                 "nothing was applied"])
        except loaded(DEPLOY_FAILED) as failed:
            deploy = cast("DeployError", failed)
            return p.Result(EXIT_FAILED, errors=[f"error: {deploy}"], details=deploy.details,
                            data={"rolled_back": deploy.rolled_back})
        except loaded(ONE_LINE_ERRORS) as error:
            return p.Result(EXIT_FAILED, errors=[f"error: {error}"])
        except Exception as error:  # a bug: the caller gets one line, the agent's log the traceback
            traceback.print_exc()
            return p.Result(EXIT_FAILED, errors=[f"error: the agent failed: {type(error).__name__}: {error}"])

    # ------------------------------------------------------------ verbs

    @verb(p.DeployRequest)
    def deploy(self, request: p.DeployRequest, asked: Asked) -> p.Result:
        from vtopo.lab import read_lab

        if asked.broken:
            raise Refused(asked.broken)
        caller, send, policy = asked.caller, asked.send, asked.policy
        topology = read_lab(request.document, Path(request.source).stem if request.source else "lab")
        consent = _consent(request.consent, caller, policy)
        _refuse_anothers_name(topology.name, caller, request.update)
        deployer = new_deployer()
        with self.locks.held(topology.name), \
                self._job(topology.name, Job(DEPLOYING, deployer, caller.uid), send) as answering:
            record = deployer.store.named(topology.name)  # a lab of that name, which only update may change
            if record is not None and request.update:
                _require_owner(record, caller, "update")
            source = Path(request.source) if request.source else None
            admit = _admission(caller, policy)
            if request.update:
                report = deployer.update_record(record, topology, _progress_to(send, request.every_step), source,
                                                consent, caller.uid, admit)
            else:
                report = deployer.deploy(topology, _progress_to(send, request.every_step), source, consent,
                                         caller.uid, admit, caller.root and policy.root_labs_as_host)
            answering.result = p.result_of(request, report)
        return answering.result

    @contextmanager
    def _owned(self, lab: str, caller: Caller, action: str) -> Iterator[LabRecord]:
        """The record of the lab named `lab`, which the caller must own (or be root) to `action` it: looked up once,
        and held against the agent's other requests on that lab while the block acts on it."""
        with self.locks.held(lab):
            yield _owned_record(lab, caller, action)

    def _deployed(self, lab: str, caller: Caller, action: str) -> DeployedLab:
        """The caller's lab named `lab`, as deployed: resolved once, from its record (see `_owned`)."""
        from vtopo.deployed import DeployedLab

        with self._owned(lab, caller, action) as record:
            lab_in_context = self.live.resolved().of(record).resolved.valid().lab
            return DeployedLab(lab_in_context, str(record.read().get("source") or ""))

    @verb(p.DestroyRequest)
    def destroy(self, request: p.DestroyRequest, asked: Asked) -> p.Result:
        caller, send = asked.caller, asked.send
        started = time.monotonic()
        deployer = new_deployer()
        with self._owned(request.lab, caller, "destroy") as record, \
                self._job(record.name, Job(DESTROYING, deployer, caller.uid)):
            steps = deployer.destroy(record, _progress_to(send, request.every_step))
        return p.result_of(request, p.Destroyed(request.lab, steps, time.monotonic() - started))

    @contextmanager
    def _job(self, lab: str, job: Job, send: Replies | None = None) -> Iterator[Answering]:
        """A deploy or destroy of `lab` while the block runs, which the lab's followers hear of as it begins and ends.
        The Result the block puts in what it yields goes to the client (`send`) as the job ends, before the agent's
        record of the lab is rebuilt (see LiveLabs.job_changed)."""
        answering = Answering()
        try:
            with self.jobs.running(lab, job):
                self.live.job_changed(lab, ended=False)
                yield answering
        finally:
            result = answering.result
            self.live.job_changed(lab, ended=True, compiled=job.deployer.compiled,
                                  answer=None if send is None or result is None else lambda: send.answer(result))

    @verb(p.StatusRequest)
    def status(self, request: p.StatusRequest, asked: Asked) -> p.Result:
        """Every member sees every lab's name, owner and state; only its owner (and root) its prefix, where it was
        deployed from and how it is made. The agent's record answers; `verify` probes the host, for its owner."""
        caller = asked.caller
        if request.lab and StateStore().named(request.lab) is None:
            from vtopo.deployed import NotDeployed

            raise NotDeployed(StateStore.not_found(request.lab))
        differences: list[str] = []
        if request.verify:
            statuses, differences = self.live.verify(request.lab, caller.owns)
        else:
            statuses = self.live.statuses(request.lab)
        labs = [lab if caller.owns(lab.owner) else replace(lab, prefix="", source="", document={}) for lab in statuses]
        return p.result_of(request, p.Statuses(labs, differences))

    @verb(p.FollowRequest)
    def follow(self, request: p.FollowRequest, asked: Asked) -> p.Result:
        """The caller's lab's state, then each change to it, until the caller closes the connection. A lab of that
        name another member deploys later says nothing to the caller but its name in the list of labs."""
        caller, send = asked.caller, asked.send
        record = StateStore().named(request.lab)
        if record is not None:
            _require_owner(record, caller, "follow")
        follower = Follower(request.lab, caller.owns)
        try:
            with self.live.followed(follower):
                follower.deliver(send.connection, send.send)
        finally:
            follower.close()
        return p.Result(0)

    @verb(p.RecordRequest)
    def record(self, request: p.RecordRequest, asked: Asked) -> p.Result:
        """A read, answered while a job holds the lab (a deploy under way): the record is written whole each time."""
        return p.result_of(request, _owned_record(request.lab, asked.caller, "read how it is deployed").deployment())

    @verb(p.NodeRequest)
    def operate_node(self, request: p.NodeRequest, asked: Asked) -> p.Result:
        from vtopo.lab_operations import operate_node

        with self._owned(request.lab, asked.caller, f"{request.action} nodes of") as record, \
                self.live.changing(request.lab):
            return p.result_of(request, p.Said(operate_node(record, request.node, request.action,
                                                            explain=request.explain, labs=self.live.resolved())))

    @verb(p.LinkRequest)
    def operate_link(self, request: p.LinkRequest, asked: Asked) -> p.Result:
        from vtopo.lab_operations import set_link_impairment, set_link_state

        with self._owned(request.lab, asked.caller, "change the links of") as record, self.live.changing(request.lab):
            if request.action is p.LinkAction.SET:
                said = set_link_impairment(record, request.a, request.b, request.change,
                                           explain=request.explain, labs=self.live.resolved())
            else:
                said = set_link_state(record, request.a, request.b, up=request.action is p.LinkAction.UP,
                                      explain=request.explain, labs=self.live.resolved())
        return p.result_of(request, p.Said(said))

    @verb(p.SaveRequest)
    def save(self, request: p.SaveRequest, asked: Asked) -> p.Result:
        from vtopo.saving import explain_save, read_running

        with self._owned(request.lab, asked.caller, "save the running state of") as record, \
                self.live.changing(request.lab):
            if request.explain:
                return p.result_of(request, {"script": explain_save(record)})
            return p.result_of(request, read_running(record, labs=self.live.resolved()).to_json())

    @verb(p.RestoreRequest)
    def restore(self, request: p.RestoreRequest, asked: Asked) -> p.Result:
        """What differs from the checkpoint changes through the paths of `node`, `link` and `deploy --update`, the
        last as the owner's deploy --update would: their quotas, the lab's consent."""
        from vtopo.checkpoints import restore
        from vtopo.model.io import read_checkpoint

        checkpoint = read_checkpoint(request.checkpoint)
        deployer = new_deployer()
        with self._owned(request.lab, asked.caller, "restore a checkpoint of") as record, \
                self.live.changing(request.lab):
            def update(topology: Topology) -> DeployReport:
                source = str(record.read().get("source") or "")
                return deployer.update_record(record, topology, _progress_to(asked.send, False),
                                              Path(source) if source else None, record.consent(), record.owner,
                                              _admission(asked.caller, asked.policy))

            restored = restore(record, checkpoint, update, request.explain, self.live.resolved())
            return p.result_of(request, restored.to_json())

    @verb(p.CleanupRequest)
    def cleanup(self, request: p.CleanupRequest, asked: Asked) -> p.Result:
        from vtopo.host.cleanup import cleanup

        if not asked.caller.root:
            raise Refused("only root may clean up: it destroys every user's interrupted labs")
        report = cleanup(new_deployer(), _progress_to(asked.send))
        for lab in report.labs:
            self.live.renew(lab)
        summary = p.CleanupSummary(report.labs, report.strays, report.errors)
        return p.result_of(request, summary, EXIT_FAILED if report.errors else 0)

    @verb(p.ExecRequest)
    def exec(self, request: p.ExecRequest, asked: Asked) -> p.Result:
        from vtopo.kinds.contract import RunsMachine

        caller, fds, send = asked.caller, asked.fds, asked.send
        lab = self._deployed(request.lab, caller, "run commands in")
        node = lab.node(request.node)
        if isinstance(node.kind, RunsMachine):  # the client types the command on the VM's console
            if request.argv:
                node.kind.command_in(node, request.argv)  # CannotRunInside when vtopo cannot drive that console
            return _hand_over_console(lab, request.node, send)
        # what a member put in their lab's nodes runs as the member, root's asking too; the host's own programs, on a
        # node that is the host's namespace, run as root for root
        owner = lab.context.trust.owner
        as_root = caller.root and not (owner.confined and node.kind.netns(node))
        account = pwd.getpwuid(caller.uid if as_root else owner.uid)
        argv = request.argv or [account.pw_shell or "/bin/sh"]
        directory = account.pw_dir if os.path.isdir(account.pw_dir) else "/"
        argv = node.kind.command_in(node, argv) if as_root else _as_owner(node, argv, directory)
        # a pager (vtysh's `terminal paginate`) without shell escapes
        environment = {"HOME": account.pw_dir, "USER": account.pw_name, "LOGNAME": account.pw_name,
                       "SHELL": account.pw_shell, "PATH": SEARCH_PATH, "TERM": request.term or "dumb",
                       "LESSSECURE": "1"}
        if request.terminal:
            return _run_on_pty(argv, environment, directory, request, send)
        if len(fds) != 3:
            raise p.ProtocolError("exec without a terminal needs the client's stdin, stdout and stderr")
        child = subprocess.Popen(argv, stdin=fds[0], stdout=fds[1], stderr=fds[2], env=environment, cwd=directory,
                                 start_new_session=True)
        return p.Result(_exit_status(_wait_while_connected(child, send.connection)))

    @verb(p.ConsoleRequest)
    def console(self, request: p.ConsoleRequest, asked: Asked) -> p.Result:
        return _hand_over_console(self._deployed(request.lab, asked.caller, "attach to the consoles of"), request.node,
                                  asked.send, request.rows, request.columns)

    @verb(p.CaptureRequest)
    def capture(self, request: p.CaptureRequest, asked: Asked) -> p.Result:
        """tcpdump on the device the target names in the caller's lab, writing to the caller's descriptors: the agent
        chooses the device, the options and the namespace; the caller only the filter and a count, which reach only a
        tcpdump of the lab's (vtopo.capture.engine.LabCapture)."""
        from vtopo.capture.engine import lab_capture, tcpdump_argv
        from vtopo.capture.target import CaptureError, resolve

        fds = asked.fds
        lab = self._deployed(request.lab, asked.caller, "capture on")
        if len(fds) != 2:
            raise p.ProtocolError("a capture needs the client's descriptors for the packets and the messages")
        if len(request.filter) > MAX_FILTER or request.count < 0:
            raise p.ProtocolError(f"a capture filter is at most {MAX_FILTER} characters, and its count not negative")
        try:
            target = resolve(lab.context, request.target)
        except CaptureError as error:
            raise Refused(str(error)) from None
        userns, owner, count = lab.context.user_namespace, lab.context.trust.owner.ids, request.count or None
        if not userns or owner is None:  # a lab of root's in the host's user namespace: only root captures on it
            child = subprocess.Popen(tcpdump_argv(target, request.filter, count), stdin=subprocess.DEVNULL,
                                     stdout=fds[0], stderr=fds[1], start_new_session=True)
            counters = lambda: os.killpg(child.pid, signal.SIGUSR1)  # noqa: E731
            return p.Result(_exit_status(_wait_while_connected(child, asked.send.connection, counters)))
        return p.Result(_exit_status(_capture_for_the_lab(lab_capture(target, request.filter, count, userns, owner),
                                                          fds, asked.send.connection)))

    @verb(p.LinkRatesRequest)
    def link_rates(self, request: p.LinkRatesRequest, asked: Asked) -> p.Result:
        """The rates of the caller's lab's links, from counters read in its namespaces every `every_s` seconds (at
        most RATES_PER_S times a second), sent as they change, until the client goes away, or the lab does: its
        namespaces are found by name, and the record the stream began with says whether they are still this lab's
        (another lab may have been deployed under the same names since). A member has at most
        `rate_streams_per_member` streams at once: the agent's time reading counters is taken from everyone's requests."""
        from vtopo.deployed import NotDeployed
        from vtopo.host.rates import LinkRates, RatesUnavailable

        send, caller, policy = asked.send, asked.caller, asked.policy
        every_s = max(request.every_s, 1 / RATES_PER_S)
        with ExitStack() as held, selectors.DefaultSelector() as selector:
            if not held.enter_context(self.rate_streams.held(caller, policy.rate_streams_per_member)):
                raise Refused(f"{caller.name} follows the link rates of labs {policy.rate_streams_per_member} times "
                              "already, the most one member may (each reads every link's counters up to "
                              f"{RATES_PER_S} times a second); close a designer or a rate view and try again, or ask "
                              f"an administrator to raise rate_streams_per_member in {policy.source}")
            with self._owned(request.lab, asked.caller, "read the link rates of") as record:
                rates = LinkRates.of_lab(self.live.resolved().of(record).resolved.valid().lab)
                deployed = held.enter_context(record.kept())
            selector.register(send.connection, selectors.EVENT_READ)
            wait_s = 1 / RATES_PER_S  # the first rates, every link's, at once
            while True:
                try:
                    changes = rates.changes()
                except RatesUnavailable as error:
                    if deployed():
                        raise NotDeployed(f"cannot read the link rates of lab {request.lab}: {error}") from None
                    changes = {}
                if not deployed():  # what was read may be another lab's, deployed under the same names since
                    raise NotDeployed(f"lab {request.lab} was destroyed: its link rates end here")
                if changes:
                    send.send(p.LinkRatesChanged.of(changes))
                if _client_left(selector, wait_s, deployed):
                    return p.Result(0)
                wait_s = every_s

    @verb(p.CancelRequest)
    def cancel(self, request: p.CancelRequest, asked: Asked) -> p.Result:
        """Cancel the deploy of the caller's lab that runs now: it stops after the operation in progress and rolls
        back, and its own client hears so."""
        job = self.jobs.job(request.lab)
        if job is None or job.doing != DEPLOYING:
            return p.result_of(request, p.Cancelled(False))
        if not asked.caller.owns(job.owner):
            raise Refused(p.not_the_owner(request.lab, job.owner, "cancel the deploy of"))
        job.deployer.cancel()
        return p.result_of(request, p.Cancelled(True))

    @verb(p.ImageLoadRequest)
    def load_image(self, request: p.ImageLoadRequest, asked: Asked) -> p.Result:
        """The archive the caller's process opened and sent, into the caller's own store. A member's archive is read,
        unpacked and stored by processes of the member's own (vtopo.host.image_store.load_own): the agent opens no
        path the member names, and parses nothing of it."""
        from vtopo.host import image_store

        if len(asked.fds) != 1:
            raise p.ProtocolError("an image load comes with one descriptor: the archive, opened by the client")
        if asked.caller.root:  # root's own file, which skopeo reads by its path (it resolves the one it is given)
            image = image_store.load(os.readlink(f"/proc/self/fd/{asked.fds[0]}"), request.reference)
        else:
            image = image_store.load_own(asked.fds[0], request.transport, request.named, asked.caller.uid,
                                         request.reference, asked.policy.image_mb_per_member << 20)
        return p.result_of(request, _image_entry(image))

    @verb(p.ImagesRequest)
    def images(self, request: p.ImagesRequest, asked: Asked) -> p.Result:
        from vtopo.host import image_store

        found = image_store.images(None if asked.caller.root else asked.caller.uid)
        return p.result_of(request, p.Images([_image_entry(image) for image in found]))

    @verb(p.ImageRemoveRequest)
    def remove_image(self, request: p.ImageRemoveRequest, asked: Asked) -> p.Result:
        from vtopo.host import image_store

        return p.result_of(request, _image_entry(image_store.remove(request.reference, asked.caller.uid)))

    @verb(p.LabsRequest)
    def labs(self, request: p.LabsRequest, _asked: Asked) -> p.Result:
        """Every member may see which labs run and whose they are, as `vtopo status` shows them."""
        entries = [replace(entry, doing=self.jobs.doing(entry.lab)) for entry in new_deployer().labs()]
        return p.result_of(request, p.Labs(entries))


def _image_entry(image: StoredImage) -> p.ImageEntry:
    return p.ImageEntry(image.reference, image.digest, image.who_may_use)


def _hand_over_console(lab: DeployedLab, node: str, send: Replies, rows: int = 0, columns: int = 0) -> p.Result:
    """Connect to a VM's serial console (telling the guest the client's terminal size, if known) and send the
    connected socket to the client."""
    with lab.open_console(node, rows, columns) as console:
        send.send(p.ConsoleOpened(), console.fileno())
    return p.Result(0)


def _wait_while_connected(child: subprocess.Popen[bytes], connection: socket.socket,
                          on_counters: Callable[[], None] | None = None) -> int:
    """The command's status; if the client goes away first (a cancelled measurement), its session is ended. During
    a capture, the client's CaptureCounters lines call `on_counters`; any other line ends the command."""
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(connection, selectors.EVENT_READ)
        while child.poll() is None:
            if not selector.select(0.1):
                continue
            data = connection.recv(4096)
            pending += data
            *lines, pending = pending.split(b"\n")
            try:
                if not data or (lines and on_counters is None) or len(pending) > 4096:
                    raise p.ProtocolError("the client went away or sent more than its request")
                for line in lines:
                    p.decode(line, p.DURING_CAPTURE)
                    on_counters()  # type: ignore[misc]  # not None when there are lines
            except p.ProtocolError:
                os.killpg(child.pid, signal.SIGTERM)
                return child.wait()
    return child.returncode


def _capture_for_the_lab(capture: LabCapture, fds: list[int], connection: socket.socket) -> int:
    """Run `capture` with the client's descriptors for packets and messages: its status, once it ended or the client
    went away. The listening tcpdump answers the client's requests for counters (SIGUSR1); one that feeds a filtering
    tcpdump ends with it (after -c N)."""
    from vtopo.capture.engine import EMPTY_ETHERNET_STREAM

    as_owner: dict[str, Any] = {}
    if capture.owner is not None:
        as_owner = {"user": capture.owner[0], "group": capture.owner[1], "extra_groups": []}
    if capture.check:
        checked = subprocess.run(capture.check, input=EMPTY_ETHERNET_STREAM, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, check=False, **as_owner)
        if checked.returncode != 0:
            os.write(fds[1], checked.stderr)
            return checked.returncode
    if not capture.filtering:
        child = subprocess.Popen(capture.listening, stdin=subprocess.DEVNULL, stdout=fds[0], stderr=fds[1],
                                 start_new_session=True)
        return _wait_while_connected(child, connection, lambda: os.killpg(child.pid, signal.SIGUSR1))
    packets, handed = os.pipe()
    fcntl.fcntl(handed, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    try:
        child = subprocess.Popen(capture.filtering, stdin=packets, stdout=fds[0], stderr=subprocess.DEVNULL,
                                 process_group=0, **as_owner)  # a group of its own, which the listening one joins
        try:
            listening = subprocess.Popen(capture.listening, stdin=subprocess.DEVNULL, stdout=handed, stderr=fds[1],
                                         process_group=child.pid)
        except OSError:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
    finally:
        os.close(packets)
        os.close(handed)
    try:
        return _wait_while_connected(child, connection, lambda: listening.send_signal(signal.SIGUSR1))
    finally:
        if listening.poll() is None:
            listening.terminate()
        listening.wait()


def _client_left(selector: selectors.BaseSelector, seconds: float, deployed: Callable[[], bool]) -> bool:
    """Whether the client closed its connection (or said more than its request) within `seconds`; False at once when
    the lab is no longer `deployed`."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if selector.select(min(left, RECORD_CHECK_S)):
            return True
        if not deployed():
            return False
    return False


def _exit_status(returncode: int) -> int:
    """A shell's $? for the command: 128 + the signal that ended it."""
    return 128 - returncode if returncode < 0 else returncode


def _as_owner(node: NodeContext[Any], argv: list[str], home: str) -> list[str]:
    """`argv` run inside the node of a member's lab as root of its user namespace, which maps the lab's owner to root
    there and gives them no power over anything outside the lab: what the owner or root runs there is whatever the
    owner put in the node, and runs as the owner. It starts in the owner's `home`, which a node of the
    host's programs sees, or at the root of a node's image, which has no home of the host's."""
    from vtopo.kinds.contract import CannotRunInside, Role, image_of

    if node.kind.role is not Role.NAMESPACE or node.kind.netns(node) is None:
        raise CannotRunInside(f"{node.node.name} is a {node.kind.label}: only root can run commands in it through "
                              "the agent (it has no namespaces of its own to confine the command to)")
    if not node.lab.trust.owner.confined:  # a lab whose record names no owner of its user namespace
        raise CannotRunInside(f"{node.lab.topology.name} was deployed before each lab had a user namespace of its "
                              "own: destroy it and deploy it again to run commands in its nodes")
    return node.enter(argv, "/" if image_of(node) else home)


def _run_on_pty(argv: list[str], environment: dict[str, str], directory: str, request: p.ExecRequest,
                send: Replies) -> p.Result:
    """Start `argv` on a new pty (its controlling terminal, through setsid -c), hand the master end to the
    client and wait for the command to end."""
    master, slave = os.openpty()
    try:
        try:
            if request.rows and request.columns:
                fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("4H", request.rows, request.columns, 0, 0))
            child = subprocess.Popen(["setsid", "-c", *argv], stdin=slave, stdout=slave, stderr=slave,
                                     env=environment, cwd=directory)
        finally:
            os.close(slave)
        send.send(p.ExecStarted(), master)
    finally:  # the client has its own copy; a pty left open here is one fewer for every login of the host's
        os.close(master)
    return p.Result(_exit_status(child.wait()))


@dataclass
class Answering:
    """The Result of a job's request, once the job has one (see Agent._job)."""

    result: p.Result | None = None


class Replies:
    """Answers to one client, until it goes away; after that, work in progress (a deploy) goes on unheard.

    Progress events are written in batches, at most every FLUSH_EVERY seconds (a deploy makes one per operation);
    any other answer goes at once, after the events before it."""

    FLUSH_EVERY = 0.05

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self._gone = False
        self._pending = bytearray()
        self._flushed = time.monotonic()
        self._answered: p.Result | None = None

    def answer(self, result: p.Result) -> None:
        """The request's one Result. A job sends it before its work ends (see Agent._job), and hands the same Result
        back; what failed after it was sent goes to the agent's log."""
        if self._answered is None:
            self._answered = result
            self.send(result)
        elif result is not self._answered:
            print(f"after the answer to its request: {'; '.join(result.errors)}", file=sys.stderr)

    def send(self, message: p.Message, fd: int | None = None) -> None:
        """Send one line; with `fd`, the descriptor goes with it (SCM_RIGHTS)."""
        self._pending += p.encode(message)
        if isinstance(message, p.ProgressEvent) and time.monotonic() - self._flushed < self.FLUSH_EVERY:
            return
        data, self._pending, self._flushed = bytes(self._pending), bytearray(), time.monotonic()
        if self._gone:
            return
        try:
            if fd is None:
                self.connection.sendall(data)
            else:
                socket.send_fds(self.connection, [data], [fd])
        except OSError:
            self._gone = True


def _progress_to(send: Replies, every_step: bool = True) -> ProgressCallback:
    """Progress as events to the client; without `every_step`, only each stage's first event and what nodes print
    (a deploy makes an event per operation, which a client that shows stages would decode only to drop)."""
    if every_step:
        return lambda progress: send.send(p.ProgressEvent(**vars(progress)))
    last_stage = [""]

    def stage_changes(progress: Progress) -> None:
        if progress.stage != OUTPUT_STAGE:
            if progress.stage == last_stage[0]:
                return
            last_stage[0] = progress.stage
        send.send(p.ProgressEvent(**vars(progress)))

    return stage_changes


def _read_request(connection: socket.socket, policy: Policy, fds: list[int]) -> p.Message:
    """The request line, sent whole within the configured time and no longer than the configured size; the
    descriptors sent with it are added to `fds`."""
    deadline = time.monotonic() + policy.request_seconds
    buffer = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise p.ProtocolError(f"the request did not arrive within {policy.request_seconds} s")
        connection.settimeout(remaining)
        try:
            data, received, _, _ = socket.recv_fds(connection, min(1 << 20, policy.request_bytes + 1 - len(buffer)),
                                                   3)
        except TimeoutError:
            raise p.ProtocolError(f"the request did not arrive within {policy.request_seconds} s") from None
        fds += received
        if not data:
            raise p.ProtocolError("the client closed the connection before its request was complete")
        end = data.find(b"\n")
        buffer += data if end < 0 else data[:end]
        if len(buffer) > policy.request_bytes:
            raise p.ProtocolError(f"a request is at most {policy.request_bytes} bytes")
        if end >= 0:
            return p.decode(bytes(buffer), p.REQUESTS)


def _admission(caller: Caller, policy: Policy) -> Admission:
    """What refuses a member's lab before anything is built: the member's quota of labs, nodes and VM memory, counted
    with their other deployed labs. (Startup commands only root may allow are refused when the lab is compiled.)"""
    def admit(lab: LabContext, others: list[LabRecord]) -> None:
        from vtopo.host.deployer import usage_of  # the deployer asks, with its module loaded

        if caller.root:
            return
        theirs = [record.usage() for record in others if _owner_of(record) == caller.uid]
        total = sum(theirs, Usage())
        this = usage_of(lab)
        name, ask = lab.topology.name, f"or ask an administrator to raise it in {policy.source}"
        if len(theirs) >= policy.labs_per_member:
            raise Refused(f"lab {name}: {caller.name} has {len(theirs)} labs deployed, the most one member may "
                          f"(labs_per_member); destroy one first, {ask}")
        if total.nodes + this.nodes > policy.nodes_per_member:
            raise Refused(f"lab {name} has {this.nodes} nodes and {caller.name}'s other labs {total.nodes}: more than "
                          f"the {policy.nodes_per_member} one member may have (nodes_per_member); destroy a lab "
                          f"first, {ask}")
        if total.vm_memory_mb + this.vm_memory_mb > policy.vm_memory_mb_per_member:
            raise Refused(f"lab {name}'s VMs and image nodes take {this.vm_memory_mb:,} MiB and {caller.name}'s other "
                          f"ones {total.vm_memory_mb:,} MiB: more than the {policy.vm_memory_mb_per_member:,} MiB one "
                          f"member may have (vm_memory_mb_per_member); give them less memory, destroy a lab first, "
                          f"{ask}")
        if total.cpu_percent + this.cpu_percent > policy.cpu_percent_per_member:
            raise Refused(f"lab {name}'s VMs and image nodes may take {this.cpu_percent}% of a CPU and {caller.name}'s "
                          f"other ones {total.cpu_percent}%: more than the {policy.cpu_percent_per_member}% one member "
                          f"may have (cpu_percent_per_member); give them less CPU, destroy a lab first, {ask}")
    return admit


def _owned_record(lab: str, caller: Caller, action: str) -> LabRecord:
    """The record of the lab named `lab`, which the caller must own (or be root) to `action` it."""
    from vtopo.deployed import NotDeployed

    record = StateStore().named(lab)
    if record is None:
        raise NotDeployed(StateStore.not_found(lab))
    _require_owner(record, caller, action)
    return record


def _refuse_anothers_name(lab: str, caller: Caller, update: bool) -> None:
    """A deploy under the name of another's deployed lab is refused before the agent holds that lab for it (its lock,
    and a job every follower sees) while the caller's lab compiles; the deployer's claim still decides a race."""
    record = StateStore().named(lab)
    if record is not None and not caller.owns(record.owner):
        if update:
            _require_owner(record, caller, "update")
        raise Refused(taken_message(lab, record))


def _require_owner(record: LabRecord, caller: Caller, action: str) -> None:
    if not caller.owns(record.owner):
        raise Refused(p.not_the_owner(record.name, record.owner, action))


def _owner_of(record: LabRecord) -> int | None:
    try:
        return record.owner
    except FileNotFoundError:  # destroyed meanwhile
        return None


def _consent(consent: p.Consent, caller: Caller, policy: Policy) -> Trust:
    """The caller's consent as the compiler's Trust. Host devices, and images outside vtopo's images directory, reach
    past the lab: only root may allow them, or a member for what the administrator listed in the agent's
    configuration. A user may only consent to images they can read themselves: the agent opens them as root.
    Startup commands are the owner's own: they run as the owner, inside the lab's nodes."""
    for image in consent.images:
        if not os.path.isabs(image):
            raise Refused(f"--allow-image {image}: give the image's absolute path")
    if not caller.root:
        for device in consent.host_devices:
            if device not in policy.host_devices:
                raise Refused(f"--allow-host-device {device}: only root may hand a host device to a lab (its nodes "
                              f"would sit on the host's own network); ask an administrator to deploy the lab, or to "
                              f'let the {p.GROUP} group use {device} in {policy.source}: host_devices = ["{device}"]')
        for image in consent.images:
            if not policy.allows_image(image):
                raise Refused(f"--allow-image {image}: only root may let a lab boot a file from outside vtopo's images "
                              f"directory; ask an administrator to copy it there, or to let the {p.GROUP} group use "
                              f'its directory in {policy.source}: image_dirs = ["{os.path.dirname(image)}"]')
            if not _readable_by(caller, image):
                raise Refused(f"--allow-image {image}: {caller.name} cannot read that file, so the lab may not use it")
    try:
        vnis = policy.vnis_within(consent.tunnel_vnis)
    except TunnelRefused as why:
        raise Refused(str(why)) from None
    return Trust(host_devices=frozenset(consent.host_devices), images=frozenset(consent.images),
                 startup_commands=frozenset(consent.startup_commands), site=consent.site, tunnel_vnis=vnis,
                 tunnel_peers=None if caller.root else policy.tunnel_peers)


def _readable_by(caller: Caller, path: str) -> bool:
    from vtopo.ops import as_account

    check = subprocess.run([*as_account(caller.uid), "test", "-r", path], stdin=subprocess.DEVNULL,
                           capture_output=True, check=False)
    return check.returncode == 0


# ---------------------------------------------------------------- starting and stopping


def passed_by_systemd() -> socket.socket | None:
    """The socket systemd opened for the agent (vtopo-agent.socket), if it started it."""
    if os.environ.get("LISTEN_PID") == str(os.getpid()) and os.environ.get("LISTEN_FDS") == "1":
        return socket.socket(fileno=3)
    return None


def listen(path: Path, group: str) -> socket.socket:
    """The agent's socket, root:GROUP mode 0660, over one a killed agent left."""
    make_directory(path.parent, PASSAGE, exist_ok=True)  # clients reach the socket, and list nothing
    if path.is_socket():
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(str(path))
            raise HostError(f"a vtopo agent already listens on {path}")
        except ConnectionRefusedError:
            path.unlink()  # left by an agent that was killed
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX)
    old_umask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    os.chown(path, 0, grp.getgrnam(group).gr_gid)
    os.chmod(path, 0o660)
    listener.listen(64)
    return listener


def run(path: Path = p.SOCKET, daemon: bool = False, pid_file: Path = p.PID_FILE, group: str = p.GROUP,
        policy: Path = CONFIG) -> int:
    from vtopo.host.syscalls import keep_large_blocks_mapped  # ctypes: for the agent's own process alone

    try:
        grp.getgrnam(group)
    except KeyError:
        print(f"vtopo agent: there is no group {group!r}; create it (`groupadd --system {group}`, as "
              "scripts/setup.sh does) and add the users who may deploy labs", file=sys.stderr)
        return EXIT_FAILED
    listener = passed_by_systemd()
    ours = listener is None  # a socket systemd made stays when the agent stops
    listener = listener or listen(path, group)
    if daemon:
        _daemonize()
        _write_pid_file(pid_file)

    def stop(*_: object) -> None:
        if ours:
            path.unlink(missing_ok=True)
        if daemon:
            pid_file.unlink(missing_ok=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    keep_large_blocks_mapped()  # the requests' buffers: up to connections × request_bytes while a flood lasts
    freeze_survivors()
    print(f"vtopo agent: listening on {path}", flush=True)
    agent = Agent(group, policy)
    # the record of each lab deployed before the agent started, probed now rather than at the first request for it
    threading.Thread(target=agent.live.read_recorded, name="vtopo records", daemon=True).start()
    agent.serve(listener)
    return 0


def _daemonize() -> None:
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    os.chdir("/")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _write_pid_file(pid_file: Path) -> None:
    write_file(pid_file, f"{os.getpid()}\n", 0o644)
