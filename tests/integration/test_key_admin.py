"""Key administration through mpcctl: import, list, versions side by side, delete, refusals."""

from __future__ import annotations

import re
import secrets

import pytest

from mpctest.mpc_cluster import openssl_ecb

BLOCK = bytes.fromhex("00112233445566778899aabbccddeeff")


@pytest.fixture(scope="module")
def versions(cluster):
    """adm/k kvno 1 and 2 (AES-128) and kvno 1 (AES-256): three keys under one name."""
    keys = {}
    for kvno, alg in ((1, "aes128"), (2, "aes128"), (1, "aes256")):
        key_hex, result = cluster.import_key("adm/k", kvno, alg)
        assert f"adm/k kvno {kvno} {alg}" in result.stdout
        keys[(kvno, alg)] = key_hex
    cluster.wait_until_serving(("adm/k", 1, "aes128"))
    return keys


def test_list_shows_imported_versions(cluster, versions):
    rows = cluster.list_keys("adm/")
    listed = {(name, kvno, alg) for name, kvno, alg, _ in rows}
    assert {("adm/k", 1, "aes128"), ("adm/k", 2, "aes128"), ("adm/k", 1, "aes256")} <= listed
    for _, _, _, created in rows:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created), created
    # The prefix filters.
    assert all(name.startswith("adm/") for name, _, _, _ in rows)
    assert not [row for row in cluster.list_keys("no-such-prefix/") if row[0].startswith("adm/")]


def test_versions_are_kept_side_by_side(cluster, versions):
    for (kvno, alg), key_hex in versions.items():
        assert cluster.ecb("encrypt", "adm/k", kvno, alg, BLOCK) == openssl_ecb(alg, key_hex, BLOCK), \
            f"adm/k kvno {kvno} {alg} does not compute with its own key"


def test_import_of_existing_id_fails_and_keeps_original(cluster, versions):
    _, result = cluster.import_key("adm/k", 1, "aes128", check=False)
    assert result.returncode != 0
    message = result.stderr.lower()
    assert "already exists" in message or "key_exists" in message or "keyexists" in message, result.stderr
    assert "adm/k" in result.stderr
    assert cluster.ecb("encrypt", "adm/k", 1, "aes128", BLOCK) == openssl_ecb("aes128", versions[(1, "aes128")], BLOCK)


def test_import_with_wrong_key_length_fails(cluster):
    _, result = cluster.import_key("adm/short", 1, "aes256", secrets.token_hex(16), check=False)
    assert result.returncode != 0
    assert "32 bytes" in result.stderr or "bytes" in result.stderr, result.stderr
    assert not [row for row in cluster.list_keys("adm/short")]


def test_unknown_key_fails_clearly(cluster, versions):
    for name, kvno, alg in (("adm/none", 1, "aes128"), ("adm/k", 9, "aes128"), ("adm/k", 2, "aes256")):
        result = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                                *cluster.key_args(name, kvno, alg), "--counter", "0" * 32, "--blocks", "4",
                                check=False, timeout=10)
        assert result.returncode != 0
        assert "not found" in result.stderr or "unknown_key" in result.stderr.lower(), result.stderr
        assert result.stdout == ""


def test_delete_removes_one_version(cluster, versions):
    old_hex, _ = cluster.import_key("adm/d", 1, "aes128")
    kept_hex, _ = cluster.import_key("adm/d", 2, "aes128")
    # Used before deletion, so a server has its material open in memory.
    assert cluster.ecb("encrypt", "adm/d", 1, "aes128", BLOCK) == openssl_ecb("aes128", old_hex, BLOCK)
    result = cluster.mpcctl("key", "delete", "--cluster", str(cluster.admin_config),
                            *cluster.key_args("adm/d", 1, "aes128"))
    assert "deleted adm/d kvno 1 aes128" in result.stdout
    listed = {(name, kvno, alg) for name, kvno, alg, _ in cluster.list_keys("adm/d")}
    assert listed == {("adm/d", 2, "aes128")}
    assert cluster.ecb("encrypt", "adm/d", 2, "aes128", BLOCK) == openssl_ecb("aes128", kept_hex, BLOCK)
    gone = cluster.mpcctl("aes", "ecb-encrypt", "--cluster", str(cluster.admin_config),
                          *cluster.key_args("adm/d", 1, "aes128"), "--in", BLOCK.hex(), check=False)
    assert gone.returncode != 0 and "not found" in gone.stderr, gone.stderr
    # Deleting it again fails clearly; the id can then be imported afresh.
    again = cluster.mpcctl("key", "delete", "--cluster", str(cluster.admin_config),
                           *cluster.key_args("adm/d", 1, "aes128"), check=False)
    assert again.returncode != 0 and "not found" in again.stderr, again.stderr
    new_hex, _ = cluster.import_key("adm/d", 1, "aes128")
    assert cluster.ecb("encrypt", "adm/d", 1, "aes128", BLOCK) == openssl_ecb("aes128", new_hex, BLOCK)


def test_compute_key_may_compute_but_not_administer(cluster, versions):
    got = cluster.keystream("adm/k", 2, "aes128", "0" * 32, 3, config=cluster.compute_config)
    assert got == openssl_ecb("aes128", versions[(2, "aes128")],
                              bytes.fromhex("0" * 32 + "0" * 31 + "1" + "0" * 31 + "2"))
    for args in (["key", "list", "--cluster", str(cluster.compute_config)],
                 ["key", "delete", "--cluster", str(cluster.compute_config), *cluster.key_args("adm/k", 2, "aes128")]):
        result = cluster.mpcctl(*args, check=False)
        assert result.returncode != 0
        assert "unauthorized" in result.stderr.lower() or "admin" in result.stderr.lower(), result.stderr
    path = cluster.write_key_file(secrets.token_hex(16))
    result = cluster.mpcctl("key", "import", "--cluster", str(cluster.compute_config),
                            *cluster.key_args("adm/compute", 1, "aes128"), "--key-file", str(path), check=False)
    assert result.returncode != 0 and "unauthorized" in result.stderr.lower(), result.stderr
    # Nothing changed.
    listed = {(name, kvno) for name, kvno, _, _ in cluster.list_keys("adm/")}
    assert ("adm/k", 2) in listed and ("adm/compute", 1) not in listed


def test_enrol_key_changes_kerberos_keys_only(cluster):
    """kadmind's client key (the enrol role) imports, lists and deletes Kerberos user and
    service keys; a ticket key (aes256-gcm, what a protected krbtgt key is) or a plain AES key
    it may neither import nor delete, and it may not compute."""
    enrol = str(cluster.enrol_config)
    user_key = secrets.token_hex(32)
    path = cluster.write_key_file(user_key)
    result = cluster.mpcctl("key", "import", "--cluster", enrol, *cluster.key_args("adm/user", 3, "aes256-cts-hmac-sha1-96"),
                            "--key-file", str(path))
    assert "adm/user kvno 3 aes256-cts-hmac-sha1-96" in result.stdout
    assert ("adm/user", 3, "aes256-cts-hmac-sha1-96") in {row[:3] for row in cluster.list_keys("adm/user")}
    listed = cluster.mpcctl("key", "list", "--cluster", enrol, "--prefix", "adm/user")
    assert "adm/user" in listed.stdout
    cluster.mpcctl("key", "delete", "--cluster", enrol, *cluster.key_args("adm/user", 3, "aes256-cts-hmac-sha1-96"))

    ticket_hex, _ = cluster.import_key("adm/ticket", 1, "aes256-gcm")
    for alg, name in (("aes256-gcm", "adm/ticket2"), ("aes256", "adm/plain")):
        path = cluster.write_key_file(secrets.token_hex(32))
        refused = cluster.mpcctl("key", "import", "--cluster", enrol, *cluster.key_args(name, 1, alg),
                                 "--key-file", str(path), check=False)
        assert refused.returncode != 0 and "unauthorized" in refused.stderr.lower(), refused.stderr
        assert "admin client key" in refused.stderr, refused.stderr
    refused = cluster.mpcctl("key", "delete", "--cluster", enrol, *cluster.key_args("adm/ticket", 1, "aes256-gcm"),
                             check=False)
    assert refused.returncode != 0 and "unauthorized" in refused.stderr.lower(), refused.stderr
    refused = cluster.mpcctl("aes", "keystream", "--cluster", enrol, *cluster.key_args("adm/k", 1, "aes128"),
                             "--counter", "0" * 32, "--blocks", "1", check=False)
    assert refused.returncode != 0 and "may not compute" in refused.stderr, refused.stderr
    listed = {row[:3] for row in cluster.list_keys("adm/")}
    assert ("adm/ticket", 1, "aes256-gcm") in listed
    assert not {("adm/ticket2", 1, "aes256-gcm"), ("adm/plain", 1, "aes256")} & listed


@pytest.mark.timeout(120)
def test_a_deleted_ticket_key_id_is_never_imported_again(fresh_cluster):
    """Deleting a ticket key leaves a tombstone at every server: importing the same name and
    kvno again is refused, also after the servers restart, while the next kvno and a deleted
    AES key's id import as before."""
    cluster = fresh_cluster
    cluster.import_key("adm/tgt", 7, "aes256-gcm")
    cluster.import_key("adm/plain", 7, "aes256")
    for alg in ("aes256-gcm", "aes256"):
        cluster.mpcctl("key", "delete", "--cluster", str(cluster.admin_config), *cluster.key_args("adm/" + ("tgt" if alg == "aes256-gcm" else "plain"), 7, alg))
    _, again = cluster.import_key("adm/tgt", 7, "aes256-gcm", check=False)
    assert again.returncode != 0 and "never imported again" in again.stderr, again.stderr
    cluster.import_key("adm/plain", 7, "aes256")
    for party in (1, 2, 3):
        cluster.kill_server(party)
        cluster.restart_server(party)
    cluster.wait_until_serving(("adm/plain", 7, "aes256"))
    _, again = cluster.import_key("adm/tgt", 7, "aes256-gcm", check=False)
    assert again.returncode != 0 and "never imported again" in again.stderr, again.stderr
    cluster.import_key("adm/tgt", 8, "aes256-gcm")
    assert ("adm/tgt", 8, "aes256-gcm") in {row[:3] for row in cluster.list_keys("adm/tgt")}
    assert ("adm/tgt", 7, "aes256-gcm") not in {row[:3] for row in cluster.list_keys("adm/tgt")}
