"""mpc_kdb.so, the KDB module that wraps db2/klmdb, under the stock Debian MIT krb5 1.20.1.

Real processes only: kdb5_util, kadmin.local, krb5kdc, kadmind and the MIT clients against a
throwaway realm whose database goes through the module (over db2 and over klmdb), plus
kdb_probe, a small C program that opens the database through libkdb5 with exactly the open
flags krb5kdc uses (KDC mode) or the admin tools use (ADMIN mode).

What is asserted: the wrapper is transparent for every tool; a principal marked
`mpc-protected` is read in KDC mode as authenticated handles (compared with handles computed
here independently from the handle key file) and in ADMIN mode as its real keys (compared
with the keys kadmin.local exports); forged, tampered, misplaced and truncated handles are
refused; a handle is useless to real crypto and is never written back to the database.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from mpctest.kdc_formats import AES128, AES256, HANDLE_MAGIC, expected_handle
from mpctest.krb5_realm import Realm

MARKER = "mpc-protected"
HANDLE_LEN = 64
KRB5_BAD_KEYSIZE = -1765328195  # krb5 error table: "Key size is incompatible with encryption type"
PROBE_REFUSED = 3


# ---- helpers ---------------------------------------------------------------------------


def probe(realm: Realm, binary: Path, mode: str, *args: str):
    return realm.run([binary, realm.stash, mode, *args])


def probe_keys(realm: Realm, binary: Path, mode: str, principal: str) -> list[dict]:
    """[{kvno, enctype, stored: bytes, result: bytes | None, error: str | None}] per key_data."""
    res = probe(realm, binary, mode, "keys", realm.principal(principal))
    assert res.returncode == 0, res.output
    keys = []
    for line in res.stdout.splitlines():
        m = re.match(r"key kvno=(\d+) enctype=(-?\d+) stored=([0-9a-f]*) "
                     r"(?:result=([0-9a-f]*)|error=(.*))$", line)
        assert m, line
        keys.append({"kvno": int(m[1]), "enctype": int(m[2]), "stored": bytes.fromhex(m[3]),
                     "result": bytes.fromhex(m[4]) if m[4] is not None else None,
                     "error": m[5]})
    assert keys, res.output
    return keys


def keytab_keys(realm: Realm, keytab: Path) -> dict[tuple[str, int, int], bytes]:
    """{(principal, kvno, enctype): key} from klist -k -K -e."""
    res = realm.klist("-k", "-K", "-e", "-t", str(keytab))
    assert res.returncode == 0, res.output
    names = {"aes256-cts-hmac-sha1-96": AES256, "aes128-cts-hmac-sha1-96": AES128}
    keys = {}
    for line in res.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+\s+\S+\s+(\S+)\s+\((\S+)\)\s+\(0x([0-9a-f]+)\)", line)
        if m:
            keys[(m[2], int(m[1]), names[m[3]])] = bytes.fromhex(m[4])
    assert keys, res.output
    return keys


def handle_key(realm: Realm) -> bytes:
    return realm.handle_key_path.read_bytes()


def getprinc_ok(realm: Realm, name: str) -> str:
    res = realm.getprinc(name)
    assert f"Principal: {realm.principal(name)}" in res.stdout, res.output
    return res.stdout


# ---- the wrapper is transparent --------------------------------------------------------


def test_principal_lifecycle_through_kadmin_local(realm):
    listing = realm.kadmin_local("listprincs", check=True).stdout
    for name in ("K/M", "krbtgt/MPC.TEST", "kadmin/admin"):
        assert f"{name}@MPC.TEST" in listing
    realm.addprinc("alice", password="pw1")
    assert "vno 1" in getprinc_ok(realm, "alice")
    realm.kadmin_local("cpw -pw pw2 alice", check=True)
    assert "vno 2" in getprinc_ok(realm, "alice")
    realm.kadmin_local("cpw -randkey alice", check=True)
    assert "vno 3" in getprinc_ok(realm, "alice")
    realm.kadmin_local("renprinc -force alice alicia", check=True)   # libkdb5's default rename
    getprinc_ok(realm, "alicia")
    realm.kadmin_local("delprinc -force alicia", check=True)
    gone = realm.getprinc("alicia")
    assert "Principal does not exist" in gone.output
    realm.kadmin_local("addpol -minlength 4 short", check=True)      # policies are forwarded
    assert "Policy: short" in realm.kadmin_local("getpol short", check=True).stdout
    realm.kadmin_local("addprinc -policy short -pw longer carol", check=True)
    assert "Policy: short" in getprinc_ok(realm, "carol")


def test_kinit_with_password_and_keytab_klist_and_kvno(realm):
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("bob")
    realm.addprinc("svc/host.test")
    client_keytab = realm.ktadd(["bob"], realm.root / "bob.keytab")
    realm.start_kdc()

    res = realm.kinit("alice", password="alice-pw")
    assert res.returncode == 0, res.output
    listing = realm.klist()
    assert listing.returncode == 0 and "Default principal: alice@MPC.TEST" in listing.stdout
    assert "krbtgt/MPC.TEST@MPC.TEST" in listing.stdout
    res = realm.kvno("svc/host.test")
    assert res.returncode == 0 and "svc/host.test@MPC.TEST: kvno = 1" in res.stdout, res.output

    res = realm.kinit("bob", keytab=client_keytab)
    assert res.returncode == 0, res.output
    assert "Default principal: bob@MPC.TEST" in realm.klist().stdout
    assert realm.kvno("svc/host.test").returncode == 0

    wrong = realm.kinit("alice", password="not-the-password")
    assert wrong.returncode != 0 and "Password incorrect" in wrong.output
    assert realm.kdc_running()
    log = realm.kdc_log()
    assert "ISSUE" in log and "alice@MPC.TEST for svc/host.test@MPC.TEST" in log


def test_lockout_bookkeeping_reaches_the_back_end(realm):
    """audit_as_req is forwarded: a failed preauth is counted, a success resets it."""
    realm.addprinc("dave", password="dave-pw", options="+requires_preauth")
    realm.start_kdc()
    assert realm.kinit("dave", password="wrong").returncode != 0
    assert "Failed password attempts: 1" in getprinc_ok(realm, "dave")
    assert realm.kinit("dave", password="dave-pw").returncode == 0
    info = getprinc_ok(realm, "dave")
    assert "Failed password attempts: 0" in info
    assert "Last successful authentication: [never]" not in info


def test_kdc_with_worker_processes(realm):
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("svc/host.test")
    kdc = realm.start_kdc(workers=2)
    for _ in range(4):
        res = realm.kinit("alice", password="alice-pw")
        assert res.returncode == 0, res.output
        assert realm.kvno("svc/host.test").returncode == 0
    realm.stop_kdc()
    with pytest.raises(ProcessLookupError):
        os.killpg(kdc.pid, 0)   # the workers are gone with their parent


def test_dump_load_and_stash_round_trip(realm, make_realm, backend):
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("carol", password="carol-pw")
    realm.setstr("carol", "note", "kept")
    first = realm.root / "first.dump"
    realm.kdb5_util("dump", str(first), check=True)
    realm.kadmin_local("delprinc -force carol", check=True)
    assert "Principal does not exist" in realm.getprinc("carol").output

    realm.kdb5_util("load", str(first), check=True)       # create(temporary) + promote_db
    getprinc_ok(realm, "carol")
    assert "note: kept" in realm.kadmin_local("getstrs carol", check=True).stdout
    second = realm.root / "second.dump"
    realm.kdb5_util("dump", str(second), check=True)
    assert sorted(first.read_text().splitlines()) == sorted(second.read_text().splitlines())

    # The same dump (and the stash of its master key) makes a new realm.
    other = make_realm("other", backend=backend, create=False)
    other.kdb5_util("load", str(first), check=True)
    shutil.copy(realm.stash, other.stash)
    getprinc_ok(other, "carol")

    realm.kdb5_util("stash", "-f", str(realm.root / "stash2"), check=True)
    assert (realm.root / "stash2").stat().st_size > 0
    realm.start_kdc()
    assert realm.kinit("carol", password="carol-pw").returncode == 0


def test_master_key_rotation_and_destroy(realm, kdb_probe):
    """add_mkey / use_mkey / update_princ_encryption (iterate with writes, decrypt and
    encrypt_key_data) / purge_mkeys, with a protected principal in the database."""
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "true")
    before = probe_keys(realm, kdb_probe, "admin", "svc/host.test")
    realm.run(["kdb5_util", "-r", realm.realm, "add_mkey", "-s"], input="new-master\nnew-master\n",
              check=True)
    realm.kdb5_util("use_mkey", "2", "now-1day", check=True)
    res = realm.kdb5_util("update_princ_encryption", "-f", check=True)
    assert "0 already current" in res.output, res.output
    realm.kdb5_util("purge_mkeys", "-f", check=True)
    assert "KVNO: 1," not in realm.kdb5_util("list_mkeys", check=True).stdout
    after = probe_keys(realm, kdb_probe, "admin", "svc/host.test")
    assert [k["result"] for k in after] == [k["result"] for k in before]   # same keys,
    assert [k["stored"] for k in after] != [k["stored"] for k in before]   # new master key
    assert all(k["stored"].startswith(HANDLE_MAGIC)
               for k in probe_keys(realm, kdb_probe, "kdc", "svc/host.test"))
    realm.start_kdc()
    assert realm.kinit("alice", password="alice-pw").returncode == 0
    realm.stop_kdc()
    res = realm.kdb5_util("destroy", "-f", check=True)
    assert "destroyed" in res.output
    assert list((realm.root / "db").iterdir()) == []


def test_kadmind_over_the_network(realm):
    realm.addprinc("admin", password="admin-pw")
    realm.addprinc("alice", password="alice-pw")
    realm.start_kdc()
    realm.start_kadmind()
    res = realm.kadmin("admin", "admin-pw", "getprinc alice")
    assert res.returncode == 0 and "Principal: alice@MPC.TEST" in res.stdout, res.output
    res = realm.kadmin("admin", "admin-pw", "addprinc -pw erin-pw erin")
    assert res.returncode == 0 and "created" in res.output, res.output
    res = realm.kadmin("admin", "admin-pw", "setstr erin mpc-protected false")
    assert res.returncode == 0, res.output
    assert realm.kinit("erin", password="erin-pw").returncode == 0
    assert "kadm5_get_principal, alice@MPC.TEST, success" in realm.kadmind_log()


# ---- protected principals: handles in KDC mode, real keys elsewhere ---------------------


def test_protected_principal_reads_as_handles_only_in_kdc_mode(realm, kdb_probe):
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "true")
    # kadmin.local (ADMIN mode) still exports the real keys of the marked principal.
    exported = keytab_keys(realm, realm.ktadd(["svc/host.test"], realm.root / "svc.keytab",
                                              norandkey=True))
    assert not any(key.startswith(HANDLE_MAGIC) or len(key) == HANDLE_LEN
                   for key in exported.values())
    name = "svc/host.test@MPC.TEST"

    admin = probe_keys(realm, kdb_probe, "admin", "svc/host.test")
    assert sorted(k["enctype"] for k in admin) == [AES128, AES256]
    for k in admin:   # the admin view: the real keys, as kadmin.local exports them
        assert k["result"] == exported[(name, k["kvno"], k["enctype"])]
        assert not k["stored"].startswith(HANDLE_MAGIC)

    kdc = probe_keys(realm, kdb_probe, "kdc", "svc/host.test")
    for k in kdc:     # the KDC view: handles, computed here from the key file
        handle = expected_handle(handle_key(realm), name, k["kvno"], k["enctype"])
        assert k["stored"] == handle and k["result"] == handle
        assert len(k["result"]) == HANDLE_LEN
        assert exported[(name, k["kvno"], k["enctype"])] not in k["stored"]

    # kdb5_util (ADMIN mode) dumps the real, master-key-encrypted data.
    dump = realm.root / "db.dump"
    realm.kdb5_util("dump", str(dump), check=True)
    text = dump.read_text()
    for k in admin:
        assert k["stored"].hex() in text
    assert HANDLE_MAGIC.hex() not in text
    assert f"{MARKER}: true" in realm.kadmin_local("getstrs svc/host.test", check=True).stdout


def test_unmarked_principals_are_untouched_in_kdc_mode(realm, kdb_probe):
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("bob", password="bob-pw")
    realm.setstr("bob", MARKER, "off")    # an explicit "not protected" value
    for name in ("alice", "bob", "krbtgt/MPC.TEST"):
        assert probe_keys(realm, kdb_probe, "kdc", name) == \
            probe_keys(realm, kdb_probe, "admin", name)
    realm.setstr("bob", MARKER, "on")
    assert all(k["stored"].startswith(HANDLE_MAGIC)
               for k in probe_keys(realm, kdb_probe, "kdc", "bob"))


def test_forged_tampered_and_misplaced_handles_are_refused(realm, kdb_probe):
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "1")
    good = probe_keys(realm, kdb_probe, "kdc", "svc/host.test")[0]
    kvno, enctype, handle = str(good["kvno"]), str(good["enctype"]), good["stored"]

    def decrypt(blob: bytes, kvno=kvno, enctype=enctype):
        return probe(realm, kdb_probe, "kdc", "decrypt", kvno, enctype, blob.hex())

    ok = decrypt(handle)
    assert ok.returncode == 0 and ok.stdout.strip() == f"result={handle.hex()}", ok.output
    for offset in (0, 3, 4, 5, 8, 12, 16, 31, 32, 47, 63):
        tampered = bytearray(handle)
        tampered[offset] ^= 0x01
        res = decrypt(bytes(tampered))
        assert res.returncode == PROBE_REFUSED, f"offset {offset}: {res.output}"
    res = decrypt(handle[:32] + bytes(32))
    assert res.returncode == PROBE_REFUSED and "failed authentication" in res.stdout
    forged = expected_handle(os.urandom(32), "svc/host.test@MPC.TEST", good["kvno"], good["enctype"])
    res = decrypt(forged)
    assert res.returncode == PROBE_REFUSED and "failed authentication" in res.stdout
    res = decrypt(handle, kvno=str(good["kvno"] + 1))   # a valid handle in the wrong slot
    assert res.returncode == PROBE_REFUSED and "names kvno" in res.stdout
    assert decrypt(handle[:-1]).returncode == PROBE_REFUSED   # no longer a handle: stock path
    # ADMIN mode never accepts a handle, even a valid one.
    res = probe(realm, kdb_probe, "admin", "decrypt", kvno, enctype, handle.hex())
    assert res.returncode == PROBE_REFUSED and "outside KDC mode" in res.stdout


def test_a_handle_is_useless_to_real_crypto(realm, kdb_probe):
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "yes")
    res = probe(realm, kdb_probe, "kdc", "crypto", "svc/host.test@MPC.TEST")
    assert res.returncode == 0, res.output
    fields = dict(item.split("=") for item in res.stdout.split())
    assert fields["length"] == str(HANDLE_LEN)
    assert int(fields["encrypt"]) != 0 and int(fields["decrypt"]) != 0
    assert int(fields["checksum"]) == KRB5_BAD_KEYSIZE


def test_the_kdc_never_writes_a_handle_back(realm, kdb_probe):
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "true")
    before = probe_keys(realm, kdb_probe, "admin", "svc/host.test")
    res = probe(realm, kdb_probe, "kdc", "put", "svc/host.test@MPC.TEST")
    assert "refusing to store key handles" in res.stdout, res.output
    assert probe_keys(realm, kdb_probe, "admin", "svc/host.test") == before
    # Writing the real entry back (ADMIN mode) is of course allowed.
    assert probe(realm, kdb_probe, "admin", "put", "svc/host.test@MPC.TEST").stdout.strip() == "put=0"


def test_running_kdc_gets_handles_and_fails_closed(realm, kdb_probe):
    """Without the crypto router a protected key cannot be used: the KDC refuses the request,
    stays up, and serves the principal again once the marker is removed."""
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("svc/host.test")
    realm.setstr("svc/host.test", MARKER, "true")
    realm.start_kdc()
    assert realm.kinit("alice", password="alice-pw").returncode == 0
    res = realm.kvno("svc/host.test")
    assert res.returncode != 0, res.output
    assert "Key size is incompatible with encryption type" in realm.kdc_log()
    assert realm.kdc_running()
    realm.delstr("svc/host.test", MARKER)
    res = realm.kvno("svc/host.test")
    assert res.returncode == 0, res.output


def test_failed_logins_of_a_protected_user_keep_its_keys(realm, kdb_probe):
    """db2's lockout writes back the entry the KDC passes to audit_as_req; for a protected
    principal that entry holds handles, so the wrapper hands the back end the real entry."""
    realm.addprinc("alice", password="alice-pw", options="+requires_preauth")
    before = probe_keys(realm, kdb_probe, "admin", "alice")
    realm.setstr("alice", MARKER, "true")
    realm.start_kdc()
    assert realm.kinit("alice", password="alice-pw").returncode != 0   # no router yet
    assert "PREAUTH_FAILED: alice@MPC.TEST" in realm.kdc_log()
    assert "Failed password attempts: 1" in getprinc_ok(realm, "alice")   # it was written
    assert probe_keys(realm, kdb_probe, "admin", "alice") == before
    realm.delstr("alice", MARKER)
    assert realm.kinit("alice", password="alice-pw").returncode == 0


def test_a_back_end_that_stores_the_server_entry_is_handed_the_real_one(make_realm, kdb_probe,
                                                                         audit_writing_backend):
    """MIT's db2 and klmdb audit only the client of an AS request, so the wrapper hands them the
    KDC's server entry as it is; any other back end gets the real entry, read afresh. This one
    stores the server entry it is handed: with handles in it, the service's stored keys would
    become handles."""
    realm = make_realm("audit-writing", create=False, module_dirs=[audit_writing_backend])
    realm.write_config({"mpc_backend": "audit_writing"})
    realm.create()
    realm.addprinc("alice", password="alice-pw", options="+requires_preauth")
    realm.addprinc("svc/host.test")
    before = probe_keys(realm, kdb_probe, "admin", "svc/host.test")
    assert "Last successful authentication: [never]" in getprinc_ok(realm, "svc/host.test")
    realm.setstr("svc/host.test", MARKER, "true")   # the KDC gets handles for its keys
    realm.start_kdc()
    realm.kinit("alice", password="alice-pw", args=["-S", realm.principal("svc/host.test")])
    assert "Last successful authentication: [never]" not in getprinc_ok(realm, "svc/host.test"), \
        "the back end's audit did not store the server entry: nothing was tested"
    assert probe_keys(realm, kdb_probe, "admin", "svc/host.test") == before


# ---- configuration ---------------------------------------------------------------------


def test_configuration_errors_are_reported(make_realm, fake_backends):
    missing = make_realm("missing", create=False)
    missing.write_config({"mpc_backend": "nosuch"})
    res = missing.kdb5_util("create", "-s", "-P", "pw")
    assert res.returncode != 0 and "back end 'nosuch' not found" in res.output

    itself = make_realm("itself", create=False)
    itself.write_config({"mpc_backend": "mpc_kdb"})
    res = itself.kdb5_util("create", "-s", "-P", "pw")
    assert res.returncode != 0 and "names the wrapper itself" in res.output

    bad_name = make_realm("badname", create=False)
    bad_name.write_config({"mpc_backend": "../db2"})
    res = bad_name.kdb5_util("create", "-s", "-P", "pw")
    assert res.returncode != 0 and "is not a module name" in res.output

    old_dal = make_realm("olddal", create=False, module_dirs=[fake_backends])
    old_dal.write_config({"mpc_backend": "fake_v8"})
    res = old_dal.kdb5_util("create", "-s", "-P", "pw")
    assert res.returncode != 0 and "KDB DAL major version 8" in res.output, res.output

    overrides = make_realm("overrides", create=False, module_dirs=[fake_backends])
    overrides.write_config({"mpc_backend": "fake_cpw"})
    res = overrides.kdb5_util("create", "-s", "-P", "pw")
    assert res.returncode != 0 and "implements change_pwd" in res.output, res.output


def test_handle_key_file_is_checked_in_kdc_mode_only(make_realm, kdb_probe):
    realm = make_realm()
    realm.addprinc("alice", password="alice-pw")
    realm.handle_key_path.chmod(0o644)
    assert realm.kadmin_local("getprinc alice").returncode == 0   # admin tools never read it
    with pytest.raises(AssertionError, match="no group or others|must not be accessible"):
        realm.start_kdc()
    realm.handle_key_path.chmod(0o600)
    realm.handle_key_path.write_bytes(os.urandom(31))
    with pytest.raises(AssertionError, match="exactly 32 bytes"):
        realm.start_kdc()


def test_without_a_handle_key_marked_principals_fail_closed(make_realm, kdb_probe):
    realm = make_realm(handle_key=False)
    realm.addprinc("alice", password="alice-pw")
    realm.addprinc("svc/host.test")
    realm.start_kdc()   # a KDC without a handle key serves unmarked principals as usual
    assert realm.kinit("alice", password="alice-pw").returncode == 0
    realm.setstr("svc/host.test", MARKER, "true")
    res = probe(realm, kdb_probe, "kdc", "keys", "svc/host.test@MPC.TEST")
    assert res.returncode != 0 and "no mpc_handle_key_file is configured" in res.output
    assert realm.kvno("svc/host.test").returncode != 0
    assert realm.kdc_running()
