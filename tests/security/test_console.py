"""Attack 5: a VM's console is handed over without following a path another user can write. The QEMU backend's
VM directory belongs to the QEMU user, who could plant a symlink or a link to another service's socket where
console.sock lies; root never connects there. Laid out as the QEMU backend lays it out, with test user a standing
for the QEMU user and a socket of root's standing for the agent's."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtopo.serial_console import connected

pytestmark = pytest.mark.privileged


@pytest.fixture
def vm_directory(users) -> Iterator[tuple[Path, socket.socket, int]]:
    """/run/<tmp>/<prefix>/vm1 (the QEMU user's, 0700, in root's directories), and a listening socket of root's."""
    root = Path(tempfile.mkdtemp(prefix="vtopo-console-test-", dir="/run"))
    root.chmod(0o711)
    qemu_uid = users["a"].pw_uid
    node = root / "vtest" / "vm1"
    node.mkdir(parents=True)
    node.parent.chmod(0o711)
    os.chown(node, qemu_uid, users["a"].pw_gid)
    node.chmod(0o700)
    roots = socket.socket(socket.AF_UNIX)
    roots.bind(str(root / "agent.sock"))
    roots.listen(4)
    roots.settimeout(0.5)
    try:
        yield node, roots, qemu_uid
    finally:
        roots.close()
        shutil.rmtree(root)


def as_qemu_user(uid: int, *argv: str) -> None:
    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv], check=True)


def nobody_connected(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except TimeoutError:
        return True
    return False


def test_a_symlink_planted_for_the_console_is_not_followed(vm_directory):
    node, roots, qemu_uid = vm_directory
    as_qemu_user(qemu_uid, "ln", "-s", roots.getsockname(), str(node / "console.sock"))
    with pytest.raises(PermissionError, match="not a socket of its directory's owner"):
        connected(str(node / "console.sock"), {0, qemu_uid})
    assert nobody_connected(roots)


def test_a_hard_link_to_a_socket_of_roots_is_not_connected(vm_directory):
    node, roots, qemu_uid = vm_directory
    os.link(roots.getsockname(), node / "console.sock")  # as root could be fooled into by a lax protected_hardlinks
    with pytest.raises(PermissionError, match="not a socket of its directory's owner"):
        connected(str(node / "console.sock"), {0, qemu_uid})
    assert nobody_connected(roots)


def test_a_directory_of_another_user_or_writable_by_others_is_refused(vm_directory, users):
    node, roots, qemu_uid = vm_directory
    with pytest.raises(PermissionError, match="may be written by a user the console does not belong to"):
        connected(str(node / "console.sock"), {0, users["b"].pw_uid})
    node.chmod(0o777)
    with pytest.raises(PermissionError, match="may be written by a user the console does not belong to"):
        connected(str(node / "console.sock"), {0, qemu_uid})
    os.symlink(node, node.parent / "vm2")
    with pytest.raises(OSError):  # the directory itself a symlink: ELOOP
        connected(str(node.parent / "vm2" / "console.sock"), {0, qemu_uid})
    assert nobody_connected(roots)


def test_the_qemu_users_own_console_socket_is_connected(vm_directory):
    node, _, qemu_uid = vm_directory
    serve = subprocess.Popen(["setpriv", f"--reuid={qemu_uid}", f"--regid={qemu_uid}", "--clear-groups", "/usr/bin/python3",
                              "-c", "import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
                              "s.listen(1); print(flush=True); c, _ = s.accept(); c.sendall(b'login: ')",
                              str(node / "console.sock")], stdout=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None and serve.stdout.readline() == "\n"
        with connected(str(node / "console.sock"), {0, qemu_uid}) as console:
            assert console.recv(16) == b"login: "
            assert console.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)[4:8] == qemu_uid.to_bytes(4, "little")
    finally:
        serve.wait(timeout=10)
