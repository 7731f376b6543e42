"""Nodes from images: N nodes of vtopo's toolbox image on one bridge, deployed through the agent, against the same
engine (runc) running N containers of that image with no network, each on its own overlay of the same unpacked image,
in one alternating run. Prints vtopo's time, the baseline's and their ratio (target: at most 1.3x), and the memory
each image node takes against a namespace-only node's. Asserts no times."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_agent_bench import through_agent
from benchmarks.test_deploy_bench import seconds, star
from image_labs import TOOLBOX, own_images
from vtopo.client.agent_client import AgentClient
from vtopo.host import image_store, syscalls
from vtopo.host.syscalls import MS_NODEV, MS_NOSUID
from vtopo.lab_terms import Trust
from vtopo.model import io

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

COUNT = int(os.environ.get("VTOPO_IMAGE_BENCH_COUNT", "100"))
TRIALS = 3
BASELINE = Path("/run/vtopo-bench-runc")


def image_star(count: int, image: str) -> str:
    topology = star(count)
    topology.name, topology.prefix = f"images{count}", "vi"
    for node in topology.nodes.values():
        if node.kind == "container" and image:
            node.settings["image"] = image
    return io.dumps(topology)


def baseline(count: int) -> float:
    """runc alone: N containers of the image, each on an overlay of its own over the same unpacked root on a tmpfs
    of its own, in namespaces runc makes (no network wired, no user namespace), started detached."""
    found = image_store.resolve(TOOLBOX, 0)
    assert found is not None
    image = image_store.unpacked(found, None)
    state = f"--root={BASELINE}/state"
    started = time.perf_counter()
    try:
        for index in range(count):
            bundle = BASELINE / f"c{index}"
            bundle.mkdir(parents=True)
            syscalls.mount("tmpfs", str(bundle), "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=0711")
            for name in ("upper", "work", "root"):
                (bundle / name).mkdir()
            syscalls.mount("overlay", str(bundle / "root"), "overlay", MS_NOSUID | MS_NODEV,
                           f"lowerdir={image.rootfs},upperdir={bundle}/upper,workdir={bundle}/work")
            subprocess.run(["runc", "spec", "--bundle", str(bundle)], check=True, capture_output=True)
            spec = json.loads((bundle / "config.json").read_text())
            spec["root"] = {"path": "root", "readonly": False}
            spec["process"].update(terminal=False, args=image.process.get("args"), env=image.process.get("env"))
            spec["linux"]["resources"] = {"memory": {"limit": 256 << 20}, "pids": {"limit": 1024}}
            spec["linux"]["cgroupsPath"] = f"/vtopo-bench/c{index}"
            (bundle / "config.json").write_text(json.dumps(spec))
            subprocess.run(["runc", state, "run", "--detach", f"--bundle={bundle}", f"bench-{index}"], check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started
    finally:
        for index in range(count):
            subprocess.run(["runc", state, "delete", "--force", f"bench-{index}"], check=False, capture_output=True)
            syscalls.umount(str(BASELINE / f"c{index}" / "root"))
            syscalls.umount(str(BASELINE / f"c{index}"))
        shutil.rmtree(BASELINE, ignore_errors=True)
        for controller in Path("/sys/fs/cgroup").iterdir():
            if (controller / "vtopo-bench").is_dir():
                (controller / "vtopo-bench").rmdir()


def available_kib() -> int:
    return next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemAvailable:"))


def memory_per_node(client: AgentClient, text: str, name: str, count: int) -> float:
    """MiB the host's available memory drops by per node while the lab runs (settled for a few seconds)."""
    before = available_kib()
    client.deploy(text, Trust(), progress=lambda event: None)
    try:
        time.sleep(3)
        return (before - available_kib()) / 1024 / count
    finally:
        client.destroy(name)


def test_image_nodes_through_the_agent_against_runc_alone() -> None:
    own_images()
    images, plain = image_star(COUNT, TOOLBOX), image_star(COUNT, "")
    name = f"images{COUNT}"
    runs: dict[str, list[float]] = {"vtopo": [], "runc": []}
    with Agent.running() as agent:
        client = AgentClient(agent.socket)
        baseline(1)  # the image unpacked once, as a deploy would have it
        for _ in range(TRIALS):  # alternate, so that both see the same machine
            runs["vtopo"].append(through_agent(client, images, name))
            runs["runc"].append(baseline(COUNT))
        per_image, per_plain = memory_per_node(client, images, name, COUNT), memory_per_node(client, plain, name, COUNT)
    ours, theirs = statistics.median(runs["vtopo"]), statistics.median(runs["runc"])
    print(f"\n{COUNT} toolbox image nodes on one bridge (median of {TRIALS}; load {os.getloadavg()[0]:.2f}):")
    for key, taken in runs.items():
        print(f"  {key:<6} {seconds(statistics.median(taken)):>8}   {' '.join(seconds(t) for t in taken)}")
    print(f"  vtopo / runc alone {ours / theirs:.2f} (target <= 1.30)")
    print(f"  memory per node: {per_image:.1f} MiB from the image, {per_plain:.1f} MiB namespace-only")
    write_fragment("images", "\n".join([
        "### Nodes from images", "", machine_facts(), "",
        f"{COUNT} nodes of vtopo's toolbox image on one bridge, deployed through `vtopo agent`, against runc alone "
        f"starting {COUNT} containers of the same image one after another (each on its own overlay, no network; vtopo "
        f"starts its image nodes a few at a time), alternating, median of {TRIALS}. Target: at most 1.3x.", "",
        "| N | vtopo, through the agent | runc alone | vtopo / runc | memory per image node | per namespace node |",
        "|---|---|---|---|---|---|",
        f"| {COUNT} | {seconds(ours)} | {seconds(theirs)} | {ours / theirs:.2f}x | {per_image:.1f} MiB | "
        f"{per_plain:.1f} MiB |"]))
