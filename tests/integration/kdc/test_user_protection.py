"""Protected users end to end: users' aes128/aes256-cts-hmac-sha1-96 keys enrolled into the
engine by the KDB module when kadmin stores them, and the unmodified Debian clients logging
in against krb5kdc with the crypto router.

Real processes only: three mpc-server processes, a realm over mpc_kdb.so (db2) with
mpc_cluster_config set, its krbtgt protected with `mpcctl kdc protect`, `krb5kdc -w 4` with
mpc_crypto_router.so preloaded, kadmin.local, kdb5_util, kinit, kvno, kdc-storm. What is
asserted:
- kadmin.local addprinc + setstr mpc-protected, and cpw: the database holds per key its
  enctype, kvno and salt with the user marker (under the master key) instead of the key; the
  key (known from the password: RFC 3962 string-to-key here, checked against libkrb5's) is in
  no dump or database file; krb5kdc's view is the expected handle; the engine lists the key;
- kinit with the password for a user with only aes256 keys and one with only aes128 keys,
  kinit -T (FAST) then kvno, a user without requires_preauth; a wrong password is refused;
- the same for users with only an RFC 8009 key (aes256-cts-hmac-sha384-192 or
  aes128-cts-hmac-sha256-128): enrolled, kinit by password and with FAST then kvno, the
  KDC's reply in that enctype, and neither key in the memory of any krb5kdc process;
- neither the keys nor the keys derived from them (Ke, Ki, Kc per usage, the PRF key), nor
  the round keys of any of them, are in the memory of any krb5kdc process or in any file of
  the realm or of any engine server, while the same memory scan finds them all in a
  separate process that holds them;
- `mpcctl kdc protect --all-users`, then 50 concurrent logins of 50 protected users;
- cpw re-enrols at kvno + 1 and deletes the old engine key; `mpcctl kdc unprotect` gives new
  keys and deletes the engine keys; refusals (other enctypes, K/M, kadmin/*, no engine, SPAKE)
  and an import failure (an engine server stopped) leave the stored entry as it was.

Until the engine's Kerberos jobs and the router's user path are in place the login tests fail
with the KDC's or kinit's error, which the assertion messages show.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
import subprocess
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.kdc_formats import (AES128, AES256, ENGINE_USAGES, USER_ALGORITHMS, USER_MARKER, default_salt,
                                 derived_keys, engine_name, expected_handle, nfold, round_key_needles, string_to_key)
from mpctest.ccache_tickets import session_keys
from mpctest.data_link_tools import Relay, client_config_with, data_port, frames_of
from mpctest.protected_kdc import (ProtectedRealm, assert_scan_finds, files_containing, kdc_pids, memory_contains,
                                   probe_keys, read_keytab, router_library)

from mpctest import storm

ATTRIBUTE = "mpc-protected"
SERVICE = "svc/host.test"
PASSWORDS = {"ann": "ann-pw-1", "ben": "ben-pw-1", "cid": "cid-pw-1"}
ENCTYPES = {"ann": [AES256], "ben": [AES128], "cid": [AES256, AES128]}
# RFC 8009 users: one key each, of aes256-cts-hmac-sha384-192 (20) or aes128-cts-hmac-sha256-128 (19).
AES256_SHA2, AES128_SHA2 = 20, 19
SHA2_NAMES = {AES256_SHA2: "aes256-cts-hmac-sha384-192", AES128_SHA2: "aes128-cts-hmac-sha256-128"}
SHA2_USERS = {"dee": AES256_SHA2, "eve": AES128_SHA2}
PASSWORDS.update({"dee": "dee-pw-1", "eve": "eve-pw-1"})
STORM_USERS = 50
WORKERS = 4
# The engine's Kerberos jobs are sequential AES and SHA-1 circuits: give them time on a
# loaded test machine (the cluster's own configuration waits 2 s).
ENGINE_TIMEOUT_MS = 20000
ROUTER_UNREACHABLE_RETRY_S = 3.0   # the router's unreachable_retry_ms default (not set here)


# ---- helpers ---------------------------------------------------------------------------

def kdc(realm: ProtectedRealm, *args: str, input_text: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(mpc_cluster.mpcctl_binary()), "kdc", *args], env=realm.env, cwd=realm.root,
                          capture_output=True, text=True, timeout=300, input=input_text)


def engine_keys(cluster: mpc_cluster.Cluster, principal: str) -> set[tuple[int, str]]:
    name = engine_name(principal)
    return {(kvno, alg) for key, kvno, alg, _ in cluster.list_keys(name) if key == name}


def user_keys(realm: ProtectedRealm, user: str, password: str, enctypes: list[int]) -> dict[str, bytes]:
    """The user's keys, the keys derived from them and the round keys of each, by label."""
    principal = realm.principal(user)
    found = {}
    for enctype in enctypes:
        key = string_to_key(password, default_salt(principal), enctype)
        found[f"{user} {USER_ALGORITHMS[enctype]} key"] = key
        found.update(round_key_needles(f"{user} {USER_ALGORITHMS[enctype]} key", key))
        for label, derived in derived_keys(key).items():
            found[f"{user} {USER_ALGORITHMS[enctype]} {label}"] = derived
            found.update(round_key_needles(f"{user} {USER_ALGORITHMS[enctype]} {label}", derived))
    return found


def sha2_kdf(key: bytes, label: bytes, bits: int, enctype: int) -> bytes:
    """RFC 8009 KDF-HMAC-SHA2(key, label, k): HMAC of 00000001 | label | 00 | k, first k bits."""
    digest = "sha256" if enctype == AES128_SHA2 else "sha384"
    return hmac.new(key, b"\0\0\0\1" + label + b"\0" + bits.to_bytes(4, "big"), digest).digest()[:bits // 8]


def sha2_user_keys(user: str, key: bytes, enctype: int) -> dict[str, bytes]:
    """An RFC 8009 user's key, its derived keys per engine usage (Ke, Ki, Kc) and the round
    keys of the key and of each Ke, by label."""
    name = f"{user} {SHA2_NAMES[enctype]}"
    found = {f"{name} key": key, **round_key_needles(f"{name} key", key)}
    ke_bits, mac_bits = (128, 128) if enctype == AES128_SHA2 else (256, 192)
    for usage in ENGINE_USAGES:
        for role, byte, bits in (("Ke", 0xAA, ke_bits), ("Ki", 0x55, mac_bits), ("Kc", 0x99, mac_bits)):
            derived = sha2_kdf(key, usage.to_bytes(4, "big") + bytes([byte]), bits, enctype)
            found[f"{name} {role} usage {usage}"] = derived
            if role == "Ke":
                found.update(round_key_needles(f"{name} Ke usage {usage}", derived))
    return found


def sha2_string_to_key(password: str, salt: str, enctype: int, iterations: int = 32768) -> bytes:
    """RFC 8009 section 4: PBKDF2-HMAC-SHA2 over enctype name | 00 | salt, then
    KDF-HMAC-SHA2(tkey, "kerberos", k)."""
    digest = "sha256" if enctype == AES128_SHA2 else "sha384"
    size = 16 if enctype == AES128_SHA2 else 32
    saltp = SHA2_NAMES[enctype].encode() + b"\0" + salt.encode()
    tkey = hashlib.pbkdf2_hmac(digest, password.encode(), saltp, iterations, size)
    message = b"\0\0\0\1kerberos\0" + (size * 8).to_bytes(4, "big")
    return hmac.new(tkey, message, digest).digest()[:size]


def kinit(realm: ProtectedRealm, user: str, password: str, ccache: str, *args: str):
    return realm.run(["kinit", "-c", ccache, *args, realm.principal(user)], input=f"{password}\n")


def cache(realm: ProtectedRealm, name: str) -> str:
    return f"FILE:{realm.root / name}"


def getprinc(realm: ProtectedRealm, user: str) -> str:
    return realm.kadmin_local(f"getprinc {realm.principal(user)}", check=True).stdout


def assert_login(realm: ProtectedRealm, result, what: str) -> None:
    assert result.returncode == 0, (f"{what} failed: {result.output}\n--- KDC log:\n"
                                    f"{realm.kdc_log()[-3000:]}")


# ---- the realm ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def realm(tmp_path_factory, cluster):
    if not router_library().is_file():
        pytest.fail(f"mpc_crypto_router.so not built: {router_library()}")
    root = tmp_path_factory.mktemp("users") / "realm"
    realm = ProtectedRealm(root, cluster, enrol_users=True, realm=f"U{secrets.token_hex(4).upper()}.TEST")
    # Beside the cluster's own configuration: its relative key paths stay valid.
    patient = cluster.dir / "compute-patient.toml"
    mpc_cluster.Cluster.copy_client_config(cluster.compute_config, patient, ENGINE_TIMEOUT_MS)
    realm.router_conf.write_text(f"handle_key_file = {realm.handle_key_path}\nengine_config = {patient}\n"
                                 f"metrics_file = {realm.root / 'router.metrics'}\n")
    try:
        realm.create()
        realm.protect()                       # krbtgt, as before
        for user, enctypes in ENCTYPES.items():
            keysalts = " ".join(f"{USER_ALGORITHMS[e]}:normal" for e in enctypes)
            preauth = "" if user == "cid" else "+requires_preauth"
            realm.addprinc(user, password=PASSWORDS[user], options=f"{preauth} -e \"{keysalts}\"")
        for user, enctype in SHA2_USERS.items():
            realm.addprinc(user, password=PASSWORDS[user], options=f"+requires_preauth -e {SHA2_NAMES[enctype]}:normal")
        realm.addprinc(SERVICE)
        realm.addprinc("plain", password="plain-pw")
        realm.addprinc("plain-sha2", password="plain-sha2-pw",
                       options=f"-e \"{SHA2_NAMES[AES256_SHA2]}:normal {SHA2_NAMES[AES128_SHA2]}:normal\"")
        for user in [*ENCTYPES, *SHA2_USERS]:
            realm.setstr(user, ATTRIBUTE, "true")
        realm.start_kdc(workers=WORKERS)
        yield realm
    finally:
        realm.stop()


# ---- our reference derivation -------------------------------------------------------------

def test_reference_derivation_matches_rfc_and_libkrb5(realm, tmp_path):
    # RFC 3961 appendix A.1 n-fold vectors.
    assert nfold(b"012345", 8).hex() == "be072631276b1955"
    assert nfold(b"password", 7).hex() == "78a07b6caf85fa"
    assert nfold(b"kerberos", 16).hex() == "6b65726265726f737b9b5b2b93132b93"
    # string-to-key against libkrb5's, through an unprotected principal's exported keys.
    keytab = realm.ktadd(["plain"], tmp_path / "plain.keytab", norandkey=True)
    exported = {enctype: key for _, _, enctype, key in read_keytab(keytab)}
    for enctype in (AES256, AES128):
        assert exported[enctype] == string_to_key("plain-pw", default_salt(realm.principal("plain")), enctype)


# ---- what is stored --------------------------------------------------------------------

def test_database_holds_markers_with_enctype_kvno_and_salt(realm, kdb_probe):
    for user, enctypes in ENCTYPES.items():
        principal = realm.principal(user)
        admin = probe_keys(realm, kdb_probe, "admin", principal)
        assert sorted((k["kvno"], k["enctype"]) for k in admin) == sorted((1, e) for e in enctypes), admin
        assert all(k["result"] == USER_MARKER for k in admin), admin
        seen = probe_keys(realm, kdb_probe, "kdc", principal)
        handle_key = realm.handle_key_path.read_bytes()
        for key in seen:
            assert key["result"] == expected_handle(handle_key, principal, key["kvno"], key["enctype"]), key
        shown = getprinc(realm, user)
        assert f"{ATTRIBUTE}" in realm.kadmin_local(f"getstrs {principal}", check=True).stdout
        for enctype in enctypes:
            assert f"Key: vno 1, {USER_ALGORITHMS[enctype]}" in shown, shown   # enctype and normal salt kept
        assert engine_keys(realm.cluster, principal) == {(1, USER_ALGORITHMS[e]) for e in enctypes}


def test_no_key_in_dump_or_database_files(realm, kdb_probe):
    realm.kdb5_util("dump", str(realm.root / "users.dump"), check=True)
    # kdb5_util load (and so kpropd) carries the markers as they are.
    realm.kdb5_util("load", str(realm.root / "users.dump"), check=True)
    admin = probe_keys(realm, kdb_probe, "admin", realm.principal("ann"))
    assert [(k["kvno"], k["enctype"], k["result"]) for k in admin] == [(1, AES256, USER_MARKER)], admin
    needles = {}
    for user in ENCTYPES:
        needles.update(user_keys(realm, user, PASSWORDS[user], ENCTYPES[user]))
    hits = files_containing(realm.root, needles)
    assert hits == [], hits
    # The scan finds a key where it is: the unprotected principal's key in its keytab.
    keytab = realm.ktadd(["plain"], realm.root / "plain-check.keytab", norandkey=True)
    try:
        plain = {"plain key": string_to_key("plain-pw", default_salt(realm.principal("plain")), AES256)}
        assert files_containing(realm.root, plain) != []
    finally:
        keytab.unlink()


# ---- logins ------------------------------------------------------------------------------

@pytest.mark.parametrize("user", ["ann", "ben"])
def test_kinit_with_password_then_kvno(realm, user):
    cc = cache(realm, f"{user}.cc")
    assert_login(realm, kinit(realm, user, PASSWORDS[user], cc), f"kinit {user}")
    klist = realm.run(["klist", "-e", "-c", cc]).check()
    assert realm.principal(user) in klist.stdout
    assert_login(realm, realm.run(["kvno", "-c", cc, realm.principal(SERVICE)]), f"kvno as {user}")


def test_fast_armored_login_then_kvno(realm):
    armor = cache(realm, "armor.cc")
    assert_login(realm, kinit(realm, "plain", "plain-pw", armor), "kinit for the armor ticket")
    cc = cache(realm, "fast.cc")
    assert_login(realm, kinit(realm, "ann", PASSWORDS["ann"], cc, "-T", armor), "kinit -T ann")
    assert_login(realm, realm.run(["kvno", "-c", cc, realm.principal(SERVICE)]), "kvno after FAST")


def test_protected_user_without_requires_preauth(realm):
    assert "REQUIRES_PRE_AUTH" not in getprinc(realm, "cid")
    assert_login(realm, kinit(realm, "cid", PASSWORDS["cid"], cache(realm, "cid.cc")), "kinit cid")


def test_wrong_password_is_refused(realm):
    result = kinit(realm, "ann", "not-the-password", cache(realm, "wrong.cc"))
    assert result.returncode != 0
    assert "Password incorrect" in result.stderr or "Preauthentication failed" in result.stderr, result.stderr
    assert realm.kdc_running()
    # and the right one still works (the lockout counter was written back without handles)
    assert_login(realm, kinit(realm, "ann", PASSWORDS["ann"], cache(realm, "right.cc")), "kinit ann again")


@pytest.mark.timeout(120)
def test_an_engine_outage_locks_no_one_out(realm):
    """While an engine server is down the preauth decryption gets no verdict, and krb5kdc
    answers PREAUTH_FAILED whatever the password. Those failures are not counted against
    the user's lockout; wrong passwords with the engine up still are."""
    realm.kadmin_local("addpol -maxfailure 2 -lockoutduration 0 outage-lock", check=True)
    realm.addprinc("olga", password="olga-pw", options="+requires_preauth -policy outage-lock "
                   "-e aes256-cts-hmac-sha1-96:normal")
    realm.setstr("olga", ATTRIBUTE, "true")
    assert_login(realm, kinit(realm, "olga", "olga-pw", cache(realm, "olga.cc")), "kinit olga")
    realm.cluster.kill_server(2)
    try:
        for attempt in range(4):
            result = kinit(realm, "olga", "olga-pw", cache(realm, f"olga-outage-{attempt}.cc"))
            assert result.returncode != 0, "a login succeeded with an engine server down"
        assert "Failed password attempts: 0" in getprinc(realm, "olga")
    finally:
        realm.cluster.restart_server(2)
    deadline = time.monotonic() + 20
    while kinit(realm, "olga", "olga-pw", cache(realm, "olga-back.cc")).returncode != 0:
        assert time.monotonic() < deadline, f"olga cannot log in after the outage:\n{realm.kdc_log()[-2000:]}"
        time.sleep(0.5)
    # Each krb5kdc worker's router, once it found the engine unreachable, refuses at once
    # for unreachable_retry_ms: some workers may still be inside that window. After it,
    # every worker decides again (and the next tests find the realm as they expect it).
    time.sleep(ROUTER_UNREACHABLE_RETRY_S + 0.5)
    for attempt in range(WORKERS):
        assert_login(realm, kinit(realm, "olga", "olga-pw", cache(realm, f"olga-back-{attempt}.cc")),
                     "kinit olga after the outage")
    for attempt in range(2):
        assert kinit(realm, "olga", "not-olga-pw", cache(realm, f"olga-wrong-{attempt}.cc")).returncode != 0
    assert "Failed password attempts: 2" in getprinc(realm, "olga")
    locked = kinit(realm, "olga", "olga-pw", cache(realm, "olga-locked.cc"))
    assert locked.returncode != 0 and "revoked" in locked.stderr, locked.output


def router_metrics(realm: ProtectedRealm) -> dict[str, float]:
    """{'name{labels}': value} of `mpcctl kdc metrics`: the counters every krb5kdc worker adds to."""
    result = realm.run([mpc_cluster.mpcctl_binary(), "kdc", "metrics", "--file", realm.root / "router.metrics"],
                       timeout=30).check()
    samples = {}
    for line in result.stdout.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def calls(samples: dict[str, float], operation: str, result: str) -> float:
    return samples[f'mpc_kdc_engine_calls_total{{operation="{operation}",result="{result}"}}']


def test_the_router_counts_its_engine_calls_across_workers(realm, tmp_path):
    """Every worker adds its engine calls to one file: a login shows as Kerberos jobs and a
    ticket tag; each operation's latency histogram counts every call; an outage shows as
    unreachable calls, a period of them and calls failed at once; `--out` writes the same
    text whole; nothing names a principal or a key."""
    # A worker maps the file at its first engine call: one login makes it, run alone too.
    assert_login(realm, kinit(realm, "ann", PASSWORDS["ann"], cache(realm, "metered-first.cc")), "kinit ann")
    before = router_metrics(realm)
    for attempt in range(WORKERS):
        assert_login(realm, kinit(realm, "ann", PASSWORDS["ann"], cache(realm, f"metered-{attempt}.cc")), "kinit ann")
    after = router_metrics(realm)
    assert calls(after, "krb", "ok") >= calls(before, "krb", "ok") + 2 * WORKERS  # preauth, reply
    assert calls(after, "gcm_tag", "ok") + calls(after, "gcm_tag_chained", "ok") > (
        calls(before, "gcm_tag", "ok") + calls(before, "gcm_tag_chained", "ok"))
    for operation in ("gcm_tag", "gcm_tag_chained", "gcm_open", "krb", "prefetch"):
        total = sum(calls(after, operation, r) for r in ("ok", "bad_tag", "aborted", "unreachable", "error"))
        label = f'operation="{operation}"'
        assert after[f"mpc_kdc_engine_call_seconds_count{{{label}}}"] == total
        assert after[f'mpc_kdc_engine_call_seconds_bucket{{{label},le="+Inf"}}'] == total
    # The workers that sealed keep nonce pools, refilled in the background: their levels add up.
    deadline = time.monotonic() + 20
    while router_metrics(realm)['mpc_kdc_nonces_pooled{pool="ticket"}'] == 0:
        assert time.monotonic() < deadline, "no worker's ticket nonce pool shows in the metrics"
        time.sleep(0.5)
    pooled = router_metrics(realm)
    assert 1 <= pooled["mpc_kdc_router_workers"] <= WORKERS
    out = tmp_path / "mpc-kdc.prom"
    realm.run([mpc_cluster.mpcctl_binary(), "kdc", "metrics", "--file", realm.root / "router.metrics",
               "--out", out], timeout=30).check()
    text = out.read_text()
    assert "mpc_kdc_engine_calls_total" in text and not (tmp_path / "mpc-kdc.prom.partial").exists()
    assert "ann" not in text and realm.realm not in text and "kdc/" not in text

    realm.cluster.kill_server(2)
    try:
        # Each worker marks the engine down on its own: logins until one lands on a worker
        # that has (its next call within unreachable_retry_ms fails at once).
        for attempt in range(3 * WORKERS):
            assert kinit(realm, "ann", PASSWORDS["ann"], cache(realm, f"metered-down-{attempt}.cc")).returncode != 0
            if router_metrics(realm)["mpc_kdc_engine_failed_fast_total"] > after["mpc_kdc_engine_failed_fast_total"]:
                break
    finally:
        realm.cluster.restart_server(2)
    down = router_metrics(realm)
    assert sum(calls(down, op, "unreachable") for op in ("krb", "gcm_tag", "gcm_open", "prefetch")) > sum(
        calls(after, op, "unreachable") for op in ("krb", "gcm_tag", "gcm_open", "prefetch"))
    assert down["mpc_kdc_engine_unreachable_periods_total"] > after["mpc_kdc_engine_unreachable_periods_total"]
    assert down["mpc_kdc_engine_failed_fast_total"] > after["mpc_kdc_engine_failed_fast_total"]
    deadline = time.monotonic() + 20
    while kinit(realm, "ann", PASSWORDS["ann"], cache(realm, "metered-back.cc")).returncode != 0:
        assert time.monotonic() < deadline, f"ann cannot log in after the outage:\n{realm.kdc_log()[-2000:]}"
        time.sleep(0.5)
    time.sleep(ROUTER_UNREACHABLE_RETRY_S + 0.5)


# ---- RFC 8009 users ----------------------------------------------------------------------

def test_sha2_string_to_key_matches_libkrb5(realm, tmp_path):
    keytab = realm.ktadd(["plain-sha2"], tmp_path / "plain-sha2.keytab", norandkey=True)
    exported = {enctype: key for _, _, enctype, key in read_keytab(keytab)}
    salt = default_salt(realm.principal("plain-sha2"))
    for enctype in (AES256_SHA2, AES128_SHA2):
        assert exported[enctype] == sha2_string_to_key("plain-sha2-pw", salt, enctype), enctype


def test_sha2_users_are_enrolled(realm, kdb_probe):
    for user, enctype in SHA2_USERS.items():
        principal = realm.principal(user)
        admin = probe_keys(realm, kdb_probe, "admin", principal)
        assert [(k["kvno"], k["enctype"], k["result"]) for k in admin] == [(1, enctype, USER_MARKER)], admin
        handle_key = realm.handle_key_path.read_bytes()
        for key in probe_keys(realm, kdb_probe, "kdc", principal):
            assert key["result"] == expected_handle(handle_key, principal, key["kvno"], key["enctype"]), key
        assert engine_keys(realm.cluster, principal) == {(1, SHA2_NAMES[enctype])}


def assert_reply_enctype(realm: ProtectedRealm, user: str, enctype: int, before: int) -> None:
    """krb5kdc logs each AS exchange with the enctype of its reply (rep=): the user's key's."""
    log = realm.kdc_log()[before:]
    lines = [line for line in log.splitlines() if "AS_REQ" in line and realm.principal(user) in line
             and "ISSUE" in line]
    # "etypes {rep=aes256-cts-hmac-sha384-192(20), tkt=..., ses=...}" (older releases: rep=20)
    replies = [re.search(r"rep=(?:[\w-]+\()?(\d+)", line) for line in lines]
    assert lines and all(m and int(m[1]) == enctype for m in replies), log[-2000:]


@pytest.mark.parametrize("user", sorted(SHA2_USERS))
def test_sha2_user_kinit_with_password_then_kvno(realm, user):
    before = len(realm.kdc_log())
    cc = cache(realm, f"{user}.cc")
    assert_login(realm, kinit(realm, user, PASSWORDS[user], cc), f"kinit {user}")
    assert_reply_enctype(realm, user, SHA2_USERS[user], before)
    assert_login(realm, realm.run(["kvno", "-c", cc, realm.principal(SERVICE)]), f"kvno as {user}")
    result = kinit(realm, user, "not-the-password", cache(realm, f"{user}-wrong.cc"))
    assert result.returncode != 0 and realm.kdc_running()


@pytest.mark.parametrize("user", sorted(SHA2_USERS))
def test_sha2_user_fast_armored_login_then_kvno(realm, user):
    armor = cache(realm, f"armor-{user}.cc")
    assert_login(realm, kinit(realm, "plain", "plain-pw", armor), "kinit for the armor ticket")
    before = len(realm.kdc_log())
    cc = cache(realm, f"fast-{user}.cc")
    assert_login(realm, kinit(realm, user, PASSWORDS[user], cc, "-T", armor), f"kinit -T {user}")
    assert_reply_enctype(realm, user, SHA2_USERS[user], before)
    assert_login(realm, realm.run(["kvno", "-c", cc, realm.principal(SERVICE)]), f"kvno after FAST as {user}")


def test_sha2_keys_absent_from_kdc_memory(realm):
    needles = {}
    for user, enctype in SHA2_USERS.items():
        key = sha2_string_to_key(PASSWORDS[user], default_salt(realm.principal(user)), enctype)
        needles.update(sha2_user_keys(user, key, enctype))
    for user in SHA2_USERS:
        assert_login(realm, kinit(realm, user, PASSWORDS[user], cache(realm, f"scan-{user}.cc")), f"kinit {user}")
    for pid in kdc_pids(realm.kdc_pid()):
        assert memory_contains(pid, needles) == [], f"krb5kdc pid {pid} holds RFC 8009 user key material"
    assert files_containing(realm.root, needles) == []
    assert_scan_finds(needles)


# ---- where the keys are not ----------------------------------------------------------------

def test_keys_absent_from_kdc_memory_files_and_servers(realm):
    for i in range(2):
        for user in ENCTYPES:
            assert_login(realm, kinit(realm, user, PASSWORDS[user], cache(realm, f"burst-{user}-{i}.cc")),
                         f"kinit {user}")
    needles = {}
    for user in ENCTYPES:
        needles.update(user_keys(realm, user, PASSWORDS[user], ENCTYPES[user]))
    pids = kdc_pids(realm.kdc_pid())
    assert len(pids) == WORKERS + 1, pids
    for pid in pids:
        assert memory_contains(pid, needles) == [], f"krb5kdc pid {pid} holds user key material"
    assert files_containing(realm.root, needles) == []
    # Each server's store alone: encrypted at rest, and its shares are not the keys.
    for party in (1, 2, 3):
        hits = files_containing(realm.cluster.server_dir(party), needles)
        assert hits == [], f"server {party}: {hits}"
    # The same scan finds every needle in a separate process that holds them.
    assert_scan_finds(needles)


def login_session_keys(realm: ProtectedRealm, tag: str,
                       users: tuple[str, ...] = ("ann", "ben", *SHA2_USERS)) -> dict[str, dict[str, bytes]]:
    """Logs in `users` (by default one of every enctype), with and without FAST, and gets a
    service ticket each; the session keys of their TGTs and of their service tickets, by kind."""
    armor = cache(realm, f"{tag}-armor.cc")
    assert_login(realm, kinit(realm, "plain", "plain-pw", armor), "kinit for the armor ticket")
    found: dict[str, dict[str, bytes]] = {"tgt": {}, "service": {}}
    for user in users:
        for fast in (False, True):
            cc = cache(realm, f"{tag}-{user}-{'fast' if fast else 'plain'}.cc")
            args = ("-T", armor) if fast else ()
            assert_login(realm, kinit(realm, user, PASSWORDS[user], cc, *args), f"kinit {user} fast={fast}")
            assert_login(realm, realm.run(["kvno", "-c", cc, realm.principal(SERVICE)]), f"kvno as {user}")
            keys = session_keys(Path(cc.removeprefix("FILE:")))
            assert set(keys) == {realm.tgs, realm.principal(SERVICE)}, keys.keys()
            name = f"{user}{' (FAST)' if fast else ''}"
            found["tgt"][f"{name}: TGT session key"] = keys[realm.tgs]
            found["service"][f"{name}: service ticket session key"] = keys[realm.principal(SERVICE)]
    return found


def servers_holding(realm: ProtectedRealm, needles: dict[str, bytes]) -> dict[int, list[str]]:
    hits = {}
    for party in (1, 2, 3):
        pid = realm.cluster.server_pid(party)
        assert pid != 0
        hits[party] = memory_contains(pid, needles)
    return {party: found for party, found in hits.items() if found}


@pytest.fixture(scope="module")
def session_key_scan(realm) -> tuple[dict[str, dict[str, bytes]], dict[int, list[str]]]:
    """The logins of login_session_keys and one scan of every server's memory for all the
    session keys they gave (a scan reads hundreds of MB per server): the keys by kind, and
    which server holds which of them."""
    keys = login_session_keys(realm, "skey")
    return keys, servers_holding(realm, keys["tgt"] | keys["service"])


def held_of(held: dict[int, list[str]], needles: dict[str, bytes]) -> dict[int, list[str]]:
    """The part of a scan's findings that names these needles."""
    return {party: names for party, names in
            ((party, [name for name in found if name in needles]) for party, found in held.items()) if names}


def test_tgt_session_keys_reach_no_server(session_key_scan):
    """An AS reply's EncASRepPart holds the session key of the TGT it comes with; under FAST it
    is encrypted under the KRB-FX-CF2 reply key, whose KDC half the router holds. The engine
    encrypts both without any server reading them: the router's client library masks the
    record and hands each server seeds of the mask, as the keys are shared. After logins of every
    enctype, with and without FAST, no TGT session key the clients got is in the memory of any
    server process; the same scan finds them in a process that holds them."""
    keys, held = session_key_scan
    needles = keys["tgt"]
    assert len(needles) == 8
    assert held_of(held, needles) == {}
    assert_scan_finds(needles)


def test_service_ticket_session_keys_reach_no_server(session_key_scan):
    """krb5kdc 1.20 signs every ticket it issues with the krbtgt key: the PAC's ticket
    signature covers the encoded EncTicketPart, which holds the ticket's session key. Under
    the protected krbtgt key that checksum is a GCM tag, whose GHASH each server computes over
    the AAD as sent, so the router sends the data's SHA-256 (docs/ticket-format.md): no
    service ticket's session key is in the memory of any server process, while the same scan
    finds them in a process that holds them."""
    keys, held = session_key_scan
    needles = keys["service"]
    assert len(needles) == 8
    assert held_of(held, needles) == {}
    assert_scan_finds(needles)


def test_requests_on_the_wire_carry_no_session_key(realm):
    """Logins with relays in front of the three servers' data ports, recording what the router
    sends: the requests go over the relays (each recording starts with a data link's hello and
    holds its frames), and no session key the clients got is in any of them. Users of an RFC
    3962 and an RFC 8009 enctype, with and without FAST: the router masks every record alike
    (the memory scan above logs in one user of every enctype)."""
    cluster = realm.cluster
    relays = {party: Relay(data_port(cluster, party)) for party in (1, 2, 3)}
    config = client_config_with(cluster, "compute-relayed",
                                {party: f"tcp://127.0.0.1:{relay.port}" for party, relay in relays.items()})
    patient = cluster.dir / "compute-relayed-patient.toml"
    mpc_cluster.Cluster.copy_client_config(config, patient, ENGINE_TIMEOUT_MS)
    original = realm.router_conf.read_text()
    realm.router_conf.write_text(original.replace(f"engine_config = {cluster.dir / 'compute-patient.toml'}",
                                                  f"engine_config = {patient}"))
    assert realm.router_conf.read_text() != original
    realm.stop_kdc()
    realm.start_kdc(workers=WORKERS)
    try:
        found = login_session_keys(realm, "wire", users=("ann", "eve"))
    finally:
        realm.router_conf.write_text(original)
        realm.stop_kdc()
        realm.start_kdc(workers=WORKERS)
        for relay in relays.values():
            relay.stopping = True
            relay.listener.close()
    needles = {**found["tgt"], **found["service"]}
    for party, relay in relays.items():
        with relay.lock:
            recordings = [bytes(recording) for recording in relay.recordings]
        assert recordings, f"no request went over the relay to server {party}"
        assert sum(len(frames_of(recording)) for recording in recordings) >= 8, f"server {party}"
        for recording in recordings:
            hits = [name for name, key in needles.items() if key in recording]
            assert hits == [], f"the link to server {party} carried {hits}"


# ---- refusals ------------------------------------------------------------------------------

def test_refusals_leave_the_entry_unchanged(realm):
    realm.addprinc("des-user", password="x-pw", options='-e "camellia256-cts-cmac:normal aes256-cts-hmac-sha1-96:normal"')
    result = realm.kadmin_local(f"setstr {realm.principal('des-user')} {ATTRIBUTE} true")
    assert "only aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96" in result.stderr, result.output
    assert ATTRIBUTE not in realm.kadmin_local(f"getstrs {realm.principal('des-user')}").stdout
    assert engine_keys(realm.cluster, realm.principal("des-user")) == set()

    for refused in (f"K/M@{realm.realm}", f"kadmin/admin@{realm.realm}"):
        result = realm.kadmin_local(f"setstr {refused} {ATTRIBUTE} true")
        assert "cannot be marked" in result.stderr, result.output
        out = kdc(realm, "protect", "--principal", refused)
        assert out.returncode != 0 and "nothing changed" in out.stderr, out.stderr

    # Dropping the mark of a protected user would leave markers the KDC takes for keys.
    result = realm.kadmin_local(f"delstr {realm.principal('ann')} {ATTRIBUTE}")
    assert "mpcctl kdc unprotect" in result.stderr, result.output
    assert ATTRIBUTE in realm.kadmin_local(f"getstrs {realm.principal('ann')}").stdout


def test_protect_refuses_with_spake_configured(realm):
    text = realm.krb5_conf.read_text()
    try:
        realm.krb5_conf.write_text(text.replace("[libdefaults]\n", "[libdefaults]\n    spake_preauth_groups = edwards25519\n", 1))
        out = kdc(realm, "protect", "--principal", "plain")
        assert out.returncode != 0 and "spake_preauth_groups" in out.stderr, out.stderr
    finally:
        realm.krb5_conf.write_text(text)
    assert ATTRIBUTE not in realm.kadmin_local(f"getstrs {realm.principal('plain')}").stdout


# ---- bulk protection and a storm -----------------------------------------------------------

@pytest.mark.timeout(240)
def test_protect_all_users_then_fifty_concurrent_logins(realm, tmp_path):
    storm_binary = storm.storm_binary()
    if not storm_binary.is_file():
        pytest.fail(f"kdc-storm not built: {storm_binary}")
    storm.add_principals(realm, STORM_USERS)
    out = kdc(realm, "protect", "--all-users")
    # des-user (camellia key) is refused and counted; everyone else is protected.
    assert "des-user" in out.stderr, out.stderr
    assert re.search(r"^(\d+) users protected", out.stdout, re.M), out.stdout
    protected_now = int(re.search(r"^(\d+) users protected", out.stdout, re.M)[1])
    # storm*, svc/storm.test, svc/host.test, plain, plain-sha2
    assert protected_now == STORM_USERS + 4, out.stdout
    assert "1 failed" in out.stdout and out.returncode == 1, out.stdout
    for principal in (f"K/M@{realm.realm}", f"kadmin/admin@{realm.realm}", realm.tgs):
        strs = realm.kadmin_local(f"getstrs {principal}").stdout
        assert principal == realm.tgs or ATTRIBUTE not in strs, strs
    status = kdc(realm, "status", "--cluster", str(realm.cluster.admin_config))
    assert f"{storm.PREFIX}7@{realm.realm}: protected" in status.stdout, status.stdout

    keytab = storm.make_keytab(realm, tmp_path / "storm.keytab", STORM_USERS)
    result = subprocess.run([str(storm_binary), "run", "--keytab", str(keytab), "--quiet", "--concurrency",
                             str(STORM_USERS), "--count", str(STORM_USERS),
                             # one send each: a retransmission would make a second worker repeat
                             # the engine's work for a login the first is still computing
                             "--udp-timeout", "100", "--retries", "0", "--timeout", "110"],
                            env=realm.env, capture_output=True, text=True, timeout=150)
    assert result.stdout.strip(), result.stderr
    summary = json.loads(result.stdout)
    assert summary["failed"] == 0 and summary["ok"] == STORM_USERS, (summary.get("first_errors"),
                                                                      realm.kdc_log()[-3000:])
    assert summary["principals"] == STORM_USERS
    print(f"50 concurrent logins: p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms, "
          f"max {summary['max_ms']} ms")


# ---- key changes -------------------------------------------------------------------------

def test_cpw_reenrols_and_deletes_the_old_engine_key(realm, kdb_probe):
    principal = realm.principal("ann")
    realm.kadmin_local(f"cpw -e aes256-cts-hmac-sha1-96:normal -pw ann-pw-2 {principal}", check=True)
    PASSWORDS["ann"] = "ann-pw-2"
    keys = probe_keys(realm, kdb_probe, "admin", principal)
    assert [(k["kvno"], k["enctype"], k["result"]) for k in keys] == [(2, AES256, USER_MARKER)], keys
    assert engine_keys(realm.cluster, principal) == {(2, USER_ALGORITHMS[AES256])}
    assert_login(realm, kinit(realm, "ann", "ann-pw-2", cache(realm, "ann2.cc")), "kinit with the new password")
    assert kinit(realm, "ann", "ann-pw-1", cache(realm, "ann1.cc")).returncode != 0
    hits = files_containing(realm.root, user_keys(realm, "ann", "ann-pw-2", [AES256]))
    assert hits == [], hits


def test_unprotect_gives_new_keys_and_deletes_engine_keys(realm, kdb_probe):
    cid = realm.principal("cid")
    out = kdc(realm, "unprotect", cid, "--randkey")
    assert out.returncode == 0, out.stderr
    assert ATTRIBUTE not in realm.kadmin_local(f"getstrs {cid}").stdout
    assert engine_keys(realm.cluster, cid) == set()
    keys = probe_keys(realm, kdb_probe, "admin", cid)
    assert {k["kvno"] for k in keys} == {2} and all(k["result"] != USER_MARKER for k in keys), keys
    assert kinit(realm, "cid", PASSWORDS["cid"], cache(realm, "cid-old.cc")).returncode != 0

    ben = realm.principal("ben")
    out = kdc(realm, "unprotect", ben, "--password", input_text="ben-new-pw\n")
    assert out.returncode == 0, out.stderr
    assert "cannot be restored" in kdc(realm, "help").stdout
    assert engine_keys(realm.cluster, ben) == set()
    assert_login(realm, kinit(realm, "ben", "ben-new-pw", cache(realm, "ben-new.cc")), "kinit ben after unprotect")
    assert kdc(realm, "unprotect", ben, "--randkey").returncode != 0     # not protected any more


def test_import_failure_leaves_the_old_entry_intact(realm, kdb_probe):
    principal = realm.principal("ann")
    before = probe_keys(realm, kdb_probe, "admin", principal)
    realm.cluster.kill_server(2)
    try:
        result = realm.kadmin_local(f"cpw -e aes256-cts-hmac-sha1-96:normal -pw ann-pw-3 {principal}")
        assert "cannot enrol the key" in result.stderr, result.output
        assert probe_keys(realm, kdb_probe, "admin", principal) == before
    finally:
        realm.cluster.restart_server(2)
    deadline = time.monotonic() + 20
    while True:
        try:
            listed = engine_keys(realm.cluster, principal)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "the restarted server does not answer"
            time.sleep(0.5)
    # The withdrawn kvno 3 is on no server; kvno 2 is still there, and ann still logs in.
    assert listed == {(2, USER_ALGORITHMS[AES256])}
    deadline = time.monotonic() + 20
    while kinit(realm, "ann", PASSWORDS["ann"], cache(realm, "after-restart.cc")).returncode != 0:
        assert time.monotonic() < deadline, realm.kdc_log()[-2000:]
        time.sleep(0.5)
