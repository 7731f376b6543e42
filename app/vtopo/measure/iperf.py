"""An iperf3 run between two nodes, with a sample per interval as it happens.

How the live samples and the final figures are obtained with iperf3 3.12 (which has no
--json-stream, and whose -J prints nothing until the test is over, --forceflush or not):

* the server runs in the destination as `iperf3 -s -1 -p PORT -f k --forceflush -i INTERVAL`,
  in text mode; its stream lines arrive one per interval and stream, and are summed here into
  one `IntervalSample` per interval and direction (the server's own [SUM] line lags a whole
  interval behind, so it is not used). "Server listening on PORT" tells that it is ready.
* the client runs in the source as `iperf3 -c ADDRESS -p PORT -J ...`; its JSON document is the
  final truth: sender and receiver totals of each direction, both CPU figures, and its own
  per-interval view, which completes the live samples at the end (forward TCP retransmits and
  cwnd are known by the client, the sender; reverse UDP loss too).

A node with a standing iperf3 server (a VM, whose guest always runs `iperf3 -s`) is measured
against that server: the client runs in text mode and is the only witness, live and at the end
(iperf_text.py).
"""
from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from typing import Unpack
from dataclasses import replace

from vtopo.kinds.contract import IPERF3_SERVER
from vtopo.measure.base import Cancelled, MeasureRun, Who
from vtopo.measure.iperf_parse import (LISTENING, ClientReport, IntervalAssembler, merge_intervals,
                                       parse_client_json)
from vtopo.measure.iperf_text import client_error, parse_client_text
from vtopo.measure.nodes import MeasureError, not_installed
from vtopo.measure.ports import release_port, reserve_port
from vtopo.measure.process import Child
from vtopo.measure.results import Direction, IntervalSample, IperfOptions, RunResult

IPERF3 = "iperf3"
SERVER_START_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_MS = 3000
REOPEN_WAIT_S = 10.0
"""How long a run waits for a standing iperf3 server that refused it: `iperf3 -s` closes its listening socket at
the end of each test and opens a new one for the next, which takes a guest under TCG a moment."""
REOPEN_POLL_S = 0.5
PORT_ATTEMPTS = 5


class IperfRun(MeasureRun[IntervalSample, RunResult, IperfOptions]):
    """One iperf3 measurement from `source` to `address` (which belongs to `destination`).

        run = IperfRun(MeasureEndpoint("h1", in_netns("lab-h1")), MeasureEndpoint("h2", in_netns("lab-h2")),
                       "10.0.0.2", IperfOptions(duration_s=5))
        for sample in run:            # one per interval (two with --bidir), as they arrive
            print(sample.end, sample.bits_per_second)
        print(run.result.mean_bits_per_second)
    """

    what = "iperf3"
    iperf3 = IPERF3  # the program, in the nodes

    def _default_options(self) -> IperfOptions:
        return IperfOptions()

    def _new_result(self, **who: Unpack[Who]) -> RunResult:
        return RunResult(options=self.options, **who)

    # -- the run ------------------------------------------------------------------------------

    def _measure(self) -> Iterator[IntervalSample]:
        self._check_options()
        if self._against_standing_server():
            yield from self._measure_against_standing_server()
        else:
            yield from self._measure_with_own_server()

    def _measure_with_own_server(self) -> Iterator[IntervalSample]:
        result = self._partial
        port = 0
        try:
            self._check_path(self.address)
            server, port = self._start_server()
            result.port = port
            client = self._start(self._client_argv(port), what=f"iperf3 client in {self.source.name}", lines=False)
            live: list[IntervalSample] = []
            for sample in self._follow(server, client):
                live.append(sample)
                result.intervals = list(live)
                yield sample
            if not self.cancelled:
                self._finish(client, live)
        finally:
            self._stop_children()
            if port:
                release_port(port)

    def _server_argv(self, port: int) -> list[str]:
        argv = [self.iperf3, "-s", "-1", "-p", str(port), "-f", "k", "--forceflush",
                "-i", str(self.options.interval_s)]
        return self.destination.argv(argv)

    def _client_argv(self, port: int) -> list[str]:
        argv = [self.iperf3, "-c", self.address, "-p", str(port), "-J",
                "--connect-timeout", str(CONNECT_TIMEOUT_MS), *self.options.client_args()]
        return self.source.argv(argv)

    def _start_server(self) -> tuple[Child, int]:
        where = self.destination.name
        for _ in range(PORT_ATTEMPTS):
            port = reserve_port()
            server = self._start(self._server_argv(port), what=f"iperf3 server in {where}", lines=True)
            seen: list[str] = []
            deadline = time.monotonic() + SERVER_START_TIMEOUT_S
            try:
                for line in self._lines(server, deadline, lambda: f"iperf3 server in {where} did not start listening "
                                        f"within {SERVER_START_TIMEOUT_S:.0f} s", poll_s=0.05):
                    seen.append(line)
                    if LISTENING.match(line):
                        return server, port
            except (Cancelled, MeasureError):
                server.stop()
                release_port(port)
                raise
            server.stop()
            release_port(port)
            text = " ".join(l.strip() for l in seen if l.strip())
            if "Address already in use" in text:
                continue
            raise MeasureError(not_installed(where, self.iperf3, text)
                               or f"iperf3 server in {where} exited at once: {text or 'no output'}")
        raise MeasureError(f"no free port for an iperf3 server in {where} after {PORT_ATTEMPTS} attempts")

    def _follow(self, server: Child, client: Child) -> Iterator[IntervalSample]:
        """Yield the server's interval samples until it exits; stop it if the client is gone for good."""
        assembler = IntervalAssembler(self.options)
        default: Direction = "reverse" if self.options.reverse else "forward"
        deadline = time.monotonic() + self.options.duration_s + 30.0
        client_gone_at: float | None = None
        accepted = False
        grace = 3.0 + self.options.interval_s
        while True:
            if self.cancelled:
                return
            try:
                line = server.next_line(timeout=0.1)
            except queue.Empty:
                now = time.monotonic()
                if client_gone_at is None and not client.running():
                    client_gone_at = now
                if client_gone_at is not None and (not accepted or now - client_gone_at > grace):
                    server.stop()  # the client failed to connect, or ended; the server would wait in vain
                if now > deadline:
                    raise MeasureError(
                        f"iperf3 between {self.source.name} and {self.destination.name} "
                        f"did not end {self.options.duration_s + 30:.0f} s after it started"
                    )
                continue
            if line is None:
                return
            accepted = accepted or line.startswith("Accepted connection")
            sample = assembler.feed(line, default)
            if sample is not None:
                yield sample

    def _finish(self, client: Child, live: list[IntervalSample]) -> None:
        result = self._partial
        if client.wait(timeout=5.0) is None:
            client.stop()
            raise MeasureError(f"iperf3 client in {self.source.name} did not finish after the server did")
        out, err = client.output()
        try:
            data = json.loads(out)
        except json.JSONDecodeError as e:
            detail = (err or out).strip().splitlines()
            raise MeasureError(not_installed(self.source.name, self.iperf3, err or out) or
                               f"iperf3 client in {self.source.name} gave no result: "
                               f"{detail[-1] if detail else 'no output'}") from e
        if data.get("error"):
            raise MeasureError(f"iperf3 client in {self.source.name} to {self.address}: {data['error']}")
        report = parse_client_json(data, self.options)
        self._record(replace(report, intervals=merge_intervals(live, report.intervals, self.options.interval_s)))

    def _record(self, report: ClientReport) -> None:
        result = self._partial
        result.intervals = report.intervals
        result.forward = report.forward
        result.reverse = report.reverse
        result.cpu_host = report.cpu_host
        result.cpu_remote = report.cpu_remote
        result.iperf_version = report.version
        result.status = "ok"

    # -- a node with a standing iperf3 server (a VM) ------------------------------------------

    def _against_standing_server(self) -> bool:
        """Whether the destination's standing server is used; MeasureError when neither way can run."""
        if not self.source.can_run:
            raise MeasureError(f"{self.source.cannot_run or f'vtopo cannot run commands in {self.source.name}'}; "
                               "so it cannot run the iperf3 client")
        if IPERF3_SERVER in self.destination.servers:
            return True
        if not self.destination.can_run:
            raise MeasureError(f"{self.destination.cannot_run}; and it has no iperf3 server that vtopo knows of")
        return False

    def _measure_against_standing_server(self) -> Iterator[IntervalSample]:
        result, options, address = self._partial, self.options, self.address
        self._check_path(address)
        port = self.destination.servers[IPERF3_SERVER]
        result.port = port
        argv = self.source.argv([self.iperf3, "-c", address, "-p", str(port), "-f", "k", "-V", "--forceflush",
                                "--connect-timeout", str(CONNECT_TIMEOUT_MS), *options.client_args()])
        reopened_by = time.monotonic() + REOPEN_WAIT_S
        while True:
            lines: list[str] = []
            live: list[IntervalSample] = []
            yield from self._client_lines(argv, lines, live)
            error = client_error(lines)
            if error is None or "Connection refused" not in error or live or time.monotonic() > reopened_by:
                break
            time.sleep(REOPEN_POLL_S)
        if error is not None:
            hint = f" (the iperf3 server in {self.destination.name} runs one test at a time)" if "busy" in error else ""
            raise MeasureError(f"iperf3 client in {self.source.name} to {self.destination.name} at {address} "
                               f"port {port}: "
                               f"{error}{hint}")
        report = parse_client_text(lines, options, live)
        if report.forward is None and report.reverse is None:
            last = next((l.strip() for l in reversed(lines) if l.strip()), "no output")
            raise MeasureError(not_installed(self.source.name, self.iperf3, "\n".join(lines))
                               or f"iperf3 client in {self.source.name} gave no summary: {last}")
        self._record(report)

    def _client_lines(self, argv: list[str], lines: list[str], live: list[IntervalSample]) -> Iterator[IntervalSample]:
        """Run the client against the standing server: its output lines, and the samples as they come."""
        options, result = self.options, self._partial
        client = self._start(argv, what=f"iperf3 client in {self.source.name}", lines=True)
        assembler = IntervalAssembler(options)
        default: Direction = "reverse" if options.reverse else "forward"
        deadline = time.monotonic() + options.duration_s + 30.0
        for line in self._lines(client, deadline, lambda: f"iperf3 from {self.source.name} to {self.destination.name} "
                                f"did not end {options.duration_s + 30:.0f} s after it started"):
            lines.append(line)
            sample = assembler.feed(line, default)
            if sample is not None:
                live.append(sample)
                result.intervals = list(live)
                yield sample
        client.wait(timeout=5.0)

