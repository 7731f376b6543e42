"""The capture file: scapy's pcapng writer, with the nanosecond timestamps tcpdump gives
(`--time-stamp-precision=nano`) and an interface block that says so (if_tsresol 9), and the whole blocks of a file
that is still being written."""
from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

from scapy.utils import RawPcapNgWriter

NANOSECONDS = 9
_IF_TSRESOL = 9  # the option code of an interface's timestamp resolution (10^-value seconds)
_IDB = 1  # the block type of an interface description


class NanosecondPcapNgWriter(RawPcapNgWriter):
    """Writes each packet's timestamp in nanoseconds since the epoch, as its interface block declares."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.tsresol = 10**NANOSECONDS

    def _write_block_idb(self, linktype: int, ifname: bytes | None = None) -> None:
        body = struct.pack("<HHI", linktype, 0, 262144)
        options = struct.pack("<HHB3x", _IF_TSRESOL, 1, NANOSECONDS) + struct.pack("<HH", 0, 0)  # then opt_endofopt
        self.f.write(self.build_block(struct.pack("<I", _IDB), body, options=options))

    def write_raw(self, data: bytes, seconds: int, fraction: int, nano: bool, wirelen: int) -> None:
        """One packet as tcpdump's pcap stream gave it: `fraction` of a second in ns (`nano`) or in µs."""
        when = Fraction(seconds) + Fraction(fraction, 10**9 if nano else 10**6)  # exact: a float has 0.2 µs left
        self.write_packet(data, sec=when, caplen=len(data), wirelen=wirelen)  # type: ignore[arg-type]


def copy_head(source: Path, target: Path, length: int) -> None:
    """The first `length` bytes of a capture file, which another process may be appending to: its blocks up to
    there are whole."""
    with source.open("rb") as reading, target.open("wb") as writing:
        left = length
        while left and (chunk := reading.read(min(left, 1 << 20))):
            writing.write(chunk)
            left -= len(chunk)
