"""A replica KDC fed by the stock MIT propagation: kpropd (krb5-kpropd) on the replica's
side, `kdb5_util dump` and kprop on the primary's. Both realms share one engine cluster,
each KDC's crypto router with its own compute client key (Cluster.add_compute_client).

On one loopback host the host principal that kprop authenticates as and the one kpropd
accepts are the same, host/<this host's name>; on two hosts they are each host's own.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from mpctest.krb5_realm import Realm, RealmError, accepts, pick_ports

READY_TIMEOUT_S = 10


class Propagation:
    """kpropd for `replica` and what the primary runs to send it the whole database."""

    def __init__(self, primary: Realm, replica: Realm, root: Path):
        self.primary, self.replica = primary, replica
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.host = socket.gethostname().lower()
        self.host_principal = f"host/{self.host}@{primary.realm}"
        self.keytab = self.root / "host.keytab"
        self.acl = self.root / "kpropd.acl"
        self.dump = self.root / "replica_datatrans"
        self.log = self.root / "kpropd.log"
        self.port = pick_ports(1)[0]
        self.process: subprocess.Popen | None = None

    def prepare(self) -> None:
        """The host principal and its keytab, kpropd's ACL, and the primary's master key stash
        on the replica (the replica decrypts the keys it is sent with it)."""
        self.primary.addprinc(self.host_principal)
        self.primary.ktadd([self.host_principal], self.keytab)
        self.acl.write_text(f"{self.host_principal}\n")
        shutil.copy(self.primary.stash, self.replica.stash)
        self.replica.stash.chmod(0o600)

    def start_kpropd(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                ["kpropd", "-d", "-r", self.replica.realm, "-P", str(self.port), "-a", str(self.acl),
                 "-f", str(self.root / "from_primary"), "-s", str(self.keytab)],
                env=self.replica.env, cwd=self.replica.root, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not accepts(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RealmError(f"kpropd did not start:\n{Realm.read(self.log)}")
            time.sleep(0.05)

    def propagate(self) -> None:
        """A full dump of the primary's database, sent with kprop and loaded by kpropd."""
        loads_before = Realm.read(self.log).count("Database load process for full propagation completed")
        self.primary.kdb5_util("dump", str(self.dump), check=True)
        self.primary.run(["kprop", "-r", self.primary.realm, "-f", self.dump, "-P", self.port, "-s", self.keytab,
                          self.host], check=True)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while Realm.read(self.log).count("Database load process for full propagation completed") == loads_before:
            if time.monotonic() > deadline:
                raise RealmError(f"the replica did not load the dump:\n{Realm.read(self.log)[-3000:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
