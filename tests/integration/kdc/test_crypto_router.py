"""mpc_crypto_router.so (kdc-plugin/router) LD_PRELOADed into the stock Debian krb5kdc.

Real processes only: a throwaway realm (krb5_realm.Realm) whose database goes through
mpc_kdb.so over db2, krb5kdc (single process and `-w 2`) started with LD_PRELOAD of the
router, and the stock MIT clients (kinit with password, keytab, renewal and FAST armor,
klist, kvno).

What is asserted:
- pass-through: the same client sequence gives the same results (exit codes, principals,
  ticket flags) with and without the router, and the router's trace (MPC_ROUTER_TRACE)
  shows it intercepted the calls, from krb5kdc itself, libkrb5, libkdb5 and libk5crypto
  (its internal calls through its PLT and provider tables), in the workers of `-w 2`;
- fail closed: for a principal marked protected (the KDB module hands out handles) the
  request fails, the router's message is in the KDC log, the KDC stays up and keeps
  serving other principals, and no handle is ever passed to a libk5crypto function that
  computes with it (every key the router passed on is checked against the handles
  computed here independently from the handle key);
- a missing configuration makes handles fail closed and leaves other calls working.

The engine cluster configuration written here is valid but names servers that do not
exist: the principals here are marked with `setstr` and keep their real keys, so their
handles carry standard enctypes (17, 18), which the router sends to the engine, found
unreachable: the request fails closed. The engine paths (the protected krbtgt key's
private enctype, users' keys of enctypes 17 and 18) are tested against a real cluster in
test_router_engine.py, and with krb5kdc and a real cluster at the end of this file.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.kdc_formats import AES128, AES256, engine_name, expected_handle
from mpctest.krb5_realm import Realm, pick_ports
from mpctest.protected_kdc import read_keytab

MARKER = "mpc-protected"
ROUTER_TAG = "mpc_crypto_router"
UNREACHABLE = "engine unreachable"
TRACE_RE = re.compile(r"pid=(\d+) fn=(\S+) caller=(\S+) route=(\S+) key=(-?\d+):(\d+):(\S+)"
                      r"(?: key2=(-?\d+):(\d+):(\S+))?$")


def fingerprint(key: bytes) -> str:
    """What the router's trace writes for a handle: SHA-256 of its bytes, first 8 bytes (any
    other key it fingerprints under a random key of its own)."""
    return hashlib.sha256(key).hexdigest()[:16]


class RouterRealm(Realm):
    """A Realm whose krb5kdc (only) runs with kdc_env added to its environment."""

    kdc_env: dict[str, str] = {}
    _starting_kdc = False

    @property
    def env(self) -> dict[str, str]:
        env = super().env
        env.pop("LD_PRELOAD", None)
        if self._starting_kdc:
            env.update(self.kdc_env)
        return env

    def start_kdc(self, workers=None, **extra_env):
        self._starting_kdc = True
        try:
            return super().start_kdc(workers)
        finally:
            self._starting_kdc = False


@pytest.fixture
def router_realm(tmp_path, mpc_module, router_so):
    realms: list[RouterRealm] = []

    def make(name: str = "realm") -> RouterRealm:
        realm = RouterRealm(tmp_path / name, backend="db2", mpc_module=mpc_module)
        realms.append(realm)
        realm.create()
        cluster = write_unreachable_cluster(realm.root)
        conf = realm.root / "router.conf"
        conf.write_text(f"# mpc_crypto_router test configuration\n"
                        f"handle_key_file = {realm.handle_key_path}\n"
                        f"engine_config = {cluster}\n")
        conf.chmod(0o600)
        realm.router_conf = conf
        realm.trace = realm.root / "router.trace"
        return realm

    try:
        yield make
    finally:
        for realm in realms:
            realm.stop()


def write_unreachable_cluster(root: Path) -> Path:
    """A valid engine cluster configuration whose servers do not exist (free loopback
    ports nobody listens on), with a client key pair made by mpcctl keygen."""
    prefix = root / "engine-client"
    made = subprocess.run([str(mpc_cluster.mpcctl_binary()), "keygen", "--out", str(prefix)],
                          capture_output=True, text=True, timeout=30)
    assert made.returncode == 0, made.stderr
    public = (root / "engine-client.pub").read_text().split()[1]
    servers = "".join(f'[[servers]]\nparty = {party}\nendpoint = "tcp://127.0.0.1:{port}"\n'
                      f'public_key = "{public}"\n'
                      for party, port in zip((1, 2, 3), pick_ports(3)))
    cluster = root / "cluster.toml"
    cluster.write_text(f'protocol = "rss3"\ntimeout_ms = 500\n'
                       f'secret_key_file = "{prefix}.key"\n{servers}')
    return cluster


def preload(realm: RouterRealm, router_so: Path, config: Path | None = None) -> None:
    realm.kdc_env = {"LD_PRELOAD": str(router_so),
                     "MPC_ROUTER_CONFIG": str(config or realm.router_conf),
                     "MPC_ROUTER_TRACE": str(realm.trace)}


def no_preload(realm: RouterRealm) -> None:
    realm.kdc_env = {}


def trace_lines(realm: RouterRealm) -> list[dict]:
    lines = []
    for raw in Realm.read(realm.trace).splitlines():
        m = TRACE_RE.match(raw)
        assert m, raw
        lines.append({"pid": int(m[1]), "fn": m[2], "caller": m[3], "route": m[4],
                      "keys": [(int(m[5]), int(m[6]), m[7])] +
                              ([(int(m[8]), int(m[9]), m[10])] if m[8] else [])})
    return lines


def set_up_principals(realm: RouterRealm) -> Path:
    realm.kadmin_local(f"modprinc -maxrenewlife 7d krbtgt/{realm.realm}", check=True)
    realm.addprinc("alice", password="alice-pw", options="-maxrenewlife 7d +requires_preauth")
    realm.addprinc("bob", options="-maxrenewlife 7d")
    realm.addprinc("svc/host.test")
    return realm.ktadd(["bob"], realm.root / "bob.keytab")


def normalise_klist(text: str) -> list[str]:
    """klist -f output without times: principals and flags only."""
    keep = []
    for line in text.splitlines():
        m = re.match(r"\s*\S+ \S+\s+\S+ \S+\s+(\S+@\S+)", line)
        if m:
            keep.append(m[1])
        elif "Flags:" in line:
            keep.append("Flags:" + line.split("Flags:")[1])
        elif "Default principal" in line:
            keep.append(line.strip())
    return keep


def client_sequence(realm: RouterRealm, bob_keytab: Path) -> list[tuple]:
    """password, renewal, kvno, keytab, FAST: (step, exit code, normalised output)."""
    results = []
    armor = realm.root / "armor.ccache"

    def step(name, res, listing=True):
        shown = normalise_klist(realm.klist("-f").stdout) if listing and res.returncode == 0 \
            else []
        results.append((name, res.returncode, shown))
        return res

    step("kinit-password", realm.kinit("alice", password="alice-pw", args=["-r", "2d"]))
    step("kvno", realm.kvno("svc/host.test"))
    step("kinit-renew", realm.run(["kinit", "-R"]))
    step("kvno-after-renew", realm.kvno("svc/host.test"))
    step("kinit-keytab", realm.kinit("bob", keytab=bob_keytab, args=["-r", "1d"]))
    step("kvno-keytab", realm.kvno("svc/host.test"))
    step("armor", realm.run(["kinit", "-k", "-t", bob_keytab, "-c", f"FILE:{armor}",
                             realm.principal("bob")]), listing=False)
    step("kinit-fast", realm.kinit("alice", password="alice-pw", args=["-T", f"FILE:{armor}"]))
    step("kvno-fast", realm.kvno("svc/host.test"))
    step("wrong-password-fast",
         realm.kinit("alice", password="wrong", args=["-T", f"FILE:{armor}"]), listing=False)
    return results


@pytest.mark.timeout(60)
@pytest.mark.parametrize("workers", [None, 2], ids=["single", "w2"])
def test_unprotected_principals_pass_through_unchanged(router_realm, router_so, workers):
    realm = router_realm()
    bob_keytab = set_up_principals(realm)

    no_preload(realm)
    realm.start_kdc(workers=workers)
    plain = client_sequence(realm, bob_keytab)
    realm.stop_kdc()

    preload(realm, router_so)
    kdc = realm.start_kdc(workers=workers)
    routed = client_sequence(realm, bob_keytab)
    assert realm.kdc_running()

    assert routed == plain
    steps = {name: code for name, code, _ in routed}
    assert steps["wrong-password-fast"] != 0
    assert all(code == 0 for name, code in steps.items() if name != "wrong-password-fast"), routed
    flags = dict((name, shown) for name, _, shown in routed)
    assert any("R" in line.split("Flags:")[1] for line in flags["kinit-password"]
               if "Flags:" in line), flags["kinit-password"]      # renewable TGT

    lines = trace_lines(realm)
    assert lines, "the router intercepted nothing"
    assert {line["route"] for line in lines} == {"real"}        # no handle anywhere
    # Real keys are fingerprinted under a key of the router's own: bob's key went through
    # the router (his AS replies), yet the trace holds no plain hash of it to test guesses on.
    bob_plain = {fingerprint(key) for *_, key in read_keytab(bob_keytab)}
    seen = {fp for line in lines for _, _, fp in line["keys"] if fp != "-"}
    assert bob_plain and seen and not bob_plain & seen, sorted(bob_plain & seen)
    fns = {line["fn"] for line in lines}
    for fn in ("krb5_c_encrypt", "krb5_c_decrypt", "krb5_c_make_checksum",
               "krb5_c_verify_checksum", "krb5_c_fx_cf2_simple", "krb5_k_create_key",
               "krb5_k_encrypt", "krb5_k_decrypt", "krb5_k_make_checksum",
               "krb5int_derive_key", "krb5int_aes_encrypt", "krb5int_hmac"):
        assert fn in fns, (fn, sorted(fns))
    callers = {line["caller"] for line in lines}
    for caller in ("krb5kdc", "libkrb5.so.3", "libkdb5.so.10", "libk5crypto.so.3"):
        assert caller in callers, (caller, sorted(callers))
    # calls from inside libk5crypto: its krb5_c_* wrappers call krb5_k_* through the PLT
    assert any(line["caller"] == "libk5crypto.so.3" and line["fn"] == "krb5_k_encrypt"
               for line in lines)
    pids = {line["pid"] for line in lines}
    if workers:
        assert kdc.pid not in pids or len(pids) > 1
        assert pids - {kdc.pid}, "no worker process intercepted anything"
    else:
        assert pids == {kdc.pid}


# A combined handle (KRB-FX-CF2 of a protected key, kdb/handle.h): its mask is random per
# login, so it is known by its length and the calls krb5kdc makes with it.
COMBINED_HANDLE_LEN = 136
COMBINED_KEY_CALLS = {"krb5_c_encrypt", "krb5_c_decrypt", "krb5_c_make_checksum"}


def check_no_handle_passed_on(realm: RouterRealm, protected: list[str]) -> list[dict]:
    key = realm.handle_key_path.read_bytes()
    handles = {fingerprint(expected_handle(key, realm.principal(p), 1, e))
               for p in protected for e in (AES256, AES128)}
    lines = trace_lines(realm)
    refused = [line for line in lines if line["route"] in ("refused", "handle")]
    assert refused, "no handle was seen by the router"
    for line in refused:
        length, fp = line["keys"][0][1], line["keys"][0][2]
        if length == COMBINED_HANDLE_LEN:
            assert line["fn"] in COMBINED_KEY_CALLS and line["route"] == "handle", line
        else:
            assert length == 64 and fp in handles, line
    for line in lines:
        if line["route"] == "real":
            for _, length, fp in line["keys"]:
                assert length not in (64, COMBINED_HANDLE_LEN) and fp not in handles, line
    return refused


@pytest.mark.timeout(60)
@pytest.mark.parametrize("workers", [None, 2], ids=["single", "w2"])
def test_protected_principals_fail_closed(router_realm, router_so, workers):
    realm = router_realm()
    bob_keytab = set_up_principals(realm)
    realm.setstr("alice", MARKER, "true")
    realm.setstr("svc/host.test", MARKER, "true")
    preload(realm, router_so)
    realm.start_kdc(workers=workers)

    # AS with PA-ENC-TIMESTAMP: the preauth decrypt (usage 1) goes to the engine, which
    # is unreachable. krb5kdc 1.20.1's encrypted_timestamp verifier tries each key of the
    # enctype, drops every decrypt error (ours included) and answers PREAUTH_FAILED, so the
    # client sees "Password incorrect" and the router's message reaches only its own log
    # (stderr, syslog).
    res = realm.kinit("alice", password="alice-pw")
    assert res.returncode != 0, res.output
    assert "PREAUTH_FAILED: alice@MPC.TEST" in realm.kdc_log()
    assert realm.kinit("bob", keytab=bob_keytab).returncode == 0
    res = realm.kvno("svc/host.test")
    assert res.returncode != 0, res.output
    assert realm.kdc_running()
    assert realm.kinit("bob", keytab=bob_keytab).returncode == 0   # still serving

    # TGS: the first use of the service key (PAC server checksum, usage 17, through
    # krb5_c_make_checksum_iov) fails with the engine unreachable; the KDC logs the
    # router's message.
    log = realm.kdc_log()
    assert f"{ROUTER_TAG}: krb5_c_make_checksum_iov: {UNREACHABLE}" in log, log
    stderr = Realm.read(realm.root / "krb5kdc.stderr")
    assert f"krb5_c_decrypt: {UNREACHABLE}" in stderr, stderr
    assert "(aes256-cts-hmac-sha1-96), usage 1" in stderr, stderr
    assert "first refusal in this process" in stderr, stderr
    refused = check_no_handle_passed_on(realm, ["alice", "svc/host.test"])
    assert {line["route"] for line in refused} == {"handle"}   # verified, engine refused
    assert {line["fn"] for line in refused} >= {"krb5_c_decrypt", "krb5_c_make_checksum_iov"}
    # The PREAUTH_FAILED above was no wrong password: the engine never decided it, and
    # mpc_kdb does not count it against the protected user's lockout.
    assert "Failed password attempts: 0" in realm.getprinc("alice").stdout


@pytest.mark.timeout(60)
def test_protected_krbtgt_fails_closed_and_kdc_stays_up(router_realm, router_so):
    realm = router_realm()
    bob_keytab = set_up_principals(realm)
    realm.setstr(f"krbtgt/{realm.realm}", MARKER, "true")
    preload(realm, router_so)
    realm.start_kdc()
    for _ in range(3):
        res = realm.kinit("bob", keytab=bob_keytab)
        assert res.returncode != 0, res.output
    assert realm.kdc_running()
    assert ROUTER_TAG in realm.kdc_log()
    check_no_handle_passed_on(realm, [f"krbtgt/{realm.realm}"])
    stderr = Realm.read(realm.root / "krb5kdc.stderr")
    assert stderr.count("first refusal in this process") == 1, stderr   # logged once
    realm.delstr(f"krbtgt/{realm.realm}", MARKER)
    assert realm.kinit("bob", keytab=bob_keytab).returncode == 0


@pytest.mark.timeout(60)
def test_missing_configuration_fails_handles_closed_only(router_realm, router_so):
    realm = router_realm()
    bob_keytab = set_up_principals(realm)
    realm.setstr("svc/host.test", MARKER, "true")
    preload(realm, router_so, config=realm.root / "no-such-router.conf")
    realm.start_kdc()
    assert realm.kinit("bob", keytab=bob_keytab).returncode == 0
    assert realm.kvno("svc/host.test").returncode != 0
    assert realm.kdc_running()
    log = realm.kdc_log()
    assert "configuration unusable, every protected key is refused: cannot open router " \
           "configuration" in log, log
    check_no_handle_passed_on(realm, ["svc/host.test"])


@pytest.mark.timeout(60)
def test_forged_handle_key_is_refused(router_realm, router_so):
    """A router configured with another handle key refuses the KDB module's handles."""
    realm = router_realm()
    bob_keytab = set_up_principals(realm)
    realm.setstr("svc/host.test", MARKER, "true")
    other = realm.root / "other.key"
    other.write_bytes(os.urandom(32))
    other.chmod(0o600)
    conf = realm.root / "other.conf"
    conf.write_text(f"handle_key_file = {other}\nengine_config = {realm.root / 'cluster.toml'}\n")
    preload(realm, router_so, config=conf)
    realm.start_kdc()
    assert realm.kinit("bob", keytab=bob_keytab).returncode == 0
    assert realm.kvno("svc/host.test").returncode != 0
    assert "key handle refused: key handle failed authentication" in realm.kdc_log()
    check_no_handle_passed_on(realm, ["svc/host.test"])


# ---- a real cluster: protected users' and services' keys served by the engine ----------

def patient_engine_config(cluster: mpc_cluster.Cluster, root: Path) -> Path:
    """The cluster's compute configuration with a long timeout: the servers compile a
    Kerberos circuit on the first job of each data length (seconds on a loaded machine)."""
    text = cluster.compute_config.read_text()
    lines = ["timeout_ms = 60000" if line.startswith("timeout_ms = ") else line
             for line in text.splitlines()]
    path = cluster.compute_config.with_name(f"compute-{root.name}.toml")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.timeout(300)
def test_protected_user_and_service_keys_served_by_the_engine(router_realm, router_so,
                                                              cluster):
    """alice's and svc/host.test's keys (enctypes 18 and 17) are imported into a real
    cluster under their handles' engine names and the principals marked: krb5kdc holds
    only handles, and kinit (password, FAST encrypted challenge), kvno and a wrong password
    behave as with stock keys."""
    realm = router_realm()
    bob_keytab = set_up_principals(realm)
    keytab = realm.root / "protected-before.keytab"
    realm.ktadd(["alice", "svc/host.test"], keytab, norandkey=True)
    imported = []
    try:
        for principal, kvno, enctype, key in read_keytab(keytab):
            if enctype in (AES128, AES256):
                alg = "aes256-cts-hmac-sha1-96" if enctype == AES256 else \
                    "aes128-cts-hmac-sha1-96"
                cluster.import_key(engine_name(principal), kvno, alg, key.hex())
                imported.append((principal, enctype))
    finally:
        keytab.unlink()
    assert {e for p, e in imported if p.startswith("alice@")} == {AES128, AES256}, imported
    realm.setstr("alice", MARKER, "true")
    realm.setstr("svc/host.test", MARKER, "true")
    realm.router_conf.write_text(f"handle_key_file = {realm.handle_key_path}\n"
                                 f"engine_config = {patient_engine_config(cluster, realm.root)}\n")
    preload(realm, router_so)
    realm.start_kdc()

    res = realm.kinit("alice", password="alice-pw")
    assert res.returncode == 0, (res.output, realm.kdc_log())
    res = realm.kvno("svc/host.test")
    assert res.returncode == 0, (res.output, realm.kdc_log())
    assert "svc/host.test" in realm.klist().stdout
    # FAST encrypted challenge: cf2(armor key, alice's key) comes back as a combined handle,
    # and the challenges and the strengthened reply key are computed inside the engine.
    armor = realm.root / "armor.ccache"
    assert realm.run(["kinit", "-k", "-t", bob_keytab, "-c", f"FILE:{armor}",
                      realm.principal("bob")]).returncode == 0
    res = realm.kinit("alice", password="alice-pw", args=["-T", f"FILE:{armor}"])
    assert res.returncode == 0, (res.output, realm.kdc_log())
    # A wrong password: the engine's HMAC check fails, the usual preauth failure, counted.
    res = realm.kinit("alice", password="wrong-pw")
    assert res.returncode != 0
    assert "PREAUTH_FAILED: alice@MPC.TEST" in realm.kdc_log()
    assert "Failed password attempts: 1" in realm.getprinc("alice").stdout
    # The same through FAST: the engine refuses the challenge under the wrong password.
    res = realm.kinit("alice", password="wrong-pw", args=["-T", f"FILE:{armor}"])
    assert res.returncode != 0
    assert "Failed password attempts: 2" in realm.getprinc("alice").stdout
    assert realm.kdc_running()

    routed = check_no_handle_passed_on(realm, ["alice", "svc/host.test"])
    assert {line["route"] for line in routed} == {"handle"}
    # The FAST logins' challenge and reply keys came back as combined handles and were used.
    assert {line["fn"] for line in routed if line["keys"][0][1] == COMBINED_HANDLE_LEN} == COMBINED_KEY_CALLS
    fns = {line["fn"] for line in routed}
    for fn in ("krb5_c_decrypt", "krb5_c_encrypt", "krb5_c_make_checksum",
               "krb5_c_make_checksum_iov", "krb5_c_fx_cf2_simple"):
        assert fn in fns, (fn, sorted(fns))
    stderr = Realm.read(realm.root / "krb5kdc.stderr")
    assert "refus" not in stderr, stderr
