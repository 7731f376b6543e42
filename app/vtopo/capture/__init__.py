"""Live packet capture on a deployed lab's links, decoded for display. No Qt."""
from vtopo.capture.decode import Layer, PacketSummary, RawPacket, hex_dump, layers, summarize
from vtopo.capture.engine import STOPPING_SIGNALS, Capture, stream_pcap
from vtopo.capture.target import CaptureError, CaptureTarget, link_targets, path_targets, resolve

__all__ = ["STOPPING_SIGNALS", "Capture", "CaptureError", "CaptureTarget", "Layer", "PacketSummary", "RawPacket", "hex_dump", "layers",
           "link_targets", "path_targets", "resolve", "stream_pcap", "summarize"]
