"""A member's lab spread over this host and a simulated one (scripts/sim-host.sh), deployed as the member: on the
other site their part is theirs, as the ssh user there (their group and quotas there), and from a shell in their node
there they attack the site and another member's part with the kernel's own interfaces (tests/security/attacks.py).

The simulated host shares /etc/passwd, /etc/group and /home with this one (only /run/vtopo and /run/netns are its
own), and its sshd reads each user's ~/.ssh/authorized_keys: members a and b log in there with keys of their own.
Both deploy a lab with c1 here and c2 there, shared by the module's tests; c is outside the vtopo group. A node there
from an image runs only from the member's own store there (loaded in their shell there), never from this host's or
another member's."""
from __future__ import annotations

import json
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from image_labs import TOOLBOX, copy_image, engine_leftovers, own_images
from members import members
from residue import snapshot
from security.attacks import INIT_MODULE, RAW_NETLINK, REFUSED, owning_userns
from sites.simulated import SimulatedHost
from spread_labs import LabBuilder, LOCAL_UNDERLAY, here
from vtopo import protocol as p
from vtopo.ssh import ssh_argv
from vtopo.model import io
from vtopo.model.sites import Site

pytestmark = pytest.mark.privileged

SITE = "mb"  # the simulated host, and the site the labs name it by
SUBNETS = {"a": "10.9.0", "b": "10.8.0"}  # of each member's link between c1 (here) and c2 (on the site)
SITE_CONFIG = f'tunnel_peers = ["{LOCAL_UNDERLAY}"]\n'  # the site's agent.toml: members may tunnel to this host


@dataclass
class Spread:
    agent: Agent  # this host's
    host: SimulatedHost
    users: dict[str, pwd.struct_passwd]
    directory: Path  # lab files, readable by every test user

    def name(self, user: str) -> str:
        return self.users[user].pw_name

    def site(self, user: str, login: str = "", address: str = "") -> Site:
        """The site as `user` reaches it: logged in as `login` there (themselves by default), with their own key."""
        return Site(SITE, f"{self.name(login or user)}@{self.host.address}",
                    identity=f"{self.users[user].pw_dir}/.ssh/id_ed25519",
                    known_hosts=str(self.host.directory / "ssh" / "known_hosts"), address=address)

    def lab(self, user: str, name: str, site: Site | None = None, here_address: str = LOCAL_UNDERLAY,
            image: str = "") -> Path:
        """c1 here and c2 on the site (from `image`, if given), linked across them."""
        lab = LabBuilder(name, [here(here_address), site or self.site(user)])
        lab.node("c1", "container")
        lab.node("c2", "container", SITE, **({"image": image} if image else {}))
        lab.link("c1", "c2", f"{SUBNETS[user]}.1/24", f"{SUBNETS[user]}.2/24")
        path = self.directory / f"{name}.vtopo"
        io.save(lab.topology, path)
        path.chmod(0o644)
        return path

    def vtopo(self, user: str, *args: str) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(self.name(user), *args, timeout=240)

    def deploy(self, user: str, path: Path) -> subprocess.CompletedProcess[str]:
        return self.vtopo(user, "deploy", str(path), "--allow-site", SITE)

    def refusal(self, user: str, path: Path) -> str:
        """The one line, naming the simulated site, with which the deploy of the lab at `path` fails (this host
        refuses nothing); every site's part is gone."""
        done = self.deploy(user, path)
        if done.returncode == 0:
            self.vtopo(user, "destroy", path.stem)
        assert done.returncode != 0, done.stdout
        lines = [line for line in done.stderr.splitlines() if line.startswith("site ")]
        assert len(lines) == 1 and lines[0].startswith(f"site {SITE}: "), done.stderr
        assert done.stderr.rstrip().endswith("every site's part was rolled back"), done.stderr
        assert path.stem not in self.vtopo(user, "status").stdout and path.stem not in self.labs_on_site()
        return lines[0]

    def on_site(self, user: str, script: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
        """`script` run by the site's shell, as `user` logged in there over ssh with their own key."""
        argv = ["runuser", "-u", self.name(user), "--", *ssh_argv(self.site(user), ["sh", "-c", script])]
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=120, cwd="/")
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode(), done.stderr.decode())

    def in_c2(self, user: str, command: str) -> subprocess.CompletedProcess[str]:
        """`command` (shell words) in `user`'s node c2, from their shell on the site."""
        return self.on_site(user, f"vtopo exec spr-{user} c2 -- {command}")

    def prefix_there(self, lab: str) -> str:
        """The prefix the site's agent gave its part of `lab`, from its record."""
        for record in (self.host.directory / "lib" / "labs").glob("*/lab.json"):
            if json.loads(record.read_text()).get("name") == lab:
                return record.parent.name
        raise AssertionError(f"the site has no record of lab {lab}")

    def there(self, path: str) -> str:
        """`path` as the site's mount namespace has it (where its /run/netns and /run/vtopo hold namespaces)."""
        return f"/proc/{(self.host.directory / 'holder.pid').read_text().strip()}/root{path}"

    def netns_there(self, lab: str, node: str) -> str:
        return f"/run/netns/{self.prefix_there(lab)}-{node}"

    def site_links(self, netns: str = "") -> set[str]:
        """The interfaces of the site's own namespace (or of `netns` there), by name and MAC."""
        listing = self.host.run("ip", *(("-n", netns) if netns else ()), "-br", "link").stdout
        return {" ".join(line.split()[::2]) for line in listing.splitlines()}

    def labs_on_site(self) -> set[str]:
        records = (self.host.directory / "lib" / "labs").glob("*/lab.json")
        return {json.loads(record.read_text())["name"] for record in records}


@contextmanager
def member_keys(users: dict[str, pwd.struct_passwd]) -> Iterator[None]:
    """A home for each test user with a key pair of their own in ~/.ssh, authorised for them alone; c's
    authorized_keys holds a's key (a has an account there, outside the vtopo group). Removed afterwards."""
    try:
        for user in users.values():
            home = Path(user.pw_dir)
            assert home.name == user.pw_name, home  # useradd's default, /home/NAME: the test's own to remove
            shutil.rmtree(home, ignore_errors=True)  # left by an interrupted run
            (home / ".ssh").mkdir(parents=True, mode=0o700)
            shutil.chown(home, user.pw_uid, user.pw_gid)
            shutil.chown(home / ".ssh", user.pw_uid, user.pw_gid)
            subprocess.run(["usermod", "-p", "*", user.pw_name], check=True)  # locked ("!") keeps sshd out
            subprocess.run(["runuser", "-u", user.pw_name, "--", "ssh-keygen", "-q", "-t", "ed25519", "-N", "",
                            "-f", str(home / ".ssh" / "id_ed25519")], check=True, capture_output=True)
        for user, holder in (("a", "a"), ("b", "b"), ("c", "a")):
            keys = Path(users[user].pw_dir) / ".ssh" / "authorized_keys"
            keys.write_text((Path(users[holder].pw_dir) / ".ssh" / "id_ed25519.pub").read_text())
            shutil.chown(keys, users[user].pw_uid, users[user].pw_gid)
        yield
    finally:
        for user in users.values():
            shutil.rmtree(user.pw_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def spread() -> Iterator[Spread]:
    directory = Path(tempfile.mkdtemp(prefix="vtopo-spread-members-"))
    directory.chmod(0o755)
    before = snapshot()
    host = SimulatedHost.up(SITE)
    try:
        (host.directory / "agent.toml").write_text(SITE_CONFIG)
        with members() as users, member_keys(users), \
                Agent.running(f'tunnel_peers = ["{host.address}"]\n') as agent:
            spread = Spread(agent, host, users, directory)
            deployed = []
            try:
                for user in "ab":
                    result = spread.deploy(user, spread.lab(user, f"spr-{user}"))
                    assert result.returncode == 0, result.stderr
                    deployed.append(user)
                yield spread
            finally:
                destroyed = [spread.vtopo(user, "destroy", f"spr-{user}") for user in deployed]
            assert all(result.returncode == 0 for result in destroyed), [result.stderr for result in destroyed]
            assert host.residue() == [], "the site keeps something of the members' labs"
    finally:
        host.down()
        shutil.rmtree(directory)
    assert snapshot() - before == {}, "this host keeps something of the members' labs"


# ------------------------------------------------------------ the member's part, on the site, is theirs


def test_a_members_spread_lab_runs_as_theirs_on_the_site(spread: Spread) -> None:
    status = spread.vtopo("a", "status", "spr-a")
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"site {SITE}: lab spr-a, owner {spread.name('a')}: running" in status.stdout, status.stdout
    across = spread.vtopo("a", "exec", "spr-a", "c1", "--", "ping", "-c1", "-W2", f"{SUBNETS['a']}.2")
    assert across.returncode == 0, across.stdout + across.stderr
    there = spread.vtopo("a", "exec", "spr-a", "c2", "--", "sh", "-c",
                         "hostname; id -u; awk '{print $2}' /proc/self/uid_map")
    assert there.stdout.split() == ["c2", "0", str(spread.users["a"].pw_uid)], there.stdout + there.stderr
    kept = Path(spread.there(f"/run/vtopo/ns/{spread.prefix_there('spr-a')}/user")).stat()
    assert owning_userns(spread.there(spread.netns_there("spr-a", "c2"))) == (kept.st_dev, kept.st_ino)


def test_a_quota_of_the_site_fails_the_whole_deploy(spread: Spread) -> None:
    """On the site a may have one lab (spr-a is it): a second one fails there, and its part here is rolled back."""
    config = spread.host.directory / "agent.toml"
    config.write_text(SITE_CONFIG + "labs_per_member = 1\n")
    try:
        refusal = spread.refusal("a", spread.lab("a", "spr-quota"))
    finally:
        config.write_text(SITE_CONFIG)
    assert f"{spread.name('a')} has 1 labs deployed, the most one member may (labs_per_member)" in refusal, refusal


# ------------------------------------------------------------ attacks from a's node on the site


def test_netns_of_pid_1_is_refused_on_the_site(spread: Spread) -> None:
    links = spread.site_links()
    said = spread.in_c2("a", "ip link add x type veth peer name vtsec-esc netns 1")
    assert said.returncode != 0 and "Operation not permitted" in said.stderr, said.stderr
    assert spread.site_links() == links


def test_bs_part_on_the_site_passed_in_is_refused(spread: Spread) -> None:
    """From a's shell on the site, b's node's namespace in the site's /run/netns, handed to a's node as stdin."""
    theirs = Path(spread.netns_there("spr-b", "c2")).name
    before = spread.site_links(theirs)
    moved = spread.in_c2("a", f"ip link add x type veth peer name y netns /proc/self/fd/0 < /run/netns/{theirs}")
    entered = spread.in_c2("a", f"nsenter --net=/proc/self/fd/0 ip link del eth0 < /run/netns/{theirs}")
    from_the_shell = spread.on_site("a", f"nsenter --net=/run/netns/{theirs} ip link del eth0")
    for attempt in (moved, entered, from_the_shell):
        assert attempt.returncode != 0 and "Operation not permitted" in attempt.stderr, attempt.stderr
    assert spread.site_links(theirs) == before
    unreached = spread.vtopo("a", "exec", "spr-a", "c2", "--", "ping", "-c1", "-W1", f"{SUBNETS['b']}.2")
    assert unreached.returncode != 0, unreached.stdout


def _raw_netlink_in_c2(spread: Spread, target: str, index: int) -> dict[str, int]:
    """RAW_NETLINK in a's node on the site, with `target` (a namespace file there) as its stdin."""
    said = spread.in_c2("a", f"{shlex.join([sys.executable, '-c', RAW_NETLINK, str(index)])} < {target}")
    assert said.returncode == 0, said.stderr
    return json.loads(said.stdout)


def _index_there(netns: str, device: str, spread: Spread) -> int:
    shown = spread.host.run("ip", *(("-n", netns) if netns else ()), "-j", "link", "show", device)
    return int(json.loads(shown.stdout)[0]["ifindex"])


def test_target_and_link_netnsid_on_the_site_are_refused(spread: Spread) -> None:
    """The site's own namespace (the login shell's, passed in) and its underlay device."""
    links = spread.site_links()
    outcome = _raw_netlink_in_c2(spread, "/proc/$$/ns/net", _index_there("", "uplink", spread))
    assert outcome["dellink"] in REFUSED and outcome["macvlan"] in REFUSED, outcome
    assert spread.site_links() == links


def test_target_netnsid_on_bs_part_on_the_site_is_refused(spread: Spread) -> None:
    theirs = Path(spread.netns_there("spr-b", "c2")).name
    before = spread.site_links(theirs)
    outcome = _raw_netlink_in_c2(spread, f"/run/netns/{theirs}", _index_there(theirs, "eth0", spread))
    assert outcome["dellink"] in REFUSED and outcome["macvlan"] in REFUSED, outcome
    assert spread.site_links(theirs) == before


def test_setns_mount_and_modules_reach_nothing_of_the_sites(spread: Spread) -> None:
    entered = spread.in_c2("a", "nsenter --net=/proc/self/fd/0 ip link set uplink down < /proc/$$/ns/net")
    assert entered.returncode != 0 and "Operation not permitted" in entered.stderr, entered.stderr
    init = spread.in_c2("a", "nsenter --mount=/proc/1/ns/mnt true")
    assert init.returncode != 0 and "Permission denied" in init.stderr, init.stderr
    mounts = spread.host.run("cat", "/proc/self/mountinfo").stdout
    mounted = spread.in_c2("a", "sh -c 'mount -t tmpfs vtsec /mnt && echo mounted in the node'")
    assert mounted.stdout.strip() == "mounted in the node", mounted.stderr
    assert spread.host.run("cat", "/proc/self/mountinfo").stdout == mounts
    module = spread.in_c2("a", shlex.join([sys.executable, "-c", INIT_MODULE])).stdout.split()
    assert module[0] == "-1" and int(module[1]) in REFUSED + (38,), module  # EPERM, or ENOSYS without modules
    assert spread.host.run("ip", "-br", "link", "show", "uplink").stdout.split()[1] != "DOWN"


def test_a_tunnel_redirected_from_its_node_sends_nothing_elsewhere(spread: Spread) -> None:
    """The kernel lets the node's root add a remote to its tunnel's forwarding database (`bridge fdb append`), which
    would have the site send the lab's VXLAN to any address, past the administrator's tunnel_peers: the lab's table
    drops it on the site and counts it, and the tunnel still reaches its own remote."""
    elsewhere = "198.18.0.252"
    added = spread.in_c2("a", f"bridge fdb append 00:00:00:00:00:00 dev eth0 dst {elsewhere}")
    assert added.returncode == 0, added.stderr  # the kernel's to refuse, and it does not
    table = f"vtopo-{spread.prefix_there('spr-a')}"
    try:
        before = _dropped_there(spread, table)
        asked = spread.in_c2("a", shlex.join(["sh", "-c", "for i in 1 2 3; do ip neigh flush dev eth0; "
                                              f"ping -c1 -W2 {SUBNETS['a']}.1 || exit 1; done"]))
        assert asked.returncode == 0, asked.stdout + asked.stderr  # three ARP requests, each sent to every remote
        listing = spread.host.run("nft", "list", "table", "inet", table).stdout
        assert _dropped_there(spread, table) - before >= 3, listing  # the copies for the added remote
    finally:
        spread.in_c2("a", f"bridge fdb del 00:00:00:00:00:00 dev eth0 dst {elsewhere}")


def _dropped_there(spread: Spread, table: str) -> int:
    """What the lab's table on the site dropped (vtopo.host.nftables.dropped, run there)."""
    said = spread.host.run(sys.executable, "-c", f"from vtopo.host import nftables; print(nftables.dropped({table!r}))")
    assert said.returncode == 0, said.stderr
    return int(said.stdout)


# ------------------------------------------------------------ what the site's agent refuses a member


def test_b_cannot_act_on_as_part_through_the_sites_agent(spread: Spread) -> None:
    """b, logged in on the site, speaks the agent's protocol to it (`vtopo agent --stdio`) about a's part: each
    request is answered with one line of refusal."""
    theirs = f"lab spr-a belongs to {spread.name('a')}"
    document = (spread.directory / "spr-a.vtopo").read_text()
    for request, refusal in ((p.DestroyRequest("spr-a"), theirs),
                             (p.NodeRequest("spr-a", "c2", p.NodeAction.STOP), theirs),
                             (p.ExecRequest("spr-a", "c2", ["true"]), theirs),
                             (p.DeployRequest(document, p.Consent(site=SITE), update=True), theirs),
                             (p.DeployRequest(document, p.Consent(site=SITE)), "already deployed, by"),
                             (p.CleanupRequest(), "only root may clean up")):
        answered = spread.on_site("b", "vtopo agent --stdio", stdin=p.encode(request))
        result = json.loads(answered.stdout.splitlines()[-1])
        assert result["type"] == "result" and result["code"] != 0, answered.stdout + answered.stderr
        assert [refusal in error for error in result["errors"]] == [True], (request.type, result)
    refused = spread.on_site("b", "vtopo exec spr-a c2 -- true")
    assert refused.returncode != 0 and "belongs to" in refused.stderr, refused.stderr
    assert spread.vtopo("a", "exec", "spr-a", "c2", "--", "true").returncode == 0  # still up


def test_a_member_follows_their_own_part_on_the_site_and_nothing_of_anothers(spread: Spread) -> None:
    """a's `vtopo status --watch` hears of a cable pulled in a's c2 from the site's agent, over a's own ssh channel;
    b, asking the site's agent to follow a's lab, is refused in one line and told nothing of it."""
    watch = spread.agent.spawn(spread.name("a"), "status", "spr-a", "--watch")
    try:
        assert spread.in_c2("a", "ip link set eth0 down").returncode == 0
        assert watch.stdout is not None
        deadline = threading.Timer(30, watch.kill)
        deadline.start()
        lines = []
        while (line := watch.stdout.readline()) and "c2:eth0 is down" not in line:
            lines.append(line)
        deadline.cancel()
        assert "c2:eth0 is down" in line, lines
    finally:
        watch.terminate()
        watch.wait(timeout=30)
        assert spread.in_c2("a", "ip link set eth0 up").returncode == 0
    followed = spread.on_site("b", "vtopo agent --stdio", stdin=p.encode(p.FollowRequest("spr-a")))
    told = [json.loads(line) for line in followed.stdout.splitlines()]
    assert [message["type"] for message in told] == ["result"], followed.stdout
    assert told[0]["errors"] == [f"error: lab spr-a belongs to {spread.name('a')}; only {spread.name('a')} or root "
                                 "may follow it"], told


@pytest.mark.parametrize("here_address, listed, why", [
    (LOCAL_UNDERLAY, [], f"only root may tunnel a lab to {LOCAL_UNDERLAY}"),
    ("127.0.0.1", [LOCAL_UNDERLAY, "SITE"], "its tunnel would lead back to this host: the lab's sites give 127.0.0.1"),
], ids=["unlisted", "back-to-the-site"])
def test_a_tunnel_from_the_site_to_an_address_it_did_not_list_or_its_own_is_refused(
        spread: Spread, here_address: str, listed: list[str], why: str) -> None:
    """The site's agent tunnels to the address the lab gives this host: one its administrator did not list (the list
    is empty), or one of the site's own (loopback, which this host has too), even though the list names every
    machine."""
    peers = [spread.host.address if peer == "SITE" else peer for peer in listed]
    config = spread.host.directory / "agent.toml"
    config.write_text(f"tunnel_peers = {json.dumps(peers)}\n")
    try:
        refusal = spread.refusal("a", spread.lab("a", "spr-tunnel", here_address=here_address))
    finally:
        config.write_text(SITE_CONFIG)
    assert why in refusal, refusal


def test_a_lab_that_gives_the_site_an_address_not_its_own_is_refused_there(spread: Spread) -> None:
    """The site's tunnels would leave from another machine's address, listed here as a peer: its agent refuses."""
    elsewhere = "198.18.0.251"
    spread.agent.config_file.write_text(f'tunnel_peers = ["{spread.host.address}", "{elsewhere}"]\n')
    try:
        refusal = spread.refusal("a", spread.lab("a", "spr-elsewhere", site=spread.site("a", address=elsewhere)))
    finally:
        spread.agent.config_file.write_text(f'tunnel_peers = ["{spread.host.address}"]\n')
    assert f"the lab gives {elsewhere} as this site's address, which this host does not have" in refusal, refusal


def test_a_site_where_the_user_is_outside_the_vtopo_group_refuses_in_one_line(spread: Spread) -> None:
    """a deploys as c on the site (an account of theirs there, outside its vtopo group)."""
    refusal = spread.refusal("a", spread.lab("a", "spr-outsider", site=spread.site("a", login="c")))
    assert refusal == f"site {SITE}: {p.refusal(spread.name('c'))}"



# ------------------------------------------------------------ a member's images on the site


def _archive(spread: Spread, reference: str) -> Path:
    """This host's toolbox as an OCI archive naming `reference`, readable by every test user."""
    archive = spread.directory / f"{reference.replace('/', '-')}.tar"
    copy_image(TOOLBOX, f"oci-archive:{archive}:{reference}")
    archive.chmod(0o644)
    return archive


def _load_on_site(spread: Spread, user: str, reference: str) -> None:
    """`reference` loaded into `user`'s own store on the site, by `vtopo image load` in their shell there."""
    loaded = spread.on_site(user, f"vtopo image load {_archive(spread, reference)}")
    said = loaded.stdout + loaded.stderr
    assert loaded.returncode == 0 and said.startswith(f"loaded {reference}:latest sha256:"), said
    assert said.rstrip().endswith(f"for {spread.name(user)}'s labs"), said


def _remove_on_site(spread: Spread, user: str, reference: str) -> None:
    removed = spread.on_site(user, f"vtopo image rm {reference}")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert reference not in spread.on_site(user, "vtopo image list").stdout


def test_an_image_the_member_has_not_loaded_on_the_site_is_refused_there(spread: Spread) -> None:
    """This host's shared store has the toolbox, the site has none: the site gets nothing from here."""
    own_images()
    refusal = spread.refusal("a", spread.lab("a", "spr-noimage", image=TOOLBOX))
    assert refusal.startswith(f"site {SITE}: node c2: image {TOOLBOX} is not on this host, among the images this lab "
                              "may run"), refusal
    assert "root's `sudo vtopo image build toolbox` makes it for every lab, or `vtopo image load FILE --name " \
           f"{TOOLBOX}` loads your own" in refusal, refusal  # a member cannot build it
    assert spread.host.engine_leftovers() == []


def test_another_members_image_on_the_site_is_not_the_members(spread: Spread) -> None:
    theirs = "member-b/toolbox"
    _load_on_site(spread, "b", theirs)
    try:
        refusal = spread.refusal("a", spread.lab("a", "spr-theirs", image=theirs))
    finally:
        _remove_on_site(spread, "b", theirs)
    assert refusal.startswith(f"site {SITE}: node c2: image {theirs} is not on this host, among the images this lab "
                              f"may run") and f"`vtopo image load FILE --name {theirs}` loads it" in refusal, refusal
    assert spread.host.engine_leftovers() == []


def test_the_members_own_image_on_the_site_runs_their_node_there(spread: Spread) -> None:
    """Loaded into a's own store on the site, the image runs a's node there, in a's user namespace of the lab there,
    and pings this host's node across the tunnel; destroy leaves no container, mount or cgroup on either host."""
    own_images()
    engine_here = engine_leftovers()
    _load_on_site(spread, "a", TOOLBOX)
    try:
        deployed = spread.deploy("a", spread.lab("a", "spr-image", image=TOOLBOX))
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        try:
            across = spread.vtopo("a", "exec", "spr-image", "c2", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2",
                                  f"{SUBNETS['a']}.1")
            assert across.returncode == 0, across.stdout + across.stderr
            own = spread.vtopo("a", "exec", "spr-image", "c2", "--", "sh", "-c",
                               "pwd; test -e /usr/lib/frr/zebra || echo IMAGE; ps -o comm= -p 1")
            # the image's files, from its root (it has no home of the member's)
            assert own.stdout.split() == ["/", "IMAGE", "sleep"], own.stdout + own.stderr
            prefix = spread.prefix_there("spr-image")
            pid = Path(spread.there(f"/run/vtopo/oci/{prefix}-c2/pid")).read_text().strip()
            assert Path(f"/proc/{pid}/uid_map").read_text().split() == ["0", str(spread.users["a"].pw_uid), "1"]
            kept = Path(spread.there(f"/run/vtopo/ns/{prefix}/user")).stat()
            userns = Path(f"/proc/{pid}/ns/user").stat()
            assert (userns.st_dev, userns.st_ino) == (kept.st_dev, kept.st_ino)  # the lab's on the site
            on_site = spread.host.engine_leftovers()
            assert any(line.startswith("container vtopo-") for line in on_site), on_site
            assert engine_leftovers() == engine_here  # none of the site's is this host's
        finally:
            destroyed = spread.vtopo("a", "destroy", "spr-image")
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
        assert spread.host.engine_leftovers() == [] and engine_leftovers() == engine_here
        assert "spr-image" not in spread.labs_on_site()
    finally:
        _remove_on_site(spread, "a", TOOLBOX)
