"""lut2 clusters whose lookup-table entries come from a dealer ([lut] preprocessing = "dealer"):
an mpc-lut-dealer process and two mpc-server processes, all over CurveZMQ on loopback.

Results are checked against OpenSSL (through python's cryptography); FIPS-197 Appendix C gives
the known answers. The dealer is killed and restarted under running servers, and servers that
pin a wrong dealer key are shown to get no entries. Pools are small (4096 S-boxes, 25 AES-128
blocks) so they run dry quickly.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from mpctest import toml_files
from mpctest.mpc_cluster import Cluster, dealer_binary, parse_blocks

POOL_SBOXES = 4096
POOL_WAIT_MS = 500
SBOXES_PER_AES128_BLOCK = 160

FIPS197 = {
    "aes128": ("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
               "69c4e0d86a7b0430d8cdb78070b4c55a"),
    "aes256": ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
               "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"),
}


def ctr_keystream(key_hex: str, counter_hex: str, blocks: int) -> bytes:
    encryptor = Cipher(algorithms.AES(bytes.fromhex(key_hex)), modes.CTR(bytes.fromhex(counter_hex))).encryptor()
    return encryptor.update(bytes(16 * blocks)) + encryptor.finalize()


def ecb(key_hex: str, data: bytes, decrypt: bool = False) -> bytes:
    cipher = Cipher(algorithms.AES(bytes.fromhex(key_hex)), modes.ECB())
    context = cipher.decryptor() if decrypt else cipher.encryptor()
    return context.update(data) + context.finalize()


def start_dealer_cluster(root: Path, configure=None) -> Cluster:
    """init, small pools, optional changes to the written files, start; retried on a new port
    range if a port was taken between the probe and the bind."""
    if not dealer_binary().is_file():
        raise AssertionError(f"{dealer_binary()} is not built")
    for attempt in range(3):
        cluster = Cluster(root if attempt == 0 else root.parent / f"{root.name}-retry{attempt}", protocol="lut2",
                          lut_preprocessing="dealer")
        try:
            cluster.init()
            for party in cluster.parties:
                text = (cluster.server_dir(party) / "server.toml").read_text()
                assert 'preprocessing = "dealer"' in text and "dealer_public_key" in text
                cluster.set_server_table_setting(party, "lut", "pool_wait_ms", POOL_WAIT_MS)
                cluster.set_server_table_setting(party, "lut", "pool_sboxes", POOL_SBOXES)
            if configure:
                configure(cluster)
            cluster.start()
            return cluster
        except Exception:
            cluster.stop()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def wait_for_entries(cluster: Cluster, name: str, deadline_s: float = 20) -> None:
    cluster.wait_until_serving((name, 1, "aes128"), deadline_s=deadline_s)


def keystream_job(cluster: Cluster, name: str, key_hex: str, blocks: int) -> bool:
    """One CTR job: True when it succeeded with OpenSSL's answer, False when it failed with
    Busy for an empty pool; anything else fails the test."""
    counter = secrets.token_hex(16)
    result = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                            *Cluster.key_args(name, 1, "aes128"), "--counter", counter, "--blocks", str(blocks),
                            check=False, timeout=20)
    if result.returncode == 0:
        assert parse_blocks(result.stdout) == ctr_keystream(key_hex, counter, blocks), "wrong keystream"
        return True
    assert "busy" in result.stderr and "lookup-table pool empty" in result.stderr, result.stderr
    return False


@pytest.fixture(scope="module")
def dealer_cluster(tmp_path_factory):
    cluster = None
    try:
        cluster = start_dealer_cluster(tmp_path_factory.mktemp("lut2-dealer") / "c")
        cluster.import_key("warm-up", 1, "aes128")
        wait_for_entries(cluster, "warm-up")
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("alg", ["aes128", "aes256"])
def test_fips197_known_answers(dealer_cluster: Cluster, alg):
    key_hex, plain_hex, cipher_hex = FIPS197[alg]
    dealer_cluster.import_key(f"fips-{alg}", 1, alg, key_hex)
    assert dealer_cluster.ecb("encrypt", f"fips-{alg}", 1, alg, bytes.fromhex(plain_hex)).hex() == cipher_hex
    assert dealer_cluster.ecb("decrypt", f"fips-{alg}", 1, alg, bytes.fromhex(cipher_hex)).hex() == plain_hex


@pytest.mark.timeout(60)
def test_random_keys_and_blocks_against_openssl(dealer_cluster: Cluster):
    keys = {}
    for round_, blocks in enumerate((1, 7, 20)):
        name = f"random-{round_}"
        key_hex, _ = dealer_cluster.import_key(name, 1, "aes128")
        keys[name] = key_hex
        counter = secrets.token_hex(16)
        assert dealer_cluster.keystream(name, 1, "aes128", counter, blocks) == ctr_keystream(key_hex, counter, blocks)
        data = secrets.token_bytes(16 * blocks)
        assert dealer_cluster.ecb("encrypt", name, 1, "aes128", data) == ecb(key_hex, data)
        assert dealer_cluster.ecb("decrypt", name, 1, "aes128", data) == ecb(key_hex, data, decrypt=True)
    # The counter wraps at 2^128 as in OpenSSL.
    counter = "ff" * 15 + "fe"
    assert dealer_cluster.keystream("random-0", 1, "aes128", counter, 4) == ctr_keystream(keys["random-0"], counter, 4)


@pytest.mark.timeout(60)
def test_dead_dealer_drains_the_pool_then_busy_and_restart_refills(tmp_path):
    cluster = start_dealer_cluster(tmp_path / "c")
    try:
        key_hex, _ = cluster.import_key("drain", 1, "aes128")
        wait_for_entries(cluster, "drain")
        time.sleep(0.5)  # the pool refills to (nearly) full while idle

        cluster.kill_dealer()
        blocks = 4  # 640 entries: a full pool serves at least 4 such jobs
        start = time.monotonic()
        served = 0
        while keystream_job(cluster, "drain", key_hex, blocks):
            served += 1
            assert served <= POOL_SBOXES // (blocks * SBOXES_PER_AES128_BLOCK), \
                "more jobs served than the pool held: entries came from somewhere"
        drained_after = time.monotonic() - start
        assert served >= 4, f"only {served} jobs ran on the pool left behind by the dead dealer"
        assert drained_after < 15, f"the pool took {drained_after:.1f} s to run dry"
        # Dry stays dry while the dealer is away, each job failing within the pool wait, not a
        # hang, until both servers have told the operator that the dealer is unreachable.
        def logs() -> list[str]:
            return [(cluster.server_dir(party) / "server.log").read_text() for party in cluster.parties]

        deadline = time.monotonic() + 10
        while not all("lookup-table dealer unreachable" in log for log in logs()):
            assert time.monotonic() < deadline, "no server logged the dead dealer\n" + cluster.log_tail()
            start = time.monotonic()
            assert not keystream_job(cluster, "drain", key_hex, 1)
            assert time.monotonic() - start < 5

        # A restarted dealer (no state, same key and endpoint): the pool refills by itself,
        # without restarting either server.
        cluster.restart_dealer()
        deadline = time.monotonic() + 20
        while not keystream_job(cluster, "drain", key_hex, blocks):
            assert time.monotonic() < deadline, "the pool never refilled after the dealer came back\n" + \
                cluster.log_tail()
            time.sleep(0.2)
        time.sleep(0.5)
        assert all(keystream_job(cluster, "drain", key_hex, blocks) for _ in range(4)), \
            "the refilled pool did not serve a burst it holds"
        assert all("lookup-table dealer reachable again" in log for log in logs())
        assert all(cluster.server_alive(party) for party in cluster.parties)
    finally:
        cluster.stop()


@pytest.mark.timeout(60)
def test_restarted_server_is_served_again_from_the_dealer(tmp_path):
    """A restarted server has an empty pool and a new connection to the dealer: the leader
    starts a new pool epoch and the dealer's batches follow server 2's new connection."""
    cluster = start_dealer_cluster(tmp_path / "c")
    try:
        key_hex, _ = cluster.import_key("restart", 1, "aes128")
        wait_for_entries(cluster, "restart")
        for party in (2, 1):
            cluster.kill_server(party)
            cluster.restart_server(party)
            deadline = time.monotonic() + 20
            while True:
                counter = secrets.token_hex(16)
                result = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                                        *Cluster.key_args("restart", 1, "aes128"), "--counter", counter,
                                        "--blocks", "3", check=False, timeout=20)
                if result.returncode == 0:
                    assert parse_blocks(result.stdout) == ctr_keystream(key_hex, counter, 3)
                    break
                assert time.monotonic() < deadline, f"not served after server {party} restarted\n" + \
                    cluster.log_tail()
                time.sleep(0.2)
            assert all(keystream_job(cluster, "restart", key_hex, 3) for _ in range(3))
    finally:
        cluster.stop()


def pin_wrong_dealer_key(party: int):
    """A configure hook: server `party` pins the compute client's key as the dealer's."""

    def configure(cluster: Cluster) -> None:
        config = cluster.server_dir(party) / "server.toml"
        assert toml_files.value(config, "dealer_public_key", "lut") == "../dealer/dealer.pub"
        toml_files.set_value(config, "dealer_public_key", "../compute.pub", "lut")

    return configure


@pytest.mark.timeout(60)
@pytest.mark.parametrize("party", [1, 2])
def test_server_pinning_a_wrong_dealer_key_gets_no_entries(tmp_path, party):
    cluster = start_dealer_cluster(tmp_path / "c", configure=pin_wrong_dealer_key(party))
    try:
        key_hex, _ = cluster.import_key("wrong-dealer", 1, "aes128")
        deadline = time.monotonic() + 6
        log = cluster.server_dir(party) / "server.log"
        while "lookup-table dealer unreachable" not in log.read_text():
            assert time.monotonic() < deadline, f"server {party} never said its dealer is unreachable\n" + \
                cluster.log_tail()
            assert not keystream_job(cluster, "wrong-dealer", key_hex, 1), "a job ran without a dealer"
        assert "dealer_public_key" in log.read_text()
        if party == 2:
            # The leader reaches the dealer, which cannot deal without server 2: it says so.
            assert "server 2 has not connected to the dealer" in (cluster.server_dir(1) / "server.log").read_text()
        assert "server connected" not in "\n".join(
            line for line in (cluster.dealer_dir() / "dealer.log").read_text().splitlines()
            if f'"party":{party}' in line)
        assert not keystream_job(cluster, "wrong-dealer", key_hex, 1)
    finally:
        cluster.stop()
