"""Two-server clusters of security = "active" (protocol gc2): AES, Kerberos and GCM jobs by
authenticated garbling (protocol/auth2), two real mpc-server processes over CurveZMQ.

Results are checked against OpenSSL, libk5crypto and Python's AES-GCM. The deviating server is mpc-server-faults
(common/fault_injection.hpp): server 1 alters its garbled rows, or opens a shared bit with the
other value; either server feeds another output pad than the client's or hands the client
another output. The job is refused as failed verification (MPC_EABORT: by both servers, or by
the client), honest jobs before and after are right, and the same kind of alteration under the
security = "passive" (half-gates) changes the keystream without anybody noticing, so these
tests fail without authenticated garbling and the client's pads.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest.gcm_client import Engine as GcmEngine
from mpctest.gcm_client import GcmError, ctr_keystream, import_gcm_key, seal, ticket_forgeries
from mpctest.krb_client import CF2_PARTNER, ENCTYPES, MPC_EBADTAG, KrbError, check_cf2_jobs
from mpctest.krb_client import Engine as KrbEngine
from mpctest.krb_client import k5  # noqa: F401  (the libk5crypto fixture)
from mpctest.mpc_cluster import Cluster, openssl_ctr_keystream, openssl_ecb
from mpctest.client_handle import settled

# A byte inside the half-gates tables of a 4-block AES-128 job (past the key handshake and the
# blocks' labels): four blocks are 655,360 bytes of tables.
TABLE_BYTE = 200_000


def start_gc2(root: Path, security: dict[int, str] | None = None, limits: dict[str, int] | None = None) -> Cluster:
    """A gc2 cluster with each server's `security` as given (a server not named sets none, so
    the product's default, active, rules) and `limits` set in every server's [limits] table."""
    cluster = Cluster(root, protocol="gc2")
    cluster.init()
    for party in cluster.parties:
        if party in (security or {}):
            cluster.set_server_setting(party, "security", security[party])
        else:
            cluster.unset_server_setting(party, "security")
    for party in cluster.parties:
        for name, value in (limits or {}).items():
            cluster.set_server_table_setting(party, "limits", name, value)
    cluster.start()
    return cluster


def restart(cluster: Cluster, party: int, fault: str | None = None) -> None:
    """Server `party` killed and started again: the test server deviating as `fault` says, or
    the honest server."""
    cluster.kill_server(party)
    cluster.restart_server(party, fault=fault)


def keystream_attempt(cluster: Cluster, name: str, blocks: int = 4, counter: str = "00" * 16):
    return cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                          *Cluster.key_args(name, 1, "aes128"), "--counter", counter, "--blocks", str(blocks),
                          check=False, timeout=120)


def settled_attempt(cluster: Cluster, name: str, blocks: int = 4, deadline_s: float = 60,
                    counter: str = "00" * 16):
    """The first keystream attempt that is neither refused as busy (the pool of AND material
    still filling after a start), nor unanswered or unreachable (a server starting, or a job
    waiting for entries on a loaded machine)."""
    deadline = time.monotonic() + deadline_s
    while True:
        attempt = keystream_attempt(cluster, name, blocks, counter)
        transient = any(word in attempt.stderr for word in ("busy", "unreachable", "peer_failure", "no answer"))
        if not transient or time.monotonic() > deadline:
            return attempt
        time.sleep(0.3)


MPC_EREFUSED, MPC_EABORT = -4, -10
PASSIVE = {1: "passive", 2: "passive"}


@pytest.mark.timeout(300)
def test_active_aes_jobs_match_openssl_and_local_masks_are_refused_clearly(tmp_path):
    cluster = start_gc2(tmp_path / "active", {1: "active", 2: "active"})
    try:
        for alg in ("aes128", "aes256"):
            key_hex, _ = cluster.import_key(f"active-{alg}", 1, alg)
            counter = secrets.token_hex(16)
            assert cluster.keystream(f"active-{alg}", 1, alg, counter, 3, timeout=120) == \
                openssl_ctr_keystream(alg, key_hex, counter, 3)
            data = secrets.token_bytes(32)
            assert cluster.ecb("decrypt", f"active-{alg}", 1, alg, data) == openssl_ecb(alg, key_hex, data, decrypt=True)
        # GCM nonces with local masks have no authenticated form: each server would compute
        # its masks from its own share, unchecked. Refused, never served semi-honestly, with the
        # router setting that avoids them.
        import_gcm_key(cluster)
        gcm = GcmEngine(cluster.compute_config)
        try:
            with pytest.raises(GcmError) as refused:
                gcm.prefetch(1, 1, local=True)
            assert "gcm_masks = aes" in refused.value.message, refused.value
            # Nor is a nonce with local masks reopened: each server would answer from its own
            # share of the masks.
            local_nonce = bytes(8) + bytes([0x80]) + bytes(3)
            with pytest.raises(GcmError) as refused:
                gcm.open(local_nonce, b"ticket", bytes(32), bytes(16))
            assert "no actively secure two-party form" in refused.value.message, refused.value
        finally:
            gcm.close()
    finally:
        cluster.stop()


@pytest.mark.timeout(600)
def test_active_gcm_jobs_match_aes_gcm_and_deviations_are_caught(tmp_path):
    """The AES-256-GCM ticket jobs by authenticated garbling (engines/two_party/
    authenticated_gcm.hpp): a prefetch's keystream is AES-CTR's from counter 2, a ticket sealed
    with it and the servers' tag is Python's AES-GCM encryption byte for byte, opens to its
    plaintext, and every forgery of it fails (MPC_EBADTAG, the verdict as authenticated as the
    keystream). Either server feeding another pad than the client's, handing the client another
    padded keystream or verdict, or feeding its share of the last round key with a bit flipped
    gets the prefetch and the open refused (MPC_EABORT); honest jobs after are right. Under
    security = "passive" the same flip of the key share changes the keystream unnoticed."""
    cluster = start_gc2(tmp_path / "gcm", {1: "active", 2: "active"})
    gcm = GcmEngine(cluster.compute_config)
    try:
        key = import_gcm_key(cluster)
        # Seven nonces of two blocks: three parts of AES (five nonces, then two).
        prefetched = settled(lambda: gcm.prefetch(7, 2))
        assert len({nonce for nonce, _ in prefetched}) == 7
        for nonce, keystream in prefetched:
            assert keystream == ctr_keystream(key, nonce, 2, 2)
        nonce, keystream = prefetched[0]
        plaintext = secrets.token_bytes(32)
        sealed = seal(gcm, nonce, keystream, plaintext, b"ticket")
        assert sealed == AESGCM(key).encrypt(nonce, plaintext, b"ticket")
        ciphertext, tag = sealed[:-16], sealed[-16:]
        assert settled(lambda: gcm.open(nonce, b"ticket", ciphertext, tag)) == plaintext
        forgeries = ticket_forgeries(ciphertext, tag, ciphertext[:16])
        for aad, text, forged_tag in forgeries:
            with pytest.raises(GcmError) as failure:
                settled(lambda: gcm.open(nonce, aad, text, forged_tag))
            assert failure.value.code == MPC_EBADTAG, (aad, failure.value)
        # Nonces for tags alone (a checksum's): the masks stay with the servers, no keystream.
        tag_nonce, _ = settled(lambda: gcm.prefetch(1, 0))[0]
        data_aad = bytes([0x02, 0, 0, 0, 17]) + secrets.token_bytes(32)
        assert gcm.tag(tag_nonce, data_aad, b"") == AESGCM(key).encrypt(tag_nonce, b"", data_aad)
        # A ticket sealed elsewhere under K, of a nonce the servers never prefetched (without
        # the mark of local masks, bit 7 of byte 8).
        outside_nonce = bytearray(secrets.token_bytes(12))
        outside_nonce[8] &= 0x7F
        outside_nonce = bytes(outside_nonce)
        outside_plaintext = secrets.token_bytes(40)
        outside = AESGCM(key).encrypt(outside_nonce, outside_plaintext, b"ticket")
        for party in (1, 2):
            for fault, caught_by in (("output-shift", "computed with another pad than the client's"),
                                     ("padded-report-bit", "answered different padded"),
                                     ("share-bit", "another key share than the one its checks were dealt for")):
                restart(cluster, party, fault=fault)
                with pytest.raises(GcmError) as failure:
                    settled(lambda: gcm.prefetch(2, 2))
                assert failure.value.code == MPC_EABORT, (party, fault, failure.value)
                assert caught_by in failure.value.message, (party, fault, failure.value)
                with pytest.raises(GcmError) as failure:
                    settled(lambda: gcm.open(outside_nonce, b"ticket", outside[:-16], outside[-16:]))
                assert failure.value.code == MPC_EABORT, (party, fault, failure.value)
                assert caught_by in failure.value.message, (party, fault, failure.value)
            restart(cluster, party)
        assert settled(lambda: gcm.open(outside_nonce, b"ticket", outside[:-16], outside[-16:])) == outside_plaintext
        for nonce, keystream in settled(lambda: gcm.prefetch(2, 2)):
            assert keystream == ctr_keystream(key, nonce, 2, 2)
    finally:
        gcm.close()
        cluster.stop()

    passive = start_gc2(tmp_path / "passive", PASSIVE)
    gcm = GcmEngine(passive.compute_config)
    try:
        key = import_gcm_key(passive)
        restart(passive, 2, fault="share-bit")
        nonce, keystream = settled(lambda: gcm.prefetch(1, 2))[0]
        assert keystream != ctr_keystream(key, nonce, 2, 2)  # wrong, and nobody noticed
        assert passive.verification_refusals() == {1: 0, 2: 0}
    finally:
        gcm.close()
        passive.stop()


@pytest.mark.timeout(400)
def test_altered_garbled_rows_are_refused_when_active_and_change_the_keystream_when_passive(tmp_path):
    """The product's default is active: a cluster whose servers set no `security` refuses a
    deviating garbler's jobs."""
    active = start_gc2(tmp_path / "active")
    for party in active.parties:
        assert "security" not in (active.server_dir(party) / "server.toml").read_text()
    try:
        key_hex, _ = active.import_key("rows", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 4)
        assert active.keystream_of(settled_attempt(active, "rows")) == expected
        before = active.verification_refusals()
        for fault in ("auth2-garbled-rows", "auth2-opened-mask"):
            restart(active, 1, fault=fault)
            attempt = settled_attempt(active, "rows")
            assert attempt.returncode != 0, f"{fault}: a deviating garbler's job was served"
            assert "verification" in attempt.stderr, attempt.stderr
        # Server 2 caught both. (Server 1, the garbler, may have finished its side of a job
        # before server 2's notice came: the client still gets the refusal.)
        after = active.verification_refusals()
        assert after[2] >= before[2] + 2, (before, after)
        restart(active, 1)
        honest = settled_attempt(active, "rows")
        assert active.keystream_of(honest) == expected, honest.stderr
    finally:
        active.stop()

    passive = start_gc2(tmp_path / "passive", PASSIVE)
    try:
        key_hex, _ = passive.import_key("rows", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 4)
        assert passive.keystream_of(keystream_attempt(passive, "rows")) == expected
        restart(passive, 1, fault=f"gc2-table-bits={TABLE_BYTE}")
        altered = settled_attempt(passive, "rows")
        assert altered.returncode == 0, altered.stderr
        assert passive.keystream_of(altered) != expected  # wrong, and nobody noticed
        assert passive.verification_refusals() == {1: 0, 2: 0}
    finally:
        passive.stop()


@pytest.mark.timeout(400)
def test_a_server_that_shifts_the_clients_result_is_caught_when_active_and_unnoticed_when_passive(tmp_path):
    """Outputs go to the client under a pad per server (protocol/client_checks/output_pads.hpp),
    and each server is held to the key share the client dealt it (share_checks.hpp). Either
    server feeding another pad than the client's, handing the client another padded output than
    its peer's, or feeding its share of the last round key with a bit flipped (three ways to
    shift the result by a value it picks) gets the job refused (MPC_EABORT), whichever server it
    is; honest jobs after are right. Under security = "passive" the same server
    XORs bit 0 into its output share, or flips that key bit, and the client takes the shifted
    keystream."""
    active = start_gc2(tmp_path / "active", {1: "active", 2: "active"})
    try:
        key_hex, _ = active.import_key("shift", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 2)
        assert active.keystream_of(settled_attempt(active, "shift", blocks=2)) == expected
        for party in (1, 2):
            for fault, caught_by in (("output-shift", "computed with another pad than the client's"),
                                     ("padded-report-bit", "answered different padded outputs"),
                                     ("share-bit", "another key share than the one its checks were dealt for")):
                restart(active, party, fault=fault)
                attempt = settled_attempt(active, "shift", blocks=2)
                assert attempt.returncode != 0, f"server {party} {fault}: a shifted result was taken"
                assert caught_by in attempt.stderr, attempt.stderr
            restart(active, party)
        honest = settled_attempt(active, "shift", blocks=2)
        assert active.keystream_of(honest) == expected, honest.stderr
    finally:
        active.stop()

    passive = start_gc2(tmp_path / "passive", PASSIVE)
    try:
        key_hex, _ = passive.import_key("shift", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 2)
        # Bit 0 of the output share shifts the keystream's bit 0; bit 0 of the last round key
        # shifts bit 0 of every block. Nobody noticed either.
        for fault, flipped in (("output-shift", (0,)), ("share-bit", (0, 16))):
            restart(passive, 2, fault=fault)
            shifted = settled_attempt(passive, "shift", blocks=2)
            assert shifted.returncode == 0, shifted.stderr
            assert passive.keystream_of(shifted) == bytes(b ^ (i in flipped) for i, b in enumerate(expected)), fault
    finally:
        passive.stop()


@pytest.mark.timeout(600)
def test_active_kerberos_jobs_match_libk5crypto_and_deviations_are_caught(tmp_path, k5):
    """Kerberos jobs by authenticated garbling (engines/two_party/authenticated_krb.hpp): what
    the cluster encrypts libk5crypto decrypts and the other way round, checksums are equal bit
    for bit, a forged ciphertext fails its MAC (MPC_EBADTAG, the verdict as authenticated as the
    rest), and FAST's KRB-FX-CF2 jobs match krb5_c_fx_cf2_simple. Either server feeding its share of the record's mask with a bit flipped, or its key
    share, gets the job refused (MPC_EABORT); under security = "passive" the same flip of the
    mask's share encrypts another plaintext, with a MAC libk5crypto accepts."""
    cluster = start_gc2(tmp_path / "krb", {1: "active", 2: "active"}, limits={"and_material_entries": 1048576})
    admin, compute = KrbEngine(cluster.admin_config), KrbEngine(cluster.compute_config)
    try:
        keys = {}
        for enctype in ("aes128", "aes256-sha2"):
            algorithm, _, krb5_enctype, cksumtype, size = ENCTYPES[enctype]
            protocol_key = secrets.token_bytes(size)
            key_id = (f"krb/active-{enctype}@EXAMPLE.COM", 2, algorithm)
            admin.import_key(*key_id, protocol_key)
            keys[enctype] = {"id": key_id, "key": protocol_key, "enctype": krb5_enctype, "cksumtype": cksumtype}
        for key in keys.values():
            plaintext = secrets.token_bytes(40)
            ciphertext = settled(lambda: compute.encrypt(key["id"], 3, plaintext))
            assert k5.decrypt(key["enctype"], key["key"], 3, ciphertext) == plaintext
            theirs = k5.encrypt(key["enctype"], key["key"], 2, plaintext)
            assert settled(lambda: compute.decrypt(key["id"], 2, theirs)) == plaintext
            data = secrets.token_bytes(30)
            assert settled(lambda: compute.checksum(key["id"], 17, data)) == k5.make_checksum(
                key["cksumtype"], key["enctype"], key["key"], 17, data)
            forged = bytearray(theirs)
            forged[5] ^= 0x10
            with pytest.raises(KrbError) as failure:
                settled(lambda: compute.decrypt(key["id"], 2, bytes(forged)))
            assert failure.value.code == MPC_EBADTAG, failure.value
        # FAST's jobs under KRB-FX-CF2, five of them back to back from a refilled pool.
        time.sleep(4)
        check_cf2_jobs(compute, k5, keys["aes128"], CF2_PARTNER["aes128"])
        key = keys["aes128"]
        plaintext = secrets.token_bytes(40)
        for party in (1, 2):
            for fault in ("krb-mask-bit", "share-bit"):
                restart(cluster, party, fault=fault)
                with pytest.raises(KrbError) as failure:
                    settled(lambda: compute.encrypt(key["id"], 3, plaintext))
                assert failure.value.code == MPC_EABORT, (party, fault, failure.value)
            restart(cluster, party)
        ciphertext = settled(lambda: compute.encrypt(key["id"], 3, plaintext))
        assert k5.decrypt(key["enctype"], key["key"], 3, ciphertext) == plaintext
    finally:
        admin.close()
        compute.close()
        cluster.stop()

    passive = start_gc2(tmp_path / "passive", PASSIVE)
    admin, compute = KrbEngine(passive.admin_config), KrbEngine(passive.compute_config)
    try:
        algorithm, _, krb5_enctype, _, size = ENCTYPES["aes128"]
        protocol_key = secrets.token_bytes(size)
        key_id = ("krb/passive@EXAMPLE.COM", 2, algorithm)
        admin.import_key(*key_id, protocol_key)
        restart(passive, 2, fault="krb-mask-bit")
        plaintext = secrets.token_bytes(40)
        ciphertext = settled(lambda: compute.encrypt(key_id, 3, plaintext))
        # The confounder's bit 0 flipped: libk5crypto decrypts a valid ciphertext of another
        # record, and nobody noticed.
        assert k5.decrypt(krb5_enctype, protocol_key, 3, ciphertext) == plaintext
        assert passive.verification_refusals() == {1: 0, 2: 0}
    finally:
        admin.close()
        compute.close()
        passive.stop()


@pytest.mark.timeout(240)
def test_a_server_that_deviates_in_preprocessing_gets_no_job_served_and_leaves_no_wrong_result(tmp_path):
    """Server 1 alters its leaky-AND products in every batch of AND material: each batch fails
    its equality check (leaky_and), no entry reaches the pool, and jobs are refused as busy,
    never served from unchecked material. Restarted honest, it fills the pool and serves."""
    cluster = start_gc2(tmp_path / "leaky", {1: "active", 2: "active"})
    try:
        key_hex, _ = cluster.import_key("leaky", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 2)
        restart(cluster, 1, fault="auth2-leaky-products")
        failed = cluster.wait_for_log_event(2, "preprocessing failed",
                                            lambda entry: "leaky_and" in str(entry.get("error", "")), deadline_s=30)
        assert failed, cluster.log_tail()
        refused = settled_attempt(cluster, "leaky", blocks=2, deadline_s=8)
        assert refused.returncode != 0 and "busy" in refused.stderr, refused.stderr
        restart(cluster, 1)
        served = settled_attempt(cluster, "leaky", blocks=2)
        assert cluster.keystream_of(served) == expected, served.stderr
    finally:
        cluster.stop()


@pytest.mark.timeout(180)
def test_a_job_larger_than_the_pool_of_and_material_is_refused_and_smaller_ones_are_served(tmp_path):
    """[limits] and_material_entries bounds the pool: with 98,304 entries a 16-block AES-128
    job (about 121,000 entries: its AND gates, the share checks' 32,000, the key shares, the
    blindings and the client's pads) is refused as too large, naming the limit, and an 8-block
    one served."""
    cluster = start_gc2(tmp_path / "small", {1: "active", 2: "active"}, limits={"and_material_entries": 98304})
    try:
        key_hex, _ = cluster.import_key("small", 1, "aes128")
        refused = settled_attempt(cluster, "small", blocks=16)
        assert refused.returncode != 0 and "too_large" in refused.stderr, refused.stderr
        assert "entries of AND material" in refused.stderr, refused.stderr
        served = settled_attempt(cluster, "small", blocks=8)
        assert cluster.keystream_of(served) == openssl_ctr_keystream("aes128", key_hex, "00" * 16, 8), served.stderr
    finally:
        cluster.stop()


@pytest.mark.timeout(600)
def test_whether_a_probed_key_bit_aborts_the_job_is_independent_of_the_bit(tmp_path):
    """Selective failure on server 2's key-share bits. Under security = "passive" server 1 is
    the OT sender of those bits' labels: offering a wrong label for value 1 of bit 0
    (gc2-selective-key-bit) makes a job come out wrong exactly when server 2's share bit is 1,
    so server 1, which holds its own share bit, reads the key's bit 0 off every key, after a
    restart (a fresh transfer) as before. Under the default, active, the same probe
    (auth2-selective-label) can only be aimed at the masked bit server 2 sends, whose mask
    neither server knows alone: jobs abort about half the time for each key, keys with bit 0
    clear and set alike, and no job it spoils is served."""
    active = start_gc2(tmp_path / "active")
    try:
        keys = {}
        for bit in (0, 1):
            for n in range(2):
                key = bytearray(secrets.token_bytes(16))
                key[0] = (key[0] & 0xFE) | bit
                keys[f"probe-{bit}-{n}"] = key.hex()
                active.import_key(f"probe-{bit}-{n}", 1, "aes128", key.hex())
        restart(active, 1, fault="auth2-selective-label=0")
        aborted = {name: 0 for name in keys}
        jobs = 14  # a key whose jobs all end alike by chance: 2^-13
        for _ in range(jobs):
            for name, key_hex in keys.items():
                counter = secrets.token_hex(16)
                attempt = settled_attempt(active, name, blocks=1, counter=counter)
                if attempt.returncode == 0:
                    assert active.keystream_of(attempt) == openssl_ctr_keystream("aes128", key_hex, counter, 1), name
                else:
                    assert "verification" in attempt.stderr, attempt.stderr
                    aborted[name] += 1
        for name, count in aborted.items():
            assert 0 < count < jobs, f"{name}: {count} of {jobs} jobs aborted, a function of the key alone"
        for bit in (0, 1):
            rate = sum(count for name, count in aborted.items() if name.startswith(f"probe-{bit}-")) / (2 * jobs)
            assert 0.15 <= rate <= 0.85, (bit, aborted)
    finally:
        active.stop()

    passive = start_gc2(tmp_path / "passive", PASSIVE)
    try:
        keys = {f"probe-{n}": secrets.token_hex(16) for n in range(12)}
        for name, key_hex in keys.items():
            passive.import_key(name, 1, "aes128", key_hex)
        wrong_jobs = 0
        for round_ in range(2):
            restart(passive, 1, fault="gc2-selective-key-bit=0")
            for name, key_hex in keys.items():
                counter = secrets.token_hex(16)
                attempt = settled_attempt(passive, name, blocks=1, counter=counter)
                assert attempt.returncode == 0, attempt.stderr  # nothing is checked
                wrong = passive.keystream_of(attempt) != openssl_ctr_keystream("aes128", key_hex, counter, 1)
                wrong_jobs += wrong
                offers = [entry for entry in passive.log_events(1, "fault: selective key-label offer")
                          if entry["key"].startswith(f"{name} kvno ")]
                assert len(offers) == round_ + 1, offers
                learned = offers[-1]["own_bit"] ^ wrong
                assert learned == bytes.fromhex(key_hex)[0] & 1, (name, round_)
        assert wrong_jobs > 0, "the probe never fired: every share bit of server 2 was 0"
        assert passive.verification_refusals() == {1: 0, 2: 0}
    finally:
        passive.stop()


@pytest.mark.timeout(180)
def test_servers_of_different_modes_refuse_each_others_jobs(tmp_path):
    """A server of security = "active" serves no job its peer runs semi-honestly: neither can
    lower the other's security by its own setting."""
    cluster = start_gc2(tmp_path / "mixed", {1: "passive", 2: "active"})
    try:
        cluster.import_key("mixed", 1, "aes128")
        attempt = keystream_attempt(cluster, "mixed", blocks=1)
        assert attempt.returncode != 0, attempt.stdout
        assert "both servers must say the same" in attempt.stderr, attempt.stderr
    finally:
        cluster.stop()


# auth2::Step values (protocol/auth2/auth_bits.hpp) and the servers that send such messages.
JOB_STEPS = {"masked inputs": (10, (1, 2)), "input labels": (11, (1,)), "output claim": (12, (2,))}
BATCH_STEPS = {"leaky reveal": (2, (1, 2)), "equality commitment": (3, (1,)), "equality digest": (4, (2,)),
               "equality opening": (5, (1,)), "coin share": (7, (2,))}


@pytest.mark.timeout(600)
def test_a_message_altered_in_any_step_of_a_job_is_refused(tmp_path):
    """Either server flips a bit of the first message it sends in one step of every job
    (mpc-server-faults, auth2-step): its masked inputs (its key share's first bit), the input
    labels it garbles, or the outputs it claims. Each job is
    refused as failed verification, by its peer or by the client, never served; honest jobs
    before and after are right."""
    cluster = start_gc2(tmp_path / "steps", {1: "active", 2: "active"})
    try:
        key_hex, _ = cluster.import_key("steps", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 2)
        assert cluster.keystream_of(settled_attempt(cluster, "steps", blocks=2)) == expected
        for name, (step, senders) in JOB_STEPS.items():
            for party in senders:
                restart(cluster, party, fault=f"auth2-step={step}")
                attempt = settled_attempt(cluster, "steps", blocks=2)
                assert attempt.returncode != 0, f"server {party} altering its {name}: the job was served"
                assert "verification" in attempt.stderr or "deviated" in attempt.stderr, (name, party, attempt.stderr)
                restart(cluster, party)
        honest = settled_attempt(cluster, "steps", blocks=2)
        assert cluster.keystream_of(honest) == expected, honest.stderr
    finally:
        cluster.stop()


# Short form: the leaky AND's revealed bits (either server) and the coin toss; the equality
# check's steps fail the same check in the unit tests (tests/unit/protocol/auth2). Long form: every step.
SHORT_BATCH_STEPS = ("leaky reveal", "coin share")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("steps", [pytest.param(SHORT_BATCH_STEPS, id="short"),
                                   pytest.param(tuple(BATCH_STEPS), id="every-step", marks=pytest.mark.long)])
def test_a_message_altered_in_any_step_of_preprocessing_fills_no_pool(tmp_path, steps):
    """Either server flips a bit of the first message it sends in one step of making AND
    material (the leaky AND's revealed bits, the equality check's commitment, digest or opening,
    the bucketing's coin toss): the batch fails its check, nothing reaches the pool, and jobs
    are refused as busy, never served from unchecked material."""
    cluster = start_gc2(tmp_path / "batch-steps", {1: "active", 2: "active"})
    try:
        key_hex, _ = cluster.import_key("batch-steps", 1, "aes128")
        expected = openssl_ctr_keystream("aes128", key_hex, "00" * 16, 2)
        for name in steps:
            step, senders = BATCH_STEPS[name]
            for party in senders:
                restart(cluster, party, fault=f"auth2-step={step}")
                failed = cluster.wait_for_log_event(3 - party, "preprocessing failed", deadline_s=30)
                assert failed, (name, party, cluster.log_tail())
                refused = settled_attempt(cluster, "batch-steps", blocks=2, deadline_s=4)
                assert refused.returncode != 0 and "busy" in refused.stderr, (name, party, refused.stderr)
                restart(cluster, party)
        served = settled_attempt(cluster, "batch-steps", blocks=2)
        assert cluster.keystream_of(served) == expected, served.stderr
    finally:
        cluster.stop()


@pytest.mark.timeout(300)
def test_a_failed_batch_of_and_material_leaves_the_material_made_before_it_in_service(tmp_path):
    """A batch that fails (server 2 starts it past server 1's wait, as on a host whose cores are
    taken) leaves the OT extension of its pool epoch in an unknown state, so server 1 starts a
    new epoch; the entries made before that batch passed their checks and are still served
    (engines/two_party/and_material_stock.hpp): the next jobs take them, under their epoch's
    deltas, and compute as OpenSSL does, instead of waiting for a pool made afresh."""
    cluster = start_gc2(tmp_path / "kept", {1: "active", 2: "active"})
    try:
        key_hex, _ = cluster.import_key("kept", 1, "aes128")
        restart(cluster, 2, fault="auth2-stall-batch=3")
        restarted = cluster.wait_for_log_event(
            1, "preprocessing pool restarted", matches=lambda entry: entry.get("kept", 0) > 0, deadline_s=60)
        assert restarted, cluster.log_tail()
        kept = restarted[-1]["kept"]
        # Two batches of 65,536 entries were made before the one that failed.
        assert kept >= 65536, restarted
        for blocks in (2, 3):
            counter = secrets.token_hex(16)
            served = settled_attempt(cluster, "kept", blocks=blocks, counter=counter)
            assert cluster.keystream_of(served) == openssl_ctr_keystream("aes128", key_hex, counter, blocks), \
                served.stderr
        taken = cluster.log_events(1, "job takes AND material kept from the pool epoch left")
        assert taken, cluster.log_tail()
        # No job on kept material fails. A job needing more than is left waits for the new
        # epoch's first batch; on a loaded host that batch can outlast the job's wait, and the
        # job is answered busy (the attempt above asks again): the only other failure allowed.
        failed = cluster.log_events(1, "job failed")
        assert not {entry["job"] for entry in taken} & {entry["job"] for entry in failed}, cluster.log_tail()
        assert all("pool empty" in entry["error"] for entry in failed), cluster.log_tail()
    finally:
        cluster.stop()
