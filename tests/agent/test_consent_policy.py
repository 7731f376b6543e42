"""Who may give which consent through the agent: root anything; a member of the vtopo group only host devices and
image directories the administrator listed in the agent's configuration, and startup commands for their own lab."""
from __future__ import annotations

from pathlib import Path

import pytest

from vtopo import protocol as p
from vtopo.server.policy import Policy, PolicyError
from vtopo.server.agent_server import Caller, Refused, _consent

ROOT = Caller(pid=1, uid=0, gid=0)
MEMBER = Caller(pid=1, uid=65534, gid=65534)  # nobody: a uid that is not root


def config(tmp_path: Path, text: str) -> Policy:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    return Policy.read(path)


def test_root_may_allow_a_host_device_and_a_member_is_told_who_may(tmp_path):
    policy = Policy.read(tmp_path / "missing.toml")
    assert _consent(p.Consent(host_devices=["eth0"]), ROOT, policy).host_devices == {"eth0"}
    with pytest.raises(Refused) as refused:
        _consent(p.Consent(host_devices=["eth0"]), MEMBER, policy)
    assert str(refused.value) == (
        "--allow-host-device eth0: only root may hand a host device to a lab (its nodes would sit on the host's own "
        "network); ask an administrator to deploy the lab, or to let the vtopo group use eth0 in "
        f'{tmp_path}/missing.toml: host_devices = ["eth0"]')


def test_a_member_may_allow_what_the_administrator_listed(tmp_path):
    policy = config(tmp_path, 'host_devices = ["vtlab0"]\nimage_dirs = ["/srv/images/"]\n')
    trust = _consent(p.Consent(host_devices=["vtlab0"], startup_commands=["c1"]), MEMBER, policy)
    assert trust.host_devices == {"vtlab0"} and trust.startup_commands == {"c1"}
    with pytest.raises(Refused, match="only root may hand a host device"):
        _consent(p.Consent(host_devices=["eth0"]), MEMBER, policy)
    assert policy.allows_image("/srv/images/disk.qcow2")
    assert not policy.allows_image("/srv/images/../secret.img") and not policy.allows_image("/srv/images/a/b.img")
    with pytest.raises(Refused, match=r'only root may let a lab boot a file from outside .* image_dirs = \["/home/a"\]'):
        _consent(p.Consent(images=["/home/a/disk.img"]), MEMBER, policy)


def test_a_member_may_allow_startup_commands_of_their_own_lab(tmp_path):
    trust = _consent(p.Consent(startup_commands=["h1"]), MEMBER, Policy.read(tmp_path / "missing.toml"))
    assert trust.startup_commands == {"h1"}


@pytest.mark.parametrize("text, message", [
    ("host_devices = 'eth0'", "host_devices must be a list of strings"),
    ('image_dirs = ["images"]', "image_dirs must be absolute paths, not images"),
    ("devices = []", "unknown settings: devices"),
    ("host_devices = [", "cannot be read"),
])
def test_a_bad_configuration_is_one_line_naming_the_file_and_field(tmp_path, text, message):
    with pytest.raises(PolicyError, match=message) as error:
        config(tmp_path, text)
    assert str(tmp_path / "agent.toml") in str(error.value) and "\n" not in str(error.value)
