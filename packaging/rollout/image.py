"""The Debian 12 image the containers boot from, built once with debootstrap and cached in
BUILD_DIR/rollout-image: a minimal root (kept as a tarball) with every package the roles
install and the runtime libraries the packages declare, rebuilt when that list changes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .common import Failure, log, remove_tree, run

MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
# What the roles expect to find installed (they never reach a mirror here), on top of the
# runtime libraries the packages declare.
IMAGE_PACKAGES = [
    "systemd", "systemd-sysv", "dbus", "iproute2", "openssh-server", "sudo",
    "python3", "python3-apt", "openssl", "adduser", "procps",
    "krb5-kdc", "krb5-admin-server", "krb5-user",
    # kpropd, for the replica KDC.
    "krb5-kpropd",
    # mdb_copy, for the share backups of docs/operations.md "Back up".
    "lmdb-utils",
    # The metrics firewall (role mpc_metrics_firewall) and the KDCs' node_exporter.
    "nftables", "prometheus-node-exporter",
]


def package_depends(package_dir: Path) -> list[str]:
    names = set()
    for deb in sorted(package_dir.glob("*.deb")):
        depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
        for item in depends.split(","):
            # The first alternative is the one apt would pick on a fresh system.
            name = re.split(r"[ (|:]", item.strip())[0]
            if name:
                names.add(name)
    local = {run(["dpkg-deb", "-f", deb, "Package"]).stdout.strip() for deb in package_dir.glob("*.deb")}
    return sorted(names - local)


def image_packages(package_dir: Path) -> list[str]:
    return sorted(set(IMAGE_PACKAGES) | set(package_depends(package_dir)))


def image_is_current(build_dir: Path, package_dir: Path) -> bool:
    """The cached image was built with exactly the packages these .deb files need."""
    stamp = build_dir / "rollout-image.packages"
    return ((build_dir / "rollout-image").is_dir() and stamp.is_file()
            and stamp.read_text() == " ".join(image_packages(package_dir)) + "\n")


def build_image(build_dir: Path, package_dir: Path) -> Path:
    image = build_dir / "rollout-image"
    packages = image_packages(package_dir)
    key = " ".join(packages) + "\n"
    stamp = build_dir / "rollout-image.packages"
    if image_is_current(build_dir, package_dir):
        log(f"image {image} is up to date")
        return image
    started = time.monotonic()

    cache = build_dir / "debian-cache"
    cache.mkdir(parents=True, exist_ok=True)
    minbase = cache / "minbase.tar"
    if not minbase.is_file():
        log("debootstrap of a minimal Debian 12 root (once, cached)")
        scratch = cache / "minbase.build"
        remove_tree(scratch)
        with open(cache / "debootstrap.log", "w") as out:
            done = subprocess.run(["nice", "-n", "10", "debootstrap", "--variant=minbase", "bookworm",
                                   str(scratch), MIRROR], stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            remove_tree(scratch)
            raise Failure(f"debootstrap failed, see {cache / 'debootstrap.log'}")
        run(["tar", "-C", scratch, "-cf", f"{minbase}.tmp", "."])
        os.replace(f"{minbase}.tmp", minbase)
        remove_tree(scratch)

    log(f"building the image with: {' '.join(packages)}")
    remove_tree(image)
    stamp.unlink(missing_ok=True)
    scratch = build_dir / "rollout-image.build"
    remove_tree(scratch)
    scratch.mkdir()
    run(["tar", "-C", scratch, "-xf", minbase])
    mounts = [scratch / "proc", scratch / "dev"]
    try:
        run(["mount", "-t", "proc", "proc", mounts[0]])
        run(["mount", "--bind", "/dev", mounts[1]])
        shutil.copy("/etc/resolv.conf", scratch / "etc/resolv.conf")
        # Nothing starts inside the chroot; the services start when the containers boot.
        policy = scratch / "usr/sbin/policy-rc.d"
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
        in_root = ["nice", "-n", "10", "chroot", scratch]
        run(in_root + ["apt-get", "update", "-qq"], env=env)
        run(in_root + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + packages, env=env)
        run(in_root + ["apt-get", "clean"], env=env)
        run(in_root + ["systemctl", "enable", "systemd-networkd.service", "ssh.service"], env=env)
        policy.unlink()
    finally:
        for mount in reversed(mounts):
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    # Per-host identity is written into each container's overlay at boot.
    for path in (scratch / "etc/ssh").glob("ssh_host_*"):
        path.unlink()
    (scratch / "etc/machine-id").write_text("")
    (scratch / "etc/resolv.conf").write_text("")
    scratch.rename(image)
    stamp.write_text(key)
    log(f"image built in {time.monotonic() - started:.0f} s")
    return image
