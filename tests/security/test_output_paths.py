"""Issue 26, attack 7: a path taken from a request never decides where vtopo writes. A member's client names the
lab's source when it deploys, and so may name any path; root's `vtopo iperf --save` and `vtopo experiment` on that lab
used to write the history beside it (/etc/x.vtopo -> /etc/x.measure.json). Histories and experiment outputs go to the
writer's own data directory (VTOPO_DATA_DIR here, ~/.local/share/vtopo otherwise), or where -o says."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_process import Agent
from security.members import tiny_lab
from vtopo.measure import load_history
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "host-routed-bridges"
DEPLOY_WITH_SOURCE = ("import sys\nfrom pathlib import Path\nfrom vtopo.client.agent_client import AgentClient\n"
                      "from vtopo.lab_terms import Trust\n"
                      "AgentClient(Path(sys.argv[1])).deploy(sys.stdin.read(), Trust(), source=sys.argv[2])")


@pytest.fixture
def victim() -> Iterator[Path]:
    """A folder only root may write, which a lab's source label can name."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-victim-"))
    directory.chmod(0o755)
    yield directory
    for path in directory.iterdir():
        path.unlink()
    directory.rmdir()


def deploy_labelled(agent: Agent, user: str, document: str, source: str) -> None:
    """`user`'s own client deploys `document` and tells the agent its file was `source`."""
    done = subprocess.run(["runuser", "-u", user, "--", sys.executable, "-c", DEPLOY_WITH_SOURCE, str(agent.socket), source],
                          input=document, env=agent.env, capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("label", ["/etc/x.vtopo", "{victim}/x.vtopo", "{victim}/../{victim_name}/x.vtopo"])
def test_root_measuring_a_members_lab_writes_only_to_its_own_data_directory(users, victim: Path,  # noqa: F811
                                                                           data_home: Path, label: str) -> None:
    a = users["a"].pw_name
    source = label.format(victim=victim, victim_name=victim.name)
    before_etc = set(Path("/etc").iterdir())
    with Agent.running() as agent:
        deploy_labelled(agent, a, (TOPOLOGIES / f"{LAB}.vtopo").read_text(), source)
        try:
            saved = agent.vtopo(None, "iperf", LAB, "c1", "c2", "-t", "1", "--save")
            assert saved.returncode == 0, saved.stdout + saved.stderr
            history = data_home / "histories" / f"{LAB}.measure.json"
            assert f"saved in {history}" in saved.stderr
            assert [run.source for run in load_history(history)] == ["c1"]

            measured = agent.vtopo(None, "experiment", LAB, "--repeat", "1", "--warmup", "0", "--seconds", "1",
                                   timeout=240)
            assert measured.returncode == 0, measured.stdout + measured.stderr
            assert len(load_history(history)) == 3, "the experiment's two iperf3 runs joined the history"
            assert sorted(p.name for p in (data_home / "experiments").iterdir()) == [
                f"{LAB}.experiment.{extension}" for extension in ("csv", "json", "png")]
        finally:
            destroyed = agent.vtopo(a, "destroy", LAB)
        assert destroyed.returncode == 0, destroyed.stderr
    assert list(victim.iterdir()) == []
    assert set(Path("/etc").iterdir()) == before_etc
    assert not Path("/x.measure.json").exists() and not list(Path("/").glob(f"{LAB}.experiment.*"))


def test_a_lab_name_cannot_lead_a_history_out_of_the_data_directory(users, data_home: Path,  # noqa: F811
                                                                    tmp_path: Path) -> None:
    """The history is named after the lab, whose name is the member's to choose: it stays one file name in the
    histories folder. -o writes where the caller asks, and only there."""
    a = users["a"].pw_name
    name = "../../../../etc/y"
    lab = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    lab["lab"]["name"] = name
    with Agent.running() as agent:
        deploy_labelled(agent, a, json.dumps(lab), "")
        try:
            saved = agent.vtopo(None, "iperf", name, "c1", "c2", "-t", "1", "--save")
            assert saved.returncode == 0, saved.stdout + saved.stderr
            chosen = tmp_path / "chosen.measure.json"
            asked = agent.vtopo(None, "iperf", name, "c1", "c2", "-t", "1", "-o", str(chosen))
            assert asked.returncode == 0, asked.stdout + asked.stderr
        finally:
            destroyed = agent.vtopo(a, "destroy", name)
        assert destroyed.returncode == 0, destroyed.stderr
    assert [p.name for p in (data_home / "histories").iterdir()] == ["_.._.._.._etc_y.measure.json"]
    assert len(load_history(chosen)) == 1
    assert not Path("/etc/y.measure.json").exists()


def test_an_experiment_on_a_file_leaves_nothing_beside_it_or_where_it_ran(data_home: Path, tmp_path: Path) -> None:
    """`vtopo experiment topologies/LAB.vtopo` in a checkout: the lab is deployed, measured and destroyed, and the
    checkout holds what it held; -o puts the CSV, JSON and PNG where it says."""
    checkout = tmp_path / "checkout"
    (checkout / "topologies").mkdir(parents=True)
    shutil.copy(TOPOLOGIES / f"{LAB}.vtopo", checkout / "topologies")
    quick = ("--repeat", "1", "--warmup", "0", "--seconds", "1")
    done = subprocess.run([sys.executable, "-m", "vtopo", "experiment", f"topologies/{LAB}.vtopo", *quick],
                          capture_output=True, text=True, timeout=300, cwd=checkout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(str(path.relative_to(checkout)) for path in checkout.rglob("*")) == [
        "topologies", f"topologies/{LAB}.vtopo"]
    assert len(load_history(data_home / "histories" / f"{LAB}.measure.json")) == 2
    outputs = [f"{LAB}.experiment.{extension}" for extension in ("csv", "json", "png")]
    assert sorted(path.name for path in (data_home / "experiments").iterdir()) == outputs

    asked = subprocess.run([sys.executable, "-m", "vtopo", "experiment", f"topologies/{LAB}.vtopo", *quick,
                            "--no-history", "-o", "results"], capture_output=True, text=True, timeout=300,
                           cwd=checkout, stdin=subprocess.DEVNULL)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert sorted(path.name for path in (checkout / "results").iterdir()) == outputs
    assert len(load_history(data_home / "histories" / f"{LAB}.measure.json")) == 2


SAVED = "saved-by-root"


@pytest.fixture
def homes(users) -> Iterator[dict[str, Path]]:  # noqa: F811
    """A folder of member a's and one of member b's, each with a copy of lab SAVED, and a copy root keeps for everyone
    (`shared`): each readable by all, writable by its owner alone."""
    top = Path(tempfile.mkdtemp(prefix="vtopo-homes-"))
    top.chmod(0o755)
    folders = {"a": top / "a", "b": top / "b", "shared": top / "shared"}
    for key, folder in folders.items():
        folder.mkdir(0o755)
        lab = tiny_lab(folder, SAVED)
        uid, gid = (users[key].pw_uid, users[key].pw_gid) if key in users else (0, 0)
        for path in (folder, lab):
            os.chown(path, uid, gid)
    yield folders
    shutil.rmtree(top)


@pytest.mark.parametrize("label", [f"b/{SAVED}.vtopo", f"shared/{SAVED}.vtopo", "a/link-to-b.vtopo",
                                   f"a/{SAVED}.vtopo"],
                         ids=["bs-lab", "a-shared-lab", "as-symlink-to-bs-lab", "as-own-lab"])
def test_root_saving_a_members_lab_writes_as_the_member_where_the_member_may(users, homes: dict[str, Path],
                                                                            label: str) -> None:
    """Issue 35, hole 4: root (a teacher keeping a student's work) runs `vtopo save LAB` on member a's lab, whose
    file a's client named when it deployed. a's own `vtopo save` writes it, as a: b's lab and a lab root keeps are
    left as they were, with one line saying a cannot write them; a symlink of a's to b's lab is replaced by a file of
    a's; a's own lab gets the address a added in c1, and stays a's."""
    a = users["a"]
    (homes["a"] / "link-to-b.vtopo").symlink_to(homes["b"] / f"{SAVED}.vtopo")
    os.chown(homes["a"] / "link-to-b.vtopo", a.pw_uid, a.pw_gid, follow_symlinks=False)
    others = [homes["b"] / f"{SAVED}.vtopo", homes["shared"] / f"{SAVED}.vtopo"]
    before = [(path.read_bytes(), path.stat().st_uid) for path in others]
    source = homes["a"].parent / label
    with Agent.running() as agent:
        deploy_labelled(agent, a.pw_name, (homes["a"] / f"{SAVED}.vtopo").read_text(), str(source))
        try:
            added = agent.vtopo(a.pw_name, "exec", SAVED, "c1", "--", "ip", "address", "add", "10.9.0.77/24",
                                "dev", "eth0")
            assert added.returncode == 0, added.stderr
            saved = agent.vtopo(None, "save", SAVED)
        finally:
            destroyed = agent.vtopo(a.pw_name, "destroy", SAVED)
        assert destroyed.returncode == 0, destroyed.stderr
    assert [(path.read_bytes(), path.stat().st_uid) for path in others] == before
    if label.startswith("a/"):
        assert saved.returncode == 0, saved.stdout + saved.stderr
        assert not source.is_symlink() and source.stat().st_uid == a.pw_uid
        (link,) = io.load(source).links.values()
        assert "10.9.0.77/24" in link.a.interface.addresses
    else:
        assert saved.returncode == 1 and saved.stderr == (f"error: {a.pw_name} cannot write lab {SAVED} into {source} "
                                                          "(Permission denied): say where to write it with -o FILE\n")
