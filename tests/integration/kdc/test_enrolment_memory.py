"""What an admin tool keeps in memory after it enrols users' keys: kadmind (a long-lived
process, the same code path as kadmin.local and mpcctl) enrols a protected user's keys on
password changes made over the network, then its memory is scanned (/proc/PID/mem, a
separate process) for everything the enrolments handled in clear.

Real processes only: three mpc-server processes, a realm over mpc_kdb.so (db2) with
mpc_cluster_config set, krb5kdc and kadmind, and the network kadmin client. Asserted: after
the user is marked (its first key enrolled) and its password changed twice (two more), none
of its keys, their derived keys (Ke, Ki, Kc, PRF key) or the round keys of any of them, and
no 32-byte window of any server's share of them (as each server's store holds it, read with
the store's documented format), is in kadmind's memory; the enrolments did happen; the same
scan finds all those needles in a separate process that holds them and finds the realm's
master key (which kadmind holds) in kadmind itself.
"""

from __future__ import annotations

import secrets

import pytest

from mpctest.kdc_formats import AES256, USER_ALGORITHMS, default_salt, derived_keys, engine_name, round_key_needles, \
    string_to_key
from mpctest.memory_scan import assert_scan_finds, memory_contains
from mpctest.protected_kdc import ProtectedRealm, read_keytab
from mpctest.share_store_reader import stored_shares

USER = "zed"
PASSWORDS = ["zed-pw-1", "zed-pw-2", "zed-pw-3"]   # kvno 1 (enrolled when marked), 2, 3
ADMIN, ADMIN_PW = "admin", "admin-pw"
KEYSALT = "aes256-cts-hmac-sha1-96:normal"
WINDOW = 32


def share_windows(label: str, share: bytes) -> dict[str, bytes]:
    """32-byte windows of a share, away from its first bytes (where an allocator's bookkeeping
    lands in a freed buffer), every 256 bytes."""
    return {f"{label} bytes {at}..{at + WINDOW}": share[at:at + WINDOW]
            for at in range(64, len(share) - WINDOW + 1, 256)}


@pytest.fixture(scope="module")
def realm(tmp_path_factory, cluster):
    root = tmp_path_factory.mktemp("enrolment-memory") / "realm"
    realm = ProtectedRealm(root, cluster, enrol_users=True, realm=f"E{secrets.token_hex(4).upper()}.TEST")
    realm.router_enabled = False          # no protected key is used here: a stock krb5kdc
    try:
        realm.create()
        realm.addprinc(ADMIN, password=ADMIN_PW)
        realm.start_kdc()
        realm.start_kadmind()
        yield realm
    finally:
        realm.stop()


def kadmin(realm: ProtectedRealm, query: str) -> None:
    result = realm.kadmin(ADMIN, ADMIN_PW, query)
    assert result.returncode == 0 and "error" not in result.output.lower(), f"kadmin {query}: {result.output}"


def test_kadmind_keeps_no_key_or_share_after_enrolments(realm):
    principal = realm.principal(USER)
    name = engine_name(principal)
    needles: dict[str, bytes] = {}

    def remember(kvno: int) -> None:
        key = string_to_key(PASSWORDS[kvno - 1], default_salt(principal), AES256)
        label = f"kvno {kvno} {USER_ALGORITHMS[AES256]}"
        needles[f"{label} key"] = key
        needles.update(round_key_needles(f"{label} key", key))
        for what, derived in derived_keys(key).items():
            needles[f"{label} {what}"] = derived
            needles.update(round_key_needles(f"{label} {what}", derived))
        # Each server's share as stored, read before the next password change retires it.
        for party in (1, 2, 3):
            held = {k: v for k, v in stored_shares(realm.cluster.server_dir(party)).items() if k[0] == name}
            assert (name, kvno, 5) in held, f"server {party} holds no share of kvno {kvno}: {sorted(held)}"
            needles.update(share_windows(f"server {party} share of kvno {kvno}", held[(name, kvno, 5)]))

    kadmin(realm, f"addprinc -e {KEYSALT} -pw {PASSWORDS[0]} +requires_preauth {principal}")
    kadmin(realm, f"setstr {principal} mpc-protected true")           # enrols kvno 1
    remember(1)
    for kvno in (2, 3):
        kadmin(realm, f"cpw -e {KEYSALT} -pw {PASSWORDS[kvno - 1]} {principal}")
        remember(kvno)
    assert {(n, kvno) for n, kvno, _, _ in realm.cluster.list_keys(name)} == {(name, 3)}

    pid = realm.kadmind_pid()
    assert memory_contains(pid, needles) == [], "kadmind holds key material after enrolling it"

    # Controls: the same scan finds every needle in a process that holds them, and finds in
    # kadmind the realm's master key, which kadmind does hold.
    assert_scan_finds(needles)
    master = {f"master key enctype {enctype}": key for _, _, enctype, key in read_keytab(realm.stash)}
    assert memory_contains(pid, master) != [], "the scan found nothing kadmind is known to hold"
