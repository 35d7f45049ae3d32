"""What the tests of a cluster's service changes (exclusion, disputes, a pair's restart) check
after each change: which servers serve in which mode, how many jobs each computed, and that a
keystream job and a Kerberos checksum come out right against OpenSSL and libk5crypto."""

from __future__ import annotations

import contextlib
import re
import secrets

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpctest import mpc_cluster
from mpctest.krb_client import ENCTYPES, Engine, wait_until_krb_serving

ALL_THREE = {1: "three-party", 2: "three-party", 3: "three-party"}


def status_lines(cluster) -> dict[int, str]:
    return cluster.status_lines()


def jobs_of(cluster, party: int) -> int:
    return int(re.search(r", jobs (\d+),", status_lines(cluster)[party])[1])


def served(cluster, k5, aes_key: bytes, engine: Engine, krb: dict) -> None:
    """A keystream job against OpenSSL and a Kerberos checksum against libk5crypto. A pair formed
    just after one of its servers started makes its AND material first: mpcctl waits for it."""
    mpc_cluster.Cluster.set_client_timeout(cluster.admin_config, 60000)
    counter = secrets.token_bytes(16)
    expected = Cipher(algorithms.AES(aes_key), modes.CTR(counter)).encryptor().update(bytes(16 * 5))
    assert cluster.keystream("excl/aes", 1, "aes256", counter.hex(), 5, timeout=60) == expected
    data = secrets.token_bytes(40)
    assert engine.checksum(krb["id"], 17, data) == k5.make_checksum(krb["cksumtype"], krb["enctype"], krb["key"], 17,
                                                                    data)


def enrol_keys(cluster, admin: Engine, engine: Engine) -> tuple[bytes, dict]:
    """An aes256 key for keystream and an aes128 Kerberos key, served by all three."""
    algorithm, _, krb5_enctype, cksumtype, size = ENCTYPES["aes128"]
    protocol_key = secrets.token_bytes(size)
    krb = {"id": ("excl/krb", 1, algorithm), "key": protocol_key, "enctype": krb5_enctype, "cksumtype": cksumtype}
    admin.import_key(*krb["id"], protocol_key)
    aes_key = bytes.fromhex(cluster.import_key("excl/aes", 1, "aes256")[0])
    wait_until_krb_serving(engine, krb["id"])
    cluster.wait_for_modes(ALL_THREE)
    return aes_key, krb


@contextlib.contextmanager
def keys_enrolled(cluster):
    """Engines of the cluster's admin and compute keys and enrol_keys' two keys, served by all
    three: (admin, engine, aes_key, krb); the engines are closed when the block ends."""
    admin = Engine(cluster.admin_config)
    engine = Engine(cluster.compute_config, timeout_ms=60000)
    try:
        aes_key, krb = enrol_keys(cluster, admin, engine)
        yield admin, engine, aes_key, krb
    finally:
        engine.close()
        admin.close()
