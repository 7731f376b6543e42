"""What every measurement run shares: iterate for samples as they arrive, then read `result`;
`cancel()` from any thread, at any moment."""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypedDict, TypeVar, Unpack

from vtopo.measure.nodes import MeasureEndpoint, MeasureError
from vtopo.measure.preflight import check_reachable
from vtopo.measure.process import Child
from vtopo.measure.record import RunRecord


class Options(Protocol):
    def problems(self) -> list[str]: ...


class Who(TypedDict):
    """Who measured what: the fields every result starts with."""

    source: str
    destination: str
    address: str
    lab: str
    path: str


S = TypeVar("S")
R = TypeVar("R", bound=RunRecord)
O = TypeVar("O", bound=Options)


class MeasureRun(Generic[S, R, O]):
    """A run is iterated once: `for sample in run: ...`, then `run.result` holds the outcome.

    Every run goes from `source` to `address` (which belongs to `destination`), with its options (the defaults
    without). `lab` and `path` are copied into the result for the history. With `preflight` (default) one ping
    checks that the address is reachable before the measurement starts.

    Iteration raises `MeasureError` if the run cannot start or fails; `result` is then a result
    with status "failed" (when there is enough to make one). After `cancel()` iteration simply
    ends and `result.status` is "cancelled". Stopping the iteration early (break, or closing the
    generator) ends the run's processes too.
    """

    what = "measurement"  # how messages name the run's options

    def __init__(self, source: MeasureEndpoint, destination: MeasureEndpoint, address: str, options: O | None = None,
                 *, lab: str = "", path: str = "", preflight: bool = True) -> None:
        self.source = source
        self.destination = destination
        self.address = address
        self.options: O = self._default_options() if options is None else options
        self.preflight = preflight
        self._partial = self._new_result(source=source.name, destination=destination.name, address=address,
                                         lab=lab, path=path)
        """The result as it fills in; it becomes `result` when the run ends, however it ends."""
        self._cancel = threading.Event()
        self._children: list[Child] = []
        self._children_lock = threading.Lock()
        self._result: R | None = None
        self._started = False
        self.pids: list[int] = []
        """Every process this run started (leaders of their own process groups), for checking."""

    # -- for callers --------------------------------------------------------------------------

    def __iter__(self) -> Iterator[S]:
        if self._started:
            raise RuntimeError("a measurement run can be iterated only once")
        self._started = True
        try:
            yield from self._samples()
        finally:
            self._stop_children()

    def run(self, on_sample: Callable[[S], None] | None = None) -> R:
        """Run to the end (blocking), calling `on_sample` for each sample; return the result."""
        for sample in self:
            if on_sample is not None:
                on_sample(sample)
        return self.result

    def cancel(self) -> None:
        """Stop the run now: its processes are ended by pid. Safe from any thread, and repeatable."""
        self._cancel.set()
        self._stop_children()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def result(self) -> R:
        if self._result is None:
            raise RuntimeError("the run has no result yet: iterate it first")
        return self._result

    @property
    def has_result(self) -> bool:
        return self._result is not None

    # -- for subclasses -----------------------------------------------------------------------

    def _samples(self) -> Iterator[S]:
        result = self._partial
        try:
            yield from self._measure()
            if self.cancelled:
                raise Cancelled()
        except Cancelled:
            result.status = "cancelled"
        except GeneratorExit:  # the caller stopped iterating: the run was cut short
            result.status = "cancelled"
            raise
        except MeasureError as e:
            result.status, result.error = "failed", str(e)
            raise
        except OSError as e:
            result.status, result.error = "failed", str(e)
            raise MeasureError(str(e)) from e
        finally:
            self._result = result

    def _default_options(self) -> O:
        raise NotImplementedError

    def _new_result(self, **who: Unpack[Who]) -> R:
        """An empty result of this run, naming who measured what (`who` holds RunRecord's fields)."""
        raise NotImplementedError

    def _measure(self) -> Iterator[S]:
        """Start the processes and yield samples as they come; raise MeasureError on failure."""
        raise NotImplementedError

    def _lines(self, child: Child, deadline: float, late: Callable[[], str], poll_s: float = 0.1) -> Iterator[str]:
        """`child`'s output lines until it ends. Raises Cancelled once the run is cancelled, and MeasureError with
        the message `late()` gives if `deadline` (on time.monotonic) passes first."""
        while True:
            if self.cancelled:
                raise Cancelled()
            try:
                line = child.next_line(timeout=poll_s)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise MeasureError(late()) from None
                continue
            if line is None:
                return
            yield line

    def _check_options(self) -> None:
        problems = self.options.problems()
        if problems:
            raise MeasureError(f"{self.what} options: " + "; ".join(problems))

    def _check_path(self, address: str) -> None:
        """The source has a route to `address`, and with preflight one ping reaches it."""
        self.source.check_address(address)
        if self.preflight:
            check_reachable(self.source, address, destination=self.destination.name)

    def _start(self, argv: list[str], *, what: str, lines: bool) -> Child:
        with self._children_lock:
            if self._cancel.is_set():
                raise Cancelled()
            child = Child(argv, what=what, lines=lines)
            self._children.append(child)
            self.pids.append(child.pid)
        return child

    def _stop_children(self) -> None:
        with self._children_lock:
            children = list(self._children)
        for child in children:
            child.stop()


class Cancelled(Exception):
    """Raised inside a run when it was cancelled before a process could start."""
