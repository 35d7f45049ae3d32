"""Two-server clusters (protocol gc2 and lut2): two real mpc-server processes over CurveZMQ,
keys XOR-shared between them, the same client library and mpcctl as three-server clusters.

Every result is checked against OpenSSL; FIPS-197 Appendix C gives the known answers.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time

import pytest

from mpctest import toml_files
from mpctest.mpc_cluster import Cluster, MpcctlError, openssl_ctr_keystream, openssl_ecb, parse_blocks, server_binary

FIPS197 = {
    "aes128": ("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
               "69c4e0d86a7b0430d8cdb78070b4c55a"),
    "aes256": ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
               "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("alg", ["aes128", "aes256"])
def test_fips197_known_answers(two_server_cluster: Cluster, alg):
    key_hex, plain_hex, cipher_hex = FIPS197[alg]
    two_server_cluster.import_key(f"fips-{alg}", 1, alg, key_hex)
    assert two_server_cluster.ecb("encrypt", f"fips-{alg}", 1, alg, bytes.fromhex(plain_hex)).hex() == cipher_hex
    assert two_server_cluster.ecb("decrypt", f"fips-{alg}", 1, alg, bytes.fromhex(cipher_hex)).hex() == plain_hex


@pytest.mark.timeout(180)
@pytest.mark.parametrize("alg", ["aes128", "aes256"])
def test_random_keys_and_blocks_against_openssl(two_server_cluster: Cluster, alg):
    for round_ in range(3):
        name = f"random-{alg}-{round_}"
        key_hex, _ = two_server_cluster.import_key(name, 1, alg)
        counter = secrets.token_hex(16)
        # Lookup tables need 160 entries per block from a pool that OT refills slowly.
        blocks = (1, 7, 130 if two_server_cluster.protocol == "gc2" else 24)[round_]
        assert two_server_cluster.keystream(name, 1, alg, counter, blocks) == \
            openssl_ctr_keystream(alg, key_hex, counter, blocks)
        data = secrets.token_bytes(16 * blocks)
        assert two_server_cluster.ecb("encrypt", name, 1, alg, data) == openssl_ecb(alg, key_hex, data)
        assert two_server_cluster.ecb("decrypt", name, 1, alg, data) == openssl_ecb(alg, key_hex, data, decrypt=True)


@pytest.mark.timeout(120)
def test_counter_wraps_like_openssl(two_server_cluster: Cluster):
    key_hex, _ = two_server_cluster.import_key("wrap", 1, "aes128")
    counter = "ff" * 15 + "fe"
    assert two_server_cluster.keystream("wrap", 1, "aes128", counter, 4) == \
        openssl_ctr_keystream("aes128", key_hex, counter, 4)


@pytest.mark.timeout(120)
def test_key_administration(two_server_cluster: Cluster):
    two_server_cluster.import_key("admin-a", 3, "aes256")
    rows = two_server_cluster.list_keys("admin-")
    assert [(name, kvno, alg) for name, kvno, alg, _ in rows] == [("admin-a", 3, "aes256")]
    _, again = two_server_cluster.import_key("admin-a", 3, "aes256", check=False)
    assert again.returncode != 0 and "key_exists" in again.stderr
    two_server_cluster.mpcctl("key", "delete", "--cluster", str(two_server_cluster.admin_config),
                              *Cluster.key_args("admin-a", 3, "aes256"))
    assert two_server_cluster.list_keys("admin-") == []
    missing = two_server_cluster.mpcctl("aes", "keystream", "--cluster", str(two_server_cluster.admin_config),
                                        *Cluster.key_args("admin-a", 3, "aes256"), "--counter", "0" * 32,
                                        "--blocks", "1", check=False)
    assert missing.returncode != 0 and "unknown_key" in missing.stderr


@pytest.mark.timeout(120)
def test_kerberos_jobs_run_and_an_unknown_key_is_refused_clearly(two_server_cluster: Cluster):
    alg = "aes256-cts-hmac-sha1-96"
    two_server_cluster.import_key("krb-key", 1, alg, secrets.token_hex(32), check=True)
    args = ("krb", "checksum", "--cluster", str(two_server_cluster.admin_config), *Cluster.key_args("krb-key", 1, alg))
    served = two_server_cluster.mpcctl(*args, "--usage", "17", "--in", "00", check=False)
    assert served.returncode == 0, served.stderr
    missing = two_server_cluster.mpcctl("krb", "checksum", "--cluster", str(two_server_cluster.admin_config),
                                        *Cluster.key_args("no-such-key", 1, alg), "--usage", "17", "--in", "00",
                                        check=False)
    assert missing.returncode != 0 and "unknown_key" in missing.stderr, missing.stderr


@pytest.mark.timeout(120)
def test_compute_only_key_may_not_import(two_server_cluster: Cluster):
    path = two_server_cluster.write_key_file(secrets.token_hex(16))
    result = two_server_cluster.mpcctl("key", "import", "--cluster", str(two_server_cluster.compute_config),
                                       *Cluster.key_args("nope", 1, "aes128"), "--key-file", str(path), check=False)
    assert result.returncode != 0 and "unauthorized" in result.stderr


@pytest.mark.timeout(120)
def test_lookup_table_pool_running_dry_fails_clearly_never_wrongly(tmp_path):
    cluster = Cluster(tmp_path / "dry", protocol="lut2")
    try:
        cluster.init()
        for party in (1, 2):
            cluster.set_server_table_setting(party, "lut", "pool_wait_ms", 0)
            cluster.set_server_table_setting(party, "lut", "pool_sboxes", 4096)
        cluster.start()
        key_hex, _ = cluster.import_key("dry", 1, "aes128")

        def job() -> bool:
            counter = secrets.token_hex(16)
            result = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                                    *Cluster.key_args("dry", 1, "aes128"), "--counter", counter, "--blocks", "20",
                                    check=False)
            if result.returncode == 0:
                assert parse_blocks(result.stdout) == openssl_ctr_keystream("aes128", key_hex, counter, 20)
                return True
            assert "lookup-table pool empty" in result.stderr, result.stderr
            return False

        def wait_for_a_full_pool() -> None:
            deadline = time.monotonic() + 30
            while not job():
                assert time.monotonic() < deadline, "the pool never refilled"
                time.sleep(0.5)

        # 20 blocks take 3200 of the pool's 4096 entries: after one job, a burst finds it dry.
        wait_for_a_full_pool()
        burst = [job() for _ in range(5)]
        assert not all(burst), "five jobs in a row cannot all fit a 4096-entry pool"
        # Once the burst stops, preprocessing refills the pool and jobs succeed again.
        time.sleep(1)
        wait_for_a_full_pool()
        # A job larger than the whole pool is refused as such.
        big = cluster.mpcctl("aes", "keystream", "--cluster", str(cluster.admin_config),
                             *Cluster.key_args("dry", 1, "aes128"), "--counter", "0" * 32, "--blocks", "40",
                             check=False)
        assert big.returncode != 0 and "pool holds 4096" in big.stderr
    finally:
        cluster.stop()


@pytest.mark.timeout(180)
def test_dead_peer_fails_fast_and_restart_recovers(fresh_two_server_cluster: Cluster):
    cluster = fresh_two_server_cluster
    key_hex, _ = cluster.import_key("fault", 1, "aes128")
    assert cluster.keystream("fault", 1, "aes128", "0" * 32, 2) == openssl_ctr_keystream("aes128", key_hex, "0" * 32, 2)
    for party in (1, 2):
        cluster.kill_server(party)
        start = time.monotonic()
        with pytest.raises(MpcctlError) as failure:
            cluster.keystream("fault", 1, "aes128", "0" * 32, 2, timeout=20)
        assert time.monotonic() - start < 10, "a dead server must fail the job within the timeouts"
        assert "server" in str(failure.value)
        cluster.restart_server(party)
        deadline = time.monotonic() + 20
        while True:
            try:
                assert cluster.keystream("fault", 1, "aes128", "0" * 32, 2) == \
                    openssl_ctr_keystream("aes128", key_hex, "0" * 32, 2)
                break
            except MpcctlError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


@pytest.mark.timeout(240)
def test_three_server_store_converts_without_a_dealer(tmp_path):
    """Keys imported into a three-server cluster serve from two servers after conversion, with
    no key ever reassembled: servers 1 and 2 each rewrite their own store. They serve under
    security = "passive"; under the default, "active", they are refused until imported anew."""
    three = Cluster(tmp_path / "rss3")
    two = Cluster(tmp_path / "gc2", protocol="gc2", security="passive")
    try:
        three.init()
        three.start()
        keys = {alg: three.import_key(f"convert-{alg}", 2, alg)[0] for alg in ("aes128", "aes256")}
        three.stop()
        two.init()
        for party in (1, 2):
            # The converted servers keep their identities and storage keys.
            for name in ("server.key", "server.pub", "storage.key"):
                shutil.copy(three.server_dir(party) / name, two.server_dir(party) / name)
        result = subprocess.run([str(server_binary()), "--config", str(two.server_dir(1) / "server.toml"),
                                 "--convert-from-rss3", str(three.server_dir(1) / "data")],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "converted 2 keys" in result.stdout
        result = subprocess.run([str(server_binary()), "--config", str(two.server_dir(2) / "server.toml"),
                                 "--convert-from-rss3", str(three.server_dir(2) / "data")],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        # A second run refuses: the new store is not empty.
        again = subprocess.run([str(server_binary()), "--config", str(two.server_dir(1) / "server.toml"),
                                "--convert-from-rss3", str(three.server_dir(1) / "data")],
                               capture_output=True, text=True, timeout=60)
        assert again.returncode != 0 and "not empty" in again.stderr
        two.start()
        for alg, key_hex in keys.items():
            counter = secrets.token_hex(16)
            assert two.keystream(f"convert-{alg}", 2, alg, counter, 3) == \
                openssl_ctr_keystream(alg, key_hex, counter, 3)
        # Converted shares come without the checks an import deals (share_checks.hpp): under
        # security = "active" they are refused, naming the remedy, and a key imported anew serves.
        two.stop()
        for party in (1, 2):
            two.set_server_setting(party, "security", "active")
        two.start()
        refused = two.mpcctl("aes", "keystream", "--cluster", str(two.admin_config),
                             *Cluster.key_args("convert-aes128", 2, "aes128"), "--counter", "00" * 16, "--blocks", "1",
                             check=False)
        assert refused.returncode != 0 and "without the checks of its shares" in refused.stderr, refused.stderr
        fresh_hex, _ = two.import_key("convert-aes128", 3, "aes128")
        deadline = time.monotonic() + 60
        while True:
            served = two.mpcctl("aes", "keystream", "--cluster", str(two.admin_config),
                                *Cluster.key_args("convert-aes128", 3, "aes128"), "--counter", "00" * 16,
                                "--blocks", "1", check=False, timeout=120)
            if served.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.3)  # the pool of AND material still filling after the start
        assert two.keystream_of(served) == openssl_ctr_keystream("aes128", fresh_hex, "00" * 16, 1), served.stderr
        # A two-server server refuses a store of three-server shares, naming the remedy.
        config = two.server_dir(1) / "unconverted.toml"
        shutil.copyfile(two.server_dir(1) / "server.toml", config)
        toml_files.set_value(config, "storage_path", str(three.server_dir(1) / "data"))
        unconverted = subprocess.run([str(server_binary()), "--config", str(config), "--check"],
                                     capture_output=True, text=True, timeout=60)
        assert unconverted.returncode != 0
        assert "--convert-from-rss3" in unconverted.stderr
    finally:
        three.stop()
        two.stop()
