"""The two ends of a TCP request/response test (like netperf TCP_RR), standard library only.

The runner sends this file's source to `python3 -c` inside each node, so the nodes need Python
but not vtopo. It also runs as `python -m vtopo.measure.rr_agent server|client ...`.

    server [--port P] [--accept-timeout S]
        listens (port 0: any free one), prints "LISTENING <port>", echoes every message of one
        connection back, exits when the client closes it.
    client ADDRESS PORT [--duration S] [--interval S] [--size N]
        sends a message, waits for the whole echo, repeats; prints one JSON line per interval
        {"start", "end", "transactions"} and a last one {"done": true, "transactions", "seconds",
        "latency_us_min", "latency_us_mean", "latency_us_max"}.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import time


def _print(obj: object) -> None:
    sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    sys.stdout.flush()


def _listener(port: int) -> socket.socket:
    try:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("::", port))
    except OSError:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("0.0.0.0", port))
    sock.listen(1)
    return sock


def _recv_exactly(conn: socket.socket, size: int) -> bool:
    got = 0
    while got < size:
        chunk = conn.recv(size - got)
        if not chunk:
            return False
        got += len(chunk)
    return True


def serve(port: int, accept_timeout_s: float) -> int:
    listener = _listener(port)
    _print(f"LISTENING {listener.getsockname()[1]}")
    listener.settimeout(accept_timeout_s)
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        _print("ERROR no client connected")
        return 1
    listener.close()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return 0
            conn.sendall(data)


def client(address: str, port: int, duration_s: float, interval_s: float, size: int) -> int:
    try:
        conn = socket.create_connection((address, port), timeout=5.0)
    except OSError as e:
        _print({"error": f"cannot connect to {address} port {port}: {e.strerror or e}"})
        return 1
    conn.settimeout(10.0)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    message = b"x" * size
    clock = time.perf_counter
    t0 = clock()
    end = t0 + duration_s
    next_report = t0 + interval_s
    start_of_interval = t0
    in_interval = total = 0
    lat_min = float("inf")
    lat_max = 0.0
    with conn:
        now = t0
        while now < end:
            sent_at = now
            conn.sendall(message)
            if not _recv_exactly(conn, size):
                _print({"error": "the server closed the connection"})
                return 1
            now = clock()
            latency = now - sent_at
            lat_min = min(lat_min, latency)
            lat_max = max(lat_max, latency)
            in_interval += 1
            if now >= next_report:
                _print({"start": start_of_interval - t0, "end": now - t0, "transactions": in_interval})
                total += in_interval
                in_interval = 0
                start_of_interval = now
                next_report += interval_s
        if in_interval:
            _print({"start": start_of_interval - t0, "end": now - t0, "transactions": in_interval})
            total += in_interval
    seconds = now - t0
    _print({
        "done": True, "transactions": total, "seconds": seconds,
        "latency_us_min": lat_min * 1e6 if total else None,
        "latency_us_mean": seconds / total * 1e6 if total else None,
        "latency_us_max": lat_max * 1e6 if total else None,
    })
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rr_agent")
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--accept-timeout", type=float, default=30.0)
    c = sub.add_parser("client")
    c.add_argument("address")
    c.add_argument("port", type=int)
    c.add_argument("--duration", type=float, default=10.0)
    c.add_argument("--interval", type=float, default=1.0)
    c.add_argument("--size", type=int, default=1)
    args = parser.parse_args(argv)
    if args.role == "server":
        return serve(args.port, args.accept_timeout)
    return client(args.address, args.port, args.duration, args.interval, args.size)


if __name__ == "__main__":
    sys.exit(main())
