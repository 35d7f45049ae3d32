"""What a run on this machine lacks, each named (root, the programs, overlayfs, a writable
cgroup hierarchy, the Ansible environment, the packages, and the Debian mirror when the image
is to be built): for --check, and before a run."""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

from .containers import CGROUP_PREFIX, CGROUP_ROOTS
from .image import MIRROR, image_is_current
from .playbook import ansible_venv


def missing_prerequisites(build_dir: Path, package_dirs: list[Path]) -> list[str]:
    """What a run here lacks, each named; empty when it can run."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (debootstrap, systemd-nspawn, a bridge, cgroups)")
    for tool in ("debootstrap", "systemd-nspawn", "ssh", "scp", "ssh-keygen", "ip", "dpkg-deb", "chroot", "mount"):
        if shutil.which(tool) is None:
            missing.append(f"the program {tool}")
    if "overlay" not in Path("/proc/filesystems").read_text().split():
        missing.append("overlayfs (modprobe overlay)")
    if not CGROUP_ROOTS:
        missing.append("a cgroup hierarchy (/sys/fs/cgroup as cgroup2, or its systemd and unified hierarchies)")
    elif os.geteuid() == 0:
        for hierarchy in CGROUP_ROOTS:
            probe = hierarchy / f"{CGROUP_PREFIX}probe-{os.getpid()}"
            try:
                probe.mkdir()
                probe.rmdir()
            except OSError as error:
                missing.append(f"a writable cgroup hierarchy at {hierarchy} ({error.strerror})")
    if not (ansible_venv(build_dir) / "bin" / "ansible-playbook").is_file():
        missing.append(f"ansible-playbook in {ansible_venv(build_dir)} (make ansible-venv)")
    for package_dir in package_dirs:
        for name in ("mpc-server", "mpc-kdc-plugin"):
            if len(list(package_dir.glob(f"{name}_*.deb"))) != 1:
                missing.append(f"one {name} package in {package_dir}")
    if not missing and not image_is_current(build_dir, package_dirs[0]):
        try:
            with urllib.request.urlopen(f"{MIRROR}/dists/bookworm/Release", timeout=15):
                pass
        except OSError as error:
            missing.append(f"the Debian mirror {MIRROR} for the first image build ({error})")
    return missing
