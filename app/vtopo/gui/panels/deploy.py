"""Deploy and destroy in a worker thread: progress through signals, a log dock, node states on the canvas.

The vtopo agent does the host work (vtopo.client.agent_client): the one that runs, or, for root when none does, one the
designer's own process runs.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, cast

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit, QProgressBar, QWidget

from vtopo.gui.canvas.states import NodeState
from vtopo.lab_terms import Trust
from vtopo.gui.document.editor import Editor
from vtopo.gui.host_api import Deployer, DeployerLoader, Following
from vtopo.reports import OUTPUT_STAGE, DeployReport, LabEntry, LabStatus, PartState, Progress, ProgressCallback
from vtopo.gui.workers import Worker, serial_pool
from vtopo.model import io
from vtopo.model.placement import sites_used, spread_over_sites
from vtopo.model.sites import Site
from vtopo.model.topology import Impairment, Topology

FAULTS = ("degraded", "incomplete")  # the states of a link the running lab lacks
AGENT_JOBS = ("deploying", "destroying")  # a lab's state while the agent deploys or destroys it
FOLLOW_AGAIN_MS = 1000  # after the agent went away (or refused): when the designer asks to follow the lab again
TEXT_PADDING = 8  # px between a progress bar's text and its ends


def load_deployer() -> tuple[Deployer | None, str]:
    """(a Deployer, "") or (None, why Deploy is unavailable): the agent deploys (each site's, for a lab spread over
    sites), and a member can reach none."""
    from vtopo.client.agent_client import unavailable
    from vtopo.gui.sites_deployer import SitesDeployer

    why = unavailable()
    return (None, why) if why else (SitesDeployer(), "")


def confirm_destroy(parent: QWidget, lab: str, topology: Topology) -> bool:
    """Ask before tearing a lab down, naming it and what goes."""
    kinds = sorted({node.kind for node in topology.nodes.values()})
    sites = "".join(f" and on site {name}" for name in sites_used(topology)[1:])
    box = QMessageBox(QMessageBox.Icon.Warning, "Destroy lab",
                      f"Destroy lab {lab} on this host{sites}?", QMessageBox.StandardButton.Cancel, parent)
    box.setInformativeText(
        f"This stops and removes its {len(topology.nodes)} nodes ({', '.join(kinds)}) and {len(topology.links)} "
        "links: their namespaces, interfaces, bridges and switches, router daemons and VMs, and the lab's "
        f"files on this host{sites}. The lab file itself stays as it is.")
    destroy = box.addButton("Destroy", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is destroy


def _read_lab(deployer: Deployer, lab: str) -> tuple[list[LabEntry], LabStatus | None]:
    """The running labs and this lab's state, on a pool thread. A lab of the same name that another user deployed is
    theirs, not the one this window shows."""
    labs = list(deployer.labs())
    mine = any(entry.lab == lab and entry.owner == os.getuid() for entry in labs)
    return labs, next(iter(deployer.status(lab)), None) if mine else None


def _follow(deployer: Deployer, lab: str, report: Callable[[object], None]) -> None:
    """On a thread of its own: hand the window the lab's following (to close it), then each message of the agent."""
    following = deployer.follow(lab)
    report(following)
    for message in following:
        report(message)


class DeployLog(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(20_000)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    def log(self, line: str) -> None:
        self.appendPlainText(f"{time.strftime('%H:%M:%S')}  {line}")


class DeployProgress(QProgressBar):
    """The deploy's progress in the status bar. Its text, longer than the bar, ends in "…" (its tooltip has it
    whole)."""

    def text(self) -> str:
        return self.fontMetrics().elidedText(super().text(), Qt.TextElideMode.ElideRight,
                                             max(self.contentsRect().width() - TEXT_PADDING, 0))


class DeployController(QObject):
    """Starts deploy/destroy/status jobs, one at a time, and keeps the per-node states."""

    busy_changed = Signal(bool)
    status_read = Signal()  # a read of the lab's state has ended (shown, or dropped for a job that started meanwhile)
    states_changed = Signal()
    drift_changed = Signal(str)  # "" when the canvas is what runs; otherwise what to tell the user
    labs_changed = Signal()  # the list of running labs (`running_labs`)

    def __init__(self, editor: Editor, log: DeployLog, progress_bar: QProgressBar,
                 deployer_loader: DeployerLoader = load_deployer,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._log = log
        self._bar = progress_bar
        self._loader = deployer_loader
        self._deployer: Deployer | None = None
        self.unavailable = ""
        self._pool = serial_pool(self)
        self._worker: Worker | None = None
        self._job_name = ""
        self._reader: Worker | None = None
        self._read_again = False
        self.states: dict[str, NodeState] = {}  # by node name: the executor knows nodes by name
        self.deployed_lab = ""
        self.links_down: set[str] = set()  # ids of links taken down on the running lab
        self.details: dict[str, str] = {}  # by node name: what the last status read said of it beyond its state
        self._deployed_text = ""  # the lab as it was deployed, as saved text
        self._deploying: Topology | None = None
        self._read_status_next = False  # after a deploy that may have kept stopped nodes and links down
        self.running_labs: list[LabEntry] = []  # every deployed lab on the host, whoever owns it
        self.agent_doing = ""  # what the agent does to this lab for another client (or for a closed designer)
        self._canceller: Worker | None = None
        self._cancels = QThreadPool(self)  # a cancel must not queue behind the deploy it cancels
        self._follower: Worker | None = None
        self._following: Following | None = None  # the agent's connection that tells this window of each change
        self._followed: LabStatus | None = None  # the lab as the agent last told it, shown when no job of ours runs
        self._told_while_busy = False
        self._not_followed_because = ""
        self._follow_again = QTimer(self)
        self._follow_again.setSingleShot(True)
        self._follow_again.timeout.connect(self.follow)
        editor.topology_replaced.connect(self._forget)
        self.follow()
        editor.model_changed.connect(self._check_drift)

    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def pool(self) -> QThreadPool:
        """The window's one queue of jobs on the host: deploys, status reads and changes to the running lab run in
        the order they were asked for, so a Deploy pressed during a live change sees the lab as that change left
        it (and finds nothing to apply, where it used to find the old rate and rebuild the lab)."""
        return self._pool

    def deployer(self) -> Deployer | None:
        if self._deployer is None and not self.unavailable:
            self._deployer, self.unavailable = self._loader()
        return self._deployer

    @property
    def lab_name(self) -> str:
        return self._editor.topology.name

    @property
    def outlives_window(self) -> bool:
        """Whether a lab's jobs go on when the designer closes: an agent that listens runs them, not this process."""
        from vtopo.client.agent_client import AgentClient

        deployer = self.deployer()
        return isinstance(deployer, AgentClient) and deployer.outlives_caller

    @property
    def deploying(self) -> bool:
        """Whether a deploy of this lab runs: this window's, or the agent's for another client."""
        return (self.busy and self._job_name == "deploy") or self.agent_doing == "deploying"

    def state_of(self, node_name: str) -> NodeState:
        return self.states.get(node_name, NodeState.NOT_DEPLOYED)

    # ------------------------------------------------------------ jobs

    def deploy(self, consent: Trust = Trust(), sites: frozenset[str] = frozenset()) -> str:
        """Deploy the lab as drawn; `consent` is what the user allowed outside it, `sites` the other sites the user
        allowed vtopo to connect to (see vtopo.gui.panels.consent). "" once the deploy starts, else why it does not:
        a site not allowed."""
        topology = self._editor.topology.copy()
        if refused := self._refused(topology, sites):
            for line in refused:
                self._log.log(f"not deployed: {line}")
            return refused[0]
        self._deploying = topology
        stopped = {name for name, state in self.states.items() if state is NodeState.STOPPED}
        # An update that only adds keeps what the user stopped or took down; a redeploy starts everything: ask.
        self._read_status_next = bool(stopped or self.links_down)
        self._set_states({name: NodeState.DEPLOYING for name in (n.name for n in topology.nodes.values())
                          if name not in stopped})
        where = "".join(f" and on site {name}" for name in sites_used(topology)[1:])
        self._log.log(f"deploying lab {topology.name} ({len(topology.nodes)} nodes, {len(topology.links)} links)"
                      + (f" here{where}" if where else ""))
        self._start("deploy", lambda deployer, report: deployer.update(topology, report, consent=consent),
                    self._deployed)
        return ""

    def other_sites(self) -> list[Site]:
        """The other machines the lab as drawn would have vtopo connect to, to deploy their parts: not those the
        running lab is spread over, reached as the lab reaches them now (they were allowed when it was deployed)."""
        from vtopo.sites.spread import reached_as_before

        topology = self._editor.topology
        allowed = reached_as_before(self._running(), topology)
        return [topology.sites[name] for name in sites_used(topology)[1:] if name not in allowed]

    def _running(self) -> Topology | None:
        return io.loads(self._deployed_text) if self.deployed_lab and self._deployed_text else None

    def _refused(self, topology: Topology, sites: frozenset[str]) -> list[str]:
        if not spread_over_sites(topology):
            return []
        from vtopo.sites.spread import not_allowed

        return not_allowed(topology, sites, "by ticking site {name} when Deploy asks", self._running())

    def destroy(self) -> None:
        lab = self.deployed_lab or self._editor.topology.name
        self._log.log(f"destroying lab {lab}")
        self._set_states({name: NodeState.DEPLOYING for name, state in self.states.items()
                          if state is not NodeState.NOT_DEPLOYED})
        self._start("destroy", lambda deployer, report: deployer.destroy(lab, report), self._torn_down)

    def refresh_status(self) -> None:
        """Read the running labs and this lab's state (each site's part of it, for a lab spread over sites). A read is
        no job of the user's: Deploy, Destroy and the rest stay available while it runs, and a job started meanwhile
        drops what it read (the lab is read again once the job ends)."""
        deployer, lab = self.deployer(), self._editor.topology.name
        if deployer is None:
            self._log.log(self.unavailable)
        elif self.busy:
            self._read_status_next = True
        elif self._reader is not None:
            self._read_again = True
        else:
            self._reader = worker = Worker(lambda _report: _read_lab(deployer, lab))
            worker.returned.connect(self._read_returned)
            worker.errored.connect(lambda error: self._log.log(f"could not read the state of deployed labs: {error}"))
            worker.finished.connect(self._read_ended)
            worker.start(self._pool)

    def cancel(self) -> None:
        """Stop the deploy under way after its current step; it rolls back, and its end says so."""
        deployer, lab = self.deployer(), self._editor.topology.name
        if deployer is None or not self.deploying:
            return
        self._log.log(f"cancelling the deploy of lab {lab}: it stops after the current step and rolls back")
        self._canceller = worker = Worker(lambda _report: deployer.cancel(lab))
        worker.errored.connect(lambda error: self._log.log(f"could not cancel the deploy: {error}"))
        worker.start(self._cancels)

    def follow(self) -> None:
        """Follow the lab this window shows: the agent tells it the lab's state and each change, whoever made it (the
        CLI, another window, a process that died, an interface taken down inside a node). An agent started after the
        designer is found here."""
        if self._deployer is None and self.unavailable:
            self.unavailable = ""
            if self.deployer() is not None:
                self.states_changed.emit()  # Deploy and Destroy are available now
        deployer, lab = self.deployer(), self._editor.topology.name
        if deployer is None:
            self._follow_again.start(FOLLOW_AGAIN_MS)
            return
        self._follower = worker = Worker(lambda report: _follow(deployer, lab, report))
        worker.yielded.connect(self._heard)
        worker.errored.connect(self._not_followed)
        worker.finished.connect(self._unfollowed)  # a bound method: Qt drops the connection with this object
        worker.start_alone()

    def stop_following(self) -> None:
        """End the agent's connection that tells this window of changes (the window closes, or shows another lab)."""
        self._follow_again.stop()
        if self._following is not None:
            self._following.close()
            self._following = None
        if self._follower is not None:
            self._follower.yielded.disconnect(self._heard)
            self._follower.finished.disconnect(self._unfollowed)
            self._follower = None

    def _not_followed(self, error: Exception) -> None:
        """Said once, however often following the lab is tried again (the agent went away; the lab is another
        member's)."""
        said = f"cannot follow lab {self._editor.topology.name} on this host: {error}"
        if said != self._not_followed_because:
            self._not_followed_because = said
            self._log.log(said)

    def _unfollowed(self) -> None:
        """The agent went away (or refused): follow the lab again once it is back."""
        self._follower, self._following = None, None
        self._follow_again.start(FOLLOW_AGAIN_MS)

    def _heard(self, message: object) -> None:
        from vtopo import protocol as p

        if not isinstance(message, p.Message):
            self._following = cast(Following, message)
        elif isinstance(message, p.LabsListed):
            if message.labs != self.running_labs:
                self.running_labs = message.labs
                self.labs_changed.emit()
        elif isinstance(message, p.LabState):
            self._followed = message.status
            self._show_followed()
        elif isinstance(message, p.PartsChanged) and self._followed is not None:
            self._followed = self._followed.changed(message.state, message.nodes, message.links)
            if self.busy:
                self._told_while_busy = True
            else:
                self._parts_changed(message.nodes)

    def _show_followed(self) -> None:
        """The lab's whole state as the agent last told it, unless a job of this window runs (its end is shown once
        the job ends). A lab spread over sites is followed on every site (the Deployer's follow), and told whole."""
        if self.busy:
            self._told_while_busy = True
            return
        self._status_read(self._followed, quiet=True)

    def _parts_changed(self, nodes: list[PartState]) -> None:
        """Show the nodes whose state the agent said changed, and every link as the followed lab has it now."""
        assert self._followed is not None
        self._follow_agent_job(self._followed)
        self.details.update({node.name: node.detail for node in nodes})
        if nodes:
            self._set_states(self._as_shown({node.name: NodeState.parse(node.state) for node in nodes}))
        self._show_links(self._followed.links)

    def _read_returned(self, read: tuple[list[LabEntry], LabStatus | None]) -> None:
        if self.busy:  # the lab as it was before this window's job: read again once the job ends
            self._read_status_next = True
            return
        labs, ours = read
        if labs != self.running_labs:
            self.running_labs = labs
            self.labs_changed.emit()
        self._status_read(ours)

    def _read_ended(self) -> None:
        self._reader = None
        self.status_read.emit()
        if self._read_again:
            self._read_again = False
            self.refresh_status()

    def _follow_agent_job(self, ours: LabStatus | None) -> None:
        """What the agent does to the lab for another client (or for a designer that was closed), as its state says:
        Deploy stays disabled until that job ends."""
        doing = ours.state if ours is not None and ours.state in AGENT_JOBS else ""
        if doing != self.agent_doing:
            self.agent_doing = doing
            self._log.log(f"lab {self._editor.topology.name} is {doing} (for another window, or for a designer that "
                          "was closed): its state follows here" if doing else
                          f"lab {self._editor.topology.name}: the agent's job on it has ended")

    def _start(self, name: str, job: Callable[[Deployer, ProgressCallback], Any],
               done: Callable[[Any], None]) -> None:
        deployer = self.deployer()
        if deployer is None or self.busy:
            self._log.log(self.unavailable or "another deploy job is still running")
            return
        worker = Worker(lambda report: job(deployer, report))
        worker.yielded.connect(self._progress)
        worker.returned.connect(done)
        worker.errored.connect(self._failed)
        worker.finished.connect(self._finished)
        self._worker, self._job_name = worker, name
        self._bar.setRange(0, 0)
        self._bar.show()
        self.busy_changed.emit(True)
        worker.start(self._pool)

    def wait(self, timeout_ms: int = 60_000) -> None:
        self._pool.waitForDone(timeout_ms)

    # ------------------------------------------------------------ results, on the GUI thread

    def _progress(self, progress: Progress) -> None:
        if progress.stage == OUTPUT_STAGE:  # what a startup command printed
            for line in progress.message.splitlines():
                self._log.log(f"{progress.owner.removeprefix('node ')}| {line}")
            return
        self._bar.setRange(0, max(progress.total, 1))
        self._bar.setValue(progress.done)
        self._bar.setFormat(f"{progress.stage} %v/%m · {progress.owner.removeprefix('node ')}: {progress.message}")
        self._bar.setToolTip(self._bar.format().replace("%v", str(progress.done)).replace("%m", str(progress.total)))
        self._log.log(f"[{progress.stage} {progress.done}/{progress.total}] {progress.owner}: {progress.message}")
        if progress.owner.startswith("node "):
            name = progress.owner.removeprefix("node ")
            if progress.stage == "apply":
                self._set_states({name: NodeState.DEPLOYING})

    def deployed_impairment(self, link_id: str) -> Impairment | None:
        """The impairment the running lab has on this link; None when the lab or the link is not deployed."""
        if not self.deployed_lab or not self._deployed_text:
            return None
        link = io.loads(self._deployed_text).links.get(link_id)
        return link.impairment if link is not None else None

    def _edited(self) -> bool:
        """Whether the lab changed since it was deployed. Only the drawing of a lab spread over sites (where its nodes
        are, its notes) is no change: its sites do not keep it."""
        running, edited = self._running(), self._editor.topology
        if running is None or io.dumps(edited) == self._deployed_text:
            return False
        if not spread_over_sites(running) and not spread_over_sites(edited):
            return True
        from vtopo.sites.spread import same_deploy

        return not same_deploy(running, edited)

    def drift(self) -> str:
        return f"lab {self.deployed_lab} is deployed and has changed since: Deploy applies the edit" \
            if self._edited() else ""

    def _check_drift(self) -> None:
        self.drift_changed.emit(self.drift())

    def _deployed(self, report: DeployReport) -> None:
        self.deployed_lab = report.lab
        if self._deploying is not None:
            self._deployed_text = io.dumps(self._deploying)
        self._log.log(f"lab {report.lab} is up: {report.nodes} nodes, {report.links} links in {report.seconds:.1f} s")
        for notice in report.notices:
            self._log.log(f"notice: {notice}")
        self._set_states({name: NodeState.RUNNING for name, state in self.states.items()
                          if state is not NodeState.STOPPED})  # a stopped node the update rebuilt was DEPLOYING

    def _torn_down(self, _removed: int) -> None:
        self._log.log("lab destroyed")
        self.deployed_lab = ""
        self._deployed_text = ""
        self._set_states({name: NodeState.NOT_DEPLOYED for name in self.states})
        self._set_links_down(set())
        self._editor.scene.set_link_faults({})

    def _status_read(self, ours: LabStatus | None, quiet: bool = False) -> None:
        """`ours`: this lab's state, None when it is not deployed. `quiet`: a read of the timer, which logs nothing
        the last one did not."""
        self._follow_agent_job(ours)
        self.deployed_lab = ours.lab if ours is not None else ""
        self._deployed_text = io.dumps(io.from_document(ours.document)) if ours is not None and ours.document else ""
        self.states = {}
        self.details = {node.name: node.detail for node in ours.nodes} if ours else {}
        self._set_states(self._as_shown({node.name: NodeState.parse(node.state) for node in ours.nodes} if ours else {}))
        self._show_links(ours.links if ours else [])
        if ours is None or quiet:
            return
        if not ours.up:
            self._log.log(f"lab {ours.lab}: {ours.state}")
        for node in ours.nodes:
            if node.detail:
                self._log.log(f"node {node.name}: {node.state}{node.detail}")
        for link in ours.links:
            if link.state in FAULTS:
                self._log.log(f"link {link.name}: {link.state}{link.detail}")

    def _as_shown(self, states: dict[str, NodeState]) -> dict[str, NodeState]:
        """While the agent runs a job on the lab for another client, each node is in its hands until the job ends (as
        in this window's own jobs)."""
        if not self.agent_doing:
            return states
        return {name: state if state is NodeState.STOPPED else NodeState.DEPLOYING for name, state in states.items()}

    def _show_links(self, links: list[PartState]) -> None:
        """Each link of the running lab down, missing something, or as drawn."""
        topology = self._editor.topology
        ids = {topology.describe_link(link): link.id for link in topology.links.values()}
        self._set_links_down({ids[link.name] for link in links if link.state == "down" and link.name in ids})
        self._editor.scene.set_link_faults({ids[link.name]: f"{link.state}{link.detail}" for link in links
                                            if link.state in FAULTS and link.name in ids})

    def _failed(self, error: Exception) -> None:
        """A DeployError (perhaps rolled back) or anything unexpected: report it with what we know. A DeployError's
        message ends with what became of the lab (the host as it was, a lab updated in place running on, or one
        deployed again as it ran), so the log adds nothing to it."""
        message = str(error) or repr(error)
        rolled_back = bool(getattr(error, "rolled_back", False))
        self._log.log(f"FAILED: {message}")
        self._read_status_next = True  # what the failed job left: rolled back, or (a destroy) partly there
        failing = {name for name in self.states if f"node {name}" in message or f" {name}:" in message}
        after = NodeState.NOT_DEPLOYED if rolled_back else NodeState.FAILED
        self._set_states({name: NodeState.FAILED if name in failing else after
                          for name, state in self.states.items() if state is NodeState.DEPLOYING})

    def _finished(self) -> None:
        self._worker = None
        self._bar.setRange(0, 1)
        self._bar.setValue(1)
        self._bar.hide()
        self.busy_changed.emit(False)
        self._check_drift()
        if self._read_status_next:
            self._read_status_next = False
            self.refresh_status()
        elif self._told_while_busy and (self._followed is None or self._followed.state not in AGENT_JOBS):
            self._show_followed()  # what the agent told of the lab as this window's job ended
        self._told_while_busy = False

    def _set_states(self, changes: dict[str, NodeState]) -> None:
        self.states.update(changes)
        self.states = {name: state for name, state in self.states.items() if state is not NodeState.NOT_DEPLOYED}
        topology = self._editor.topology
        self._editor.scene.set_node_states({node.id: self.state_of(node.name) for node in topology.nodes.values()})
        self.states_changed.emit()

    def _set_links_down(self, down: set[str]) -> None:
        self.links_down = down
        self._editor.scene.set_links_down(down)
        self.states_changed.emit()

    def _forget(self) -> None:
        """Another lab is open: drop the old states and log, and ask the executor whether this one is deployed."""
        self._log.clear()
        self.states = {}
        self.details = {}
        self.links_down = set()
        self.deployed_lab = ""
        self._deployed_text = ""
        self.agent_doing = ""
        self._followed = None
        self._editor.scene.set_node_states({})
        self._editor.scene.set_link_faults({})
        self.states_changed.emit()
        self.stop_following()
        self.follow()
