"""A node's configuration given to the program that will run it, in a dry run, before anything is applied: what it
refuses becomes a problem with the program's own words and line number (FRR's `vtysh -C -f`)."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from vtopo.kinds.contract import ConfigCheck, NodeContext
from vtopo.model.problems import Problem

CHECK_SECONDS = 30.0
REFUSAL = re.compile(r"line (\d+): (.*)")
NODE_NUMBER = re.compile(r"\[\d+\]")  # the parser's node number in "% Unknown command[41]: ..." says nothing to a user


def config_problems(node: NodeContext[Any], path: str) -> list[Problem]:
    """What the host's programs refuse in the configurations of `node` (at `path` in the lab file); nothing where the
    program is not installed."""
    problems = []
    for check in node.kind.config_checks(node):
        if shutil.which(check.argv[0]) is None:
            continue
        where = f"{path}.settings.{check.setting}" if check.setting else ""
        problems += [Problem(message, node.subject, where, node.node.id) for message in refusals(check)]
    return problems


def refusals(check: ConfigCheck) -> list[str]:
    """Each line of `check.text` its program refuses, as "FRR refuses line N (TEXT): MESSAGE"."""
    with tempfile.TemporaryDirectory(prefix="vtopo-config-") as directory:
        file = Path(directory, check.file_name)
        file.write_text(check.text)
        for name, content in check.helpers:
            Path(directory, name).write_text(content)
        argv = [word.replace("{file}", str(file)).replace("{dir}", directory) for word in check.argv]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=directory,
                                  timeout=CHECK_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return [f"{check.what} did not finish checking its configuration within {CHECK_SECONDS:g} s"]
    lines = check.text.splitlines()
    found = []
    for said in (done.stdout + done.stderr).splitlines():
        match = REFUSAL.match(said.strip())
        if match is None:
            continue
        number = int(match.group(1))
        text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        found.append(f"{check.what} refuses line {number} of its configuration ({text!r}): "
                     f"{NODE_NUMBER.sub('', match.group(2)).split(':')[0].strip()}")
    if done.returncode != 0 and not found:
        found.append(f"{check.what} refuses its configuration: {(done.stderr or done.stdout).strip()[-300:]}")
    return found
