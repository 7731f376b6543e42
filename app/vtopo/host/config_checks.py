"""A node's configuration given to the program that will run it, in a dry run, before anything is applied: what it
refuses becomes a problem with the program's own words and line number (FRR's `vtysh -C -f`). A line the program would
skip while loading the rest (as FRR's `vtysh -b` does) is a warning naming it; anything else it refuses is an error.

The program reads text a lab's author or a member wrote, and such text is code to it (vtysh's `output file`, `copy`):
run as root, it never reads any. Root drops to who the lab's nodes are on the host (the member, or the lab user of
root's labs), and to nobody for a lab with none."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable

from vtopo.kinds.contract import GeneratesConfig, NodeContext
from vtopo.kinds.running import ConfigCheck
from vtopo.model.problems import Problem, Severity
from vtopo.privileges import drop_privileges

CHECK_SECONDS = 30.0
NOBODY = "nobody"
REFUSAL = re.compile(r"line (\d+): (.*)")
NODE_NUMBER = re.compile(r"\[\d+\]")  # the parser's node number in "% Unknown command[41]: ..." says nothing to a user


def lab_config_problems(nodes: Iterable[tuple[NodeContext[Any], str]]) -> list[Problem]:
    """`config_problems` of each (node, path), node by node, with the nodes' dry runs run side by side, one per
    core: each is a program busy on its own (FRR's vtysh takes ~30 ms), and a lab has several."""
    nodes = list(nodes)
    with ThreadPoolExecutor(max_workers=max(1, min(len(nodes), os.cpu_count() or 1))) as pool:
        return [problem for found in pool.map(lambda both: config_problems(*both), nodes) for problem in found]


def config_problems(node: NodeContext[Any], path: str) -> list[Problem]:
    """What the host's programs refuse in the configurations of `node` (at `path` in the lab file); nothing where the
    program is not installed."""
    problems: list[Problem] = []
    if not isinstance(node.kind, GeneratesConfig):
        return problems
    for check in node.kind.config_checks(node):
        if shutil.which(check.argv[0]) is None:
            continue
        where = f"{path}.settings.{check.setting}" if check.setting else ""
        for number, message in refusals(check, node.lab.trust.owner.ids):
            skipped = check.skips_lines and number > 0
            problems.append(Problem(message, node.subject, where, node.node.id,
                                    Severity.WARNING if skipped else Severity.ERROR))
    return problems


def _reader(ids: tuple[int, int] | None) -> tuple[int, int] | None:
    """Who runs a check: nobody but `ids` (or nobody at all) when this process is root; itself otherwise (None)."""
    if os.geteuid() != 0:
        return None
    if ids is not None:
        return ids
    nobody = pwd.getpwnam(NOBODY)
    return nobody.pw_uid, nobody.pw_gid


def refusals(check: ConfigCheck, ids: tuple[int, int] | None) -> list[tuple[int, str]]:
    """Each line of `check.text` its program refuses, as (N, "FRR refuses line N (TEXT): MESSAGE") or, where the
    program skips such lines, "FRR skips line N (TEXT): MESSAGE; it loads the rest"; and (0, what it said) when it
    refuses the text with no line. Run as `ids` (who the lab's nodes are) or, with none, as nobody when this process
    is root."""
    reader = _reader(ids)
    with tempfile.TemporaryDirectory(prefix="vtopo-config-") as directory:
        file = Path(directory, check.file_name)
        file.write_text(check.text)
        for name, content in check.helpers:
            Path(directory, name).write_text(content)
        argv = [word.replace("{file}", str(file)).replace("{dir}", directory) for word in check.argv]
        if reader is not None:
            for entry in (directory, *(str(p) for p in Path(directory).iterdir())):
                os.chown(entry, *reader, follow_symlinks=False)
            argv = [*drop_privileges(str(reader[0]), (), str(reader[1])), *argv]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=directory,
                                  timeout=CHECK_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return [(0, f"{check.what} did not finish checking its configuration within {CHECK_SECONDS:g} s")]
    lines = check.text.splitlines()
    found = []
    for said in (done.stdout + done.stderr).splitlines():
        match = REFUSAL.match(said.strip())
        if match is None:
            continue
        number = int(match.group(1))
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        said_of_it = NODE_NUMBER.sub('', match.group(2)).split(':')[0].strip()
        found.append((number, f"{check.what} skips line {number} of its configuration ({text!r}): {said_of_it}; it "
                              "loads the rest" if check.skips_lines else
                              f"{check.what} refuses line {number} of its configuration ({text!r}): {said_of_it}"))
    if done.returncode != 0 and not found:
        found.append((0, f"{check.what} refuses its configuration: {(done.stderr or done.stdout).strip()[-300:]}"))
    return found
