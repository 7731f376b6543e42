"""What the agent and its clients say to each other: one JSON object per line, each a typed message.

A client sends one request, the agent answers with progress events and ends with one `Result`. A request never
carries an operation, a host path to act on or a command for root: a deploy carries the lab *document* (the file's
text) and the user's consent, and the agent loads, checks and compiles it itself.

Each verb is declared once, as its request type: a `Request[A]` whose Result carries an `A` (its data), which the
agent's handler makes (`result_of`) and the client reads back (`answer_of`). A new verb is a new request type here and
its handler in the agent's table of verbs (vtopo.server.agent_server.VERBS). A choice among a few words (a node's or a link's
action) is an enum, refused where the line is decoded.
"""
from __future__ import annotations

import json
import math
import os
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, Union

from vtopo.model.rules import CLIENTS_GROUP

from vtopo.reports import DeployReport, LabEntry, LabStatus, LinkRate, PartState, Progress, user_name

if TYPE_CHECKING:  # the model loads when a request carries part of a lab (`vtopo status` needs none)
    from vtopo.model.impairment_change import ImpairmentChange

VERSION = 2  # 2: link rates sent once per rate with the links that have it (LinkRatesChanged)
GROUP = CLIENTS_GROUP
SOCKET = Path(os.environ.get("VTOPO_AGENT_SOCKET", "/run/vtopo/agent.sock"))
PID_FILE = SOCKET.with_name("agent.pid")
MAX_DIGITS = 20  # longer integers are refused before Python converts them, as in a lab file
TERMINAL_SIZE = range(1 << 16)  # a terminal's rows or columns, as the kernel's struct winsize holds them


class ProtocolError(Exception):
    """A message that is not a valid line of this protocol."""


def not_the_owner(lab: str, owner: int, action: str) -> str:
    """Why a member of the group may not `action` another member's lab."""
    name = user_name(owner)
    return f"lab {lab} belongs to {name}; only {name} or root may {action} it"


def refusal(user: str) -> str:
    """The one line a caller outside the group gets, from the agent or, when the socket's mode stops it first,
    from the client."""
    return (f"{user} may not use the vtopo agent: only root and members of the {GROUP} group may. Ask an "
            f"administrator to run `usermod -aG {GROUP} {user}`, then log out and in again")


class Message:
    """A line of this protocol. Each kind of line is a dataclass below, named by `type`."""

    type: ClassVar[str]
    __dataclass_fields__: ClassVar[dict[str, Any]]


A = TypeVar("A")


class Request(Message, Generic[A]):
    """The line a client opens a connection with: one verb. `A` is what its Result's data holds: a dataclass, the
    dict the agent made (a record, a running state), or None when the Result only ends what the verb streamed."""

    answer: ClassVar[Any] = None  # A, as the request type's declaration names it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is Request:
                (cls.answer,) = typing.get_args(base)


@dataclass
class Consent:
    """What the user allows beyond the lab's own objects, as the trust rules name it (never the lab file)."""

    host_devices: list[str] = field(default_factory=list)  # root's to give, or listed in the agent's configuration
    images: list[str] = field(default_factory=list)  # absolute paths; the caller must be able to read each
    startup_commands: list[str] = field(default_factory=list)  # nodes; the commands run as the lab's owner
    site: str = ""  # of a lab spread over sites, the site whose part this host deploys ("" this machine's)
    tunnel_vnis: list[int] = field(default_factory=list)  # [first, last] its tunnels' VNIs come from; [] the agent's


class NodeAction(StrEnum):
    """What `vtopo node` does to a node of a running lab (vtopo.lab_operations.operate_node)."""

    START = "start"
    STOP = "stop"
    RESTART = "restart"


class LinkAction(StrEnum):
    """What `vtopo link` does to a link of a running lab: take it down, bring it up, or set its impairment."""

    UP = "up"
    DOWN = "down"
    SET = "set"


# ---------------------------------------------------------------- what requests answer, as Result.data


@dataclass
class Said:
    """What a change to a running lab did, or with `explain` the script it would run."""

    said: str


@dataclass
class Destroyed:
    lab: str
    ops: int  # how many the destroy undid
    seconds: float


@dataclass
class Statuses:
    labs: list[LabStatus]
    differences: list[str]  # with `verify`, where the agent's record said otherwise than the host


@dataclass
class Labs:
    labs: list[LabEntry]


@dataclass
class Cancelled:
    cancelled: bool  # whether a deploy was running to cancel


@dataclass
class ImageEntry:
    """An image of the store as `vtopo image` shows it: its reference, manifest digest, and whose labs may run it."""

    reference: str
    digest: str
    who_may_use: str


@dataclass
class Images:
    images: list[ImageEntry]


@dataclass
class CleanupSummary:
    labs: list[str]  # labs destroyed from their journals
    strays: list[str]  # tagged objects found without a journal, removed
    errors: list[str]


# ---------------------------------------------------------------- requests


@dataclass
class DeployRequest(Request[DeployReport]):
    type: ClassVar[str] = "deploy"
    document: str  # the .vtopo file's text
    consent: Consent = field(default_factory=Consent)
    update: bool = False  # apply only what an edit adds to the running lab
    source: str = ""  # where the client read the document, shown by status; never opened
    every_step: bool = True  # a progress event per operation; False: only each stage's first, and what nodes print


@dataclass
class DestroyRequest(Request[Destroyed]):
    type: ClassVar[str] = "destroy"
    lab: str
    every_step: bool = True


@dataclass
class StatusRequest(Request[Statuses]):
    """Each lab's state as the agent's record has it; with `verify`, as a probe of the host finds it, and where the
    record said otherwise (Result.data "differences")."""

    type: ClassVar[str] = "status"
    lab: str = ""  # "" for every lab
    verify: bool = False


@dataclass
class FollowRequest(Request[None]):
    """Follow a lab of the caller's: a `LabsListed` and a `LabState` now, then each change as the agent hears of it
    (from the kernel, the lab's processes, any client's request), until the client closes the connection."""

    type: ClassVar[str] = "follow"
    lab: str


@dataclass
class RecordRequest(Request[dict[str, Any]]):
    """How a lab is deployed (its topology, the host's facts and the consent it was deployed with, as in its record),
    for its owner's client to compile the lab it measures, checks or captures on. Records are root's alone."""

    type: ClassVar[str] = "record"
    lab: str


class PartRequest(Request[Said]):
    """A change to nodes or links of a running lab, whose ends its fields `naming_parts` name (NODE or NODE:PORT). On
    a lab spread over sites, the agent of each site they run on does it (vtopo.sites.spread_operations.SitesOperator,
    which declares no verb of its own: a new request of this kind goes over sites as it is)."""

    lab: str
    naming_parts: ClassVar[tuple[str, ...]]

    @property
    def parts(self) -> list[str]:
        return [getattr(self, name) for name in self.naming_parts]


@dataclass
class NodeRequest(PartRequest):
    """Start, stop or restart a node of a running lab; with `explain`, only say the script it would run."""

    type: ClassVar[str] = "node"
    naming_parts: ClassVar[tuple[str, ...]] = ("node",)
    lab: str
    node: str
    action: NodeAction
    explain: bool = False


@dataclass
class LinkRequest(PartRequest):
    """Take the link between nodes a and b of a running lab down or up, or set its impairment (`change`, its four
    values on the line as they always were); with `explain`, only say the script it would run."""

    type: ClassVar[str] = "link"
    naming_parts: ClassVar[tuple[str, ...]] = ("a", "b")
    lab: str
    a: str
    b: str
    action: LinkAction
    rate_mbit: float | None = None
    delay_ms: float | None = None
    jitter_ms: float | None = None
    loss_pct: float | None = None
    explain: bool = False

    @classmethod
    def setting(cls, lab: str, a: str, b: str, change: ImpairmentChange, explain: bool = False) -> LinkRequest:
        return cls(lab, a, b, LinkAction.SET, change.rate_mbit, change.delay_ms, change.jitter_ms, change.loss_pct,
                   explain)

    @property
    def change(self) -> ImpairmentChange:
        from vtopo.model.impairment_change import ImpairmentChange

        return ImpairmentChange(self.delay_ms, self.jitter_ms, self.loss_pct, self.rate_mbit)


@dataclass
class SaveRequest(Request[dict[str, Any]]):
    """Read what a running lab's nodes have become (routers' running configurations, containers' addresses and
    routes) into its record, and send it back (vtopo.saving.RunningState) for the client to write into the file. With
    `explain`, only the script of the commands that read it, as {"script": TEXT} (vtopo.saving.explain_save)."""

    type: ClassVar[str] = "save"
    lab: str
    explain: bool = False


@dataclass
class RestoreRequest(Request[dict[str, Any]]):
    """Put a running lab back as a checkpoint of it has it, changing only what differs (vtopo.checkpoints.restore);
    `checkpoint` is its JSON text, as the lab's file holds it, checked again by the agent. With `explain`, the agent
    only says what that would change."""

    type: ClassVar[str] = "restore"
    lab: str
    checkpoint: str
    explain: bool = False


@dataclass
class ExecRequest(Request[None]):
    """Run `argv` inside a node as the caller. With `terminal`, the agent answers with a pty's master end
    (an `ExecStarted` event carrying the descriptor); otherwise the client sends its stdin, stdout and stderr
    with the request and the command uses them."""

    type: ClassVar[str] = "exec"
    lab: str
    node: str
    argv: list[str]  # [] for the caller's login shell
    terminal: bool = False
    term: str = ""  # $TERM for the command
    rows: int = 0  # the terminal's size, with `terminal`
    columns: int = 0

    def __post_init__(self) -> None:
        _check_terminal_size(self.type, self.rows, self.columns)


@dataclass
class CancelRequest(Request[Cancelled]):
    """Stop a deploy of the caller's lab after the operation in progress, and roll it back."""

    type: ClassVar[str] = "cancel"
    lab: str


@dataclass
class LabsRequest(Request[Labs]):
    """Every deployed lab's name, owner and what the agent is doing to it: a cheap list, for every member."""

    type: ClassVar[str] = "labs"


@dataclass
class ImageLoadRequest(Request[ImageEntry]):
    """Load an OCI or docker archive into the caller's own image store (root's: the shared one). The archive comes
    open with this line (SCM_RIGHTS), opened by the caller's own process, which read its format (`transport`:
    oci-archive or docker-archive) and the reference it names (`named`); `reference` is the one the caller gives it."""

    type: ClassVar[str] = "image-load"
    transport: str
    named: str = ""
    reference: str = ""


@dataclass
class ImagesRequest(Request[Images]):
    """The images the caller's labs may run: the shared ones and the caller's own (root: every image)."""

    type: ClassVar[str] = "images"


@dataclass
class ImageRemoveRequest(Request[ImageEntry]):
    """Take an image out of the caller's own store (root's: the shared one)."""

    type: ClassVar[str] = "image-rm"
    reference: str


@dataclass
class CleanupRequest(Request[CleanupSummary]):
    type: ClassVar[str] = "cleanup"


@dataclass
class ConsoleRequest(Request[None]):
    """A VM's serial console: the agent answers with a `ConsoleOpened` event carrying a socket connected to it."""

    type: ClassVar[str] = "console"
    lab: str
    node: str
    rows: int = 0  # the client's terminal, told to the built-in guest's shell when it waits at its prompt
    columns: int = 0

    def __post_init__(self) -> None:
        _check_terminal_size(self.type, self.rows, self.columns)


def _check_terminal_size(verb: str, rows: int, columns: int) -> None:
    for name, value in (("rows", rows), ("columns", columns)):
        if value not in TERMINAL_SIZE:
            raise ProtocolError(f"{verb}.{name} is a terminal's size, from 0 to {TERMINAL_SIZE[-1]}")


@dataclass
class CaptureRequest(Request[None]):
    """tcpdump on a link end, interface or bridge of a lab, named as `vtopo capture` names it ("c1:eth0", "br0").
    The agent finds the device itself and writes the pcap stream to the first descriptor sent with the request and
    tcpdump's messages to the second; a `CaptureCounters` line sent afterwards asks tcpdump for its counters."""

    type: ClassVar[str] = "capture"
    lab: str
    target: str
    filter: str = ""  # a tcpdump filter expression
    count: int = 0  # stop after this many packets; 0 for no limit


@dataclass
class LinkRatesRequest(Request[None]):
    """The traffic on each link of a running lab, from its interface counters, read by the agent (the owner cannot
    enter its namespaces) every `every_s` seconds, until the client closes the connection: a `LinkRatesChanged` whenever
    a rate changed (vtopo.reports.RateMeter), every link's in the first, and nothing while no link carries traffic."""

    type: ClassVar[str] = "link-rates"
    lab: str
    every_s: float = 1.0


@dataclass
class CaptureCounters(Message):
    """Sent during a capture: tcpdump writes its packet and drop counters to its messages (SIGUSR1)."""

    type: ClassVar[str] = "capture-counters"


# ---------------------------------------------------------------- answers


@dataclass(frozen=True)
class ProgressEvent(Progress, Message):
    """A `Progress` of the agent's job, as it goes over the socket."""

    type: ClassVar[str] = "progress"


@dataclass
class ExecStarted(Message):
    """The command runs; the pty's master end comes with this line (SCM_RIGHTS)."""

    type: ClassVar[str] = "exec-started"


@dataclass
class LinkRatesChanged(Message):
    """The links whose rate changed since the previous reading, by rate: each of `links[i]` now carries `rates[i]`,
    [bits/s, packets/s], both directions added. A packet flooded through a switch gives its thousand links one rate,
    sent once with their ids (2,000 links' rates every second cost the agent 1.8 ms to write a link at a time)."""

    type: ClassVar[str] = "link-rates-changed"
    rates: list[list[float]]
    links: list[list[str]]

    @classmethod
    def of(cls, changes: dict[str, LinkRate]) -> LinkRatesChanged:
        by_rate: dict[LinkRate, list[str]] = {}
        for link, rate in changes.items():
            by_rate.setdefault(rate, []).append(link)
        return cls(list(map(list, by_rate)), list(by_rate.values()))

    def changes(self) -> dict[str, LinkRate]:
        """Each link's new rate; a rate that is no pair of numbers is left out."""
        return {link: LinkRate(*rate) for rate, links in zip(self.rates, self.links) if len(rate) == 2
                for link in links}


@dataclass
class LabsListed(Message):
    """The running labs, whoever owns them, and what the agent does to each: sent to a follower when it changes."""

    type: ClassVar[str] = "labs-listed"
    labs: list[LabEntry]


@dataclass
class LabState(Message):
    """The followed lab's whole state; None while no lab of that name is deployed, or it is not the follower's."""

    type: ClassVar[str] = "lab-state"
    status: LabStatus | None


@dataclass
class PartsChanged(Message):
    """The nodes and links of the followed lab whose state changed, and the lab's state after the change."""

    type: ClassVar[str] = "parts-changed"
    lab: str
    state: str
    nodes: list[PartState]
    links: list[PartState]


@dataclass
class ConsoleOpened(Message):
    """A socket connected to the VM's serial console comes with this line (SCM_RIGHTS). For an exec, the client
    types the command there (vtopo.serial_console); without a command, it attaches to the console."""

    type: ClassVar[str] = "console-opened"


@dataclass
class Result(Message):
    """The end of an answer. `code` is the exit status the CLI returns; `errors` are lines for stderr and
    `data` the verb's typed result as JSON (decoded by the client)."""

    type: ClassVar[str] = "result"
    code: int
    errors: list[str] = field(default_factory=list)
    details: str = ""  # what `-v` adds to a failed deploy
    data: dict[str, Any] = field(default_factory=dict)


def _verbs(base: type[Message]) -> list[type[Message]]:
    """Each request type under `base`: those that name a verb (`type`), not the kinds of request they share."""
    return [verb for cls in base.__subclasses__() for verb in ([cls] if "type" in vars(cls) else []) + _verbs(cls)]


REQUESTS: dict[str, type[Message]] = {cls.type: cls for cls in _verbs(Request)}
DURING_CAPTURE: dict[str, type[Message]] = {CaptureCounters.type: CaptureCounters}
ANSWERS: dict[str, type[Message]] = {cls.type: cls for cls in (ProgressEvent, ExecStarted, ConsoleOpened,
                                                                LinkRatesChanged, LabsListed, LabState, PartsChanged,
                                                                Result)}


def encode(message: Message) -> bytes:
    """One line. The message's own fields as they are, and a dataclass inside one as an object (`_object_of`)."""
    fields_and_values = {"v": VERSION, "type": message.type, **vars(message)}
    return (json.dumps(fields_and_values, ensure_ascii=False, default=_object_of) + "\n").encode()


def _object_of(value: Any) -> dict[str, Any]:
    """A dataclass's fields by name, as they are: the encoder writes each that is a dataclass in turn. asdict would
    copy the whole tree first: a status of 900 containers (its parts, and the lab's document) was 0.78 million objects,
    40 ms of the agent's, whose survivors then had the cycle collector walk the agent's heap."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    raise TypeError(f"{type(value).__name__} does not go over the agent's socket")


def decode(line: bytes, allowed: dict[str, type[Message]]) -> Message:
    """One line as the message it names, each field checked against its declared type."""
    try:
        raw = json.loads(line, parse_int=_integer)
    except RecursionError:
        raise ProtocolError("not a JSON line: it is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        raise ProtocolError(f"not a JSON line: {error}") from None
    if not isinstance(raw, dict):
        raise ProtocolError("a message is a JSON object")
    if raw.pop("v", None) != VERSION:
        raise ProtocolError(f"this agent speaks protocol version {VERSION}; update vtopo on both sides")
    cls = allowed.get(raw.pop("type", None))
    if cls is None:
        raise ProtocolError(f"unknown message type; expected one of: {', '.join(sorted(allowed))}")
    message: Message = _build(cls, raw, cls.type)
    if isinstance(message, Request):  # each field of its type now: none nests deeper than a list in an object
        _without_nul(raw, cls.type)
    return message


def _without_nul(value: Any, where: str) -> None:
    """No text of a request holds a NUL: no program the agent starts, nor any path, takes one. (An answer may: what a
    node's startup command printed.)"""
    if isinstance(value, str):
        if "\0" in value:
            raise ProtocolError(f"{where} may not hold a NUL character")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _without_nul(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _without_nul(item, f"{where}.{key}")


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number has more than {MAX_DIGITS} digits")
    return int(text)


def read_as(cls: type[Any], raw: Any) -> Any:
    """A result's `data` (or part of it) as the dataclass it was written from."""
    return _build(cls, raw, cls.__name__)


def result_of(request: Request[A], answer: A, code: int = 0) -> Result:
    """The Result that carries a request's answer."""
    if answer is None:
        return Result(code)
    return Result(code, data=answer if isinstance(answer, dict) else _object_of(answer))


def answer_of(request: Request[A], data: dict[str, Any]) -> A:
    """A request's answer, from the data of the Result the agent sent for it, each field checked."""
    return _answer(request.answer, data)


def _answer(shape: Any, data: dict[str, Any]) -> Any:
    if shape is type(None):
        return None
    return data if typing.get_origin(shape) is dict else read_as(shape, data)


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The field types of a message class, resolved once (a deploy's answer has one event per operation)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    """A dataclass's field names, read once (a status has a part for each node and link)."""
    if cls not in _FIELD_NAMES:
        _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return _FIELD_NAMES[cls]


def _build(cls: type[Any], raw: Any, where: str) -> Any:
    if not isinstance(raw, dict):
        raise ProtocolError(f"{where} must be an object")
    hints = _hints(cls)
    unknown = set(raw).difference(_field_names(cls))
    if unknown:
        raise ProtocolError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    values = {name: _checked(hints[name], value, f"{where}.{name}") for name, value in raw.items()}
    try:
        return cls(**values)
    except TypeError as error:
        raise ProtocolError(f"{where}: {error}") from None


def _checked(hint: Any, value: Any, where: str) -> Any:
    if type(value) is hint and hint in (str, int, bool):  # most fields: a status has thousands
        return value
    if isinstance(value, float) and not math.isfinite(value):  # NaN, Infinity or 1e999: no field takes one
        raise ProtocolError(f"{where} must be a finite number, not {value}")
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return _checked(option, value, where)
            except ProtocolError:
                continue
        raise ProtocolError(f"{where} has the wrong type")
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ProtocolError(f"{where} must be a list")
        if item is str and all(type(v) is str for v in value):  # thousands of ids, checked at once
            return value
        return [_checked(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where} must be an object")
        return value
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        return _build(hint, value, where)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise ProtocolError(f"{where} is one of {', '.join(member.value for member in hint)}") from None
    if hint is Any:
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise ProtocolError(f"{where} must be {getattr(hint, '__name__', hint)}")
    return value
