"""Put the fragments `make bench` wrote (docs/bench/*.md) into README.md's performance section.

The section lies between the two marker lines below; everything between them is replaced, so no figure in it
is typed by hand. Fragments appear in FRAGMENTS order; a benchmark that did not run keeps no place.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FRAGMENTS = ("deploy", "operate", "restore", "agent", "live", "designer-live", "startup", "gui", "labels", "drag",
             "explain-stall", "ovs", "vlans", "images", "measure", "sites", "router-memory", "grade")
START = "<!-- make bench writes this section: start -->"
END = "<!-- make bench writes this section: end -->"


def main() -> int:
    text = README.read_text()
    if START not in text or END not in text:
        print(f"bench_readme: {README} has no {START!r} ... {END!r} section", file=sys.stderr)
        return 1
    parts = [(ROOT / "docs" / "bench" / f"{name}.md") for name in FRAGMENTS]
    body = "\n\n".join(path.read_text().strip() for path in parts if path.exists())
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    README.write_text(f"{head}{START}\n{body}\n{END}{tail}")
    print(f"bench_readme: {README.name} now shows {', '.join(p.stem for p in parts if p.exists()) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
