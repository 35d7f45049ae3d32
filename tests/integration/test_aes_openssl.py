"""AES computed by the three servers equals OpenSSL, and FIPS-197 where it has vectors."""

from __future__ import annotations

import secrets

import pytest

from mpctest.mpc_cluster import openssl_ctr_keystream, openssl_ecb

ALGORITHMS = ("aes128", "aes256")

# Counters: zero, random, one whose low 64 bits wrap within 7 blocks (the carry must reach
# the high half, as in OpenSSL's 128-bit big-endian CTR), and the all-ones counter that
# wraps the whole 128 bits.
COUNTERS = (
    "00000000000000000000000000000000",
    secrets.token_hex(16),
    "0123456789abcdef" + "fffffffffffffffd",
    "ff" * 16,
)
BLOCK_COUNTS = (1, 7, 1000)

FIPS_197 = {
    # Appendix C.1 (AES-128) and C.3 (AES-256): key, plaintext, ciphertext.
    "aes128": ("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
               "69c4e0d86a7b0430d8cdb78070b4c55a"),
    "aes256": ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
               "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"),
}


@pytest.fixture(scope="module")
def keys(cluster):
    """A random key per algorithm, imported through mpcctl; name -> (name, kvno, alg, hex)."""
    imported = {}
    for alg in ALGORITHMS:
        name = f"it/openssl-{alg}"
        key_hex, _ = cluster.import_key(name, 1, alg)
        imported[alg] = (name, 1, alg, key_hex)
    for alg, (key_hex, _, _) in FIPS_197.items():
        cluster.import_key(f"fips197/{alg}", 1, alg, key_hex)
    cluster.wait_until_serving(imported["aes128"][:3])
    return imported


@pytest.mark.parametrize("alg", ALGORITHMS)
@pytest.mark.parametrize("counter", COUNTERS, ids=("zero", "random", "wrap64", "wrap128"))
@pytest.mark.parametrize("blocks", BLOCK_COUNTS)
def test_keystream_equals_openssl_ctr(cluster, keys, alg, counter, blocks):
    name, kvno, _, key_hex = keys[alg]
    got = cluster.keystream(name, kvno, alg, counter, blocks)
    want = openssl_ctr_keystream(alg, key_hex, counter, blocks)
    assert len(got) == 16 * blocks
    if got != want:
        first = next(i for i in range(0, len(want), 16) if got[i:i + 16] != want[i:i + 16]) // 16
        pytest.fail(f"{alg} keystream from counter {counter}: block {first} differs from OpenSSL "
                    f"({got[16 * first:16 * first + 16].hex()} != {want[16 * first:16 * first + 16].hex()})")


def test_keystream_continues_across_calls(cluster, keys):
    """Two calls at counter c and c + n give the same bytes as one call of 2n blocks."""
    name, kvno, alg, _ = keys["aes256"]
    start = int("0123456789abcdef" + "fffffffffffffff0", 16)
    whole = cluster.keystream(name, kvno, alg, f"{start:032x}", 40)
    first = cluster.keystream(name, kvno, alg, f"{start:032x}", 20)
    second = cluster.keystream(name, kvno, alg, f"{start + 20:032x}", 20)
    assert first + second == whole


@pytest.mark.parametrize("alg", ALGORITHMS)
@pytest.mark.parametrize("blocks", (1, 5, 64))
def test_ecb_equals_openssl(cluster, keys, alg, blocks):
    name, kvno, _, key_hex = keys[alg]
    plaintext = secrets.token_bytes(16 * blocks)
    ciphertext = cluster.ecb("encrypt", name, kvno, alg, plaintext)
    assert ciphertext == openssl_ecb(alg, key_hex, plaintext)
    assert cluster.ecb("decrypt", name, kvno, alg, ciphertext) == plaintext
    # Decrypting random data also matches OpenSSL (not only round trips).
    noise = secrets.token_bytes(16 * blocks)
    assert cluster.ecb("decrypt", name, kvno, alg, noise) == openssl_ecb(alg, key_hex, noise, decrypt=True)


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_fips_197_vectors(cluster, keys, alg):
    _, plaintext, ciphertext = FIPS_197[alg]
    name = f"fips197/{alg}"
    assert cluster.ecb("encrypt", name, 1, alg, bytes.fromhex(plaintext)).hex() == ciphertext
    assert cluster.ecb("decrypt", name, 1, alg, bytes.fromhex(ciphertext)).hex() == plaintext
    # The same vector as the first keystream block at counter = plaintext.
    assert cluster.keystream(name, 1, alg, plaintext, 1).hex() == ciphertext


def test_algorithms_are_not_confused(cluster, keys):
    """The AES-128 and AES-256 FIPS keys start with the same 16 bytes, yet differ."""
    block = bytes.fromhex(FIPS_197["aes128"][1])
    assert cluster.ecb("encrypt", "fips197/aes128", 1, "aes128", block) != \
        cluster.ecb("encrypt", "fips197/aes256", 1, "aes256", block)
