"""A KDC host that sends the three servers different copies of one request.

Every server builds its inputs from its own copy. Replicated sharing holds only while the
three parties compute on the same public inputs: with different copies, what two servers
reconstruct for the client is no longer the function it asked for, and one server's key
shares appear in it on their own. The client library sends every server the same frame, so a
hostile KDC host (anything holding the compute client key) speaks raw CurveZMQ here, as in
test_bad_input.py.

The first test is the attack on the GCM tag job that the servers' agreement on each request
stops: two tags, each with one server given a text that differs in one block, gave the KDC
host every share component of H^2 (and so H) from the three reconstructions, enough to forge
tickets after the compromise is over. The others send divergent copies of every job kind,
with each server in turn holding the odd copy: every server refuses the request before
computing (RequestMismatch, naming the server whose copy differs), nothing is returned, and
the cluster then computes honest requests right (OpenSSL, Python's AESGCM, libk5crypto).
"""

from __future__ import annotations

import secrets
import struct

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mpctest.mpc_cluster import openssl_ctr_keystream
from mpctest.raw_frames import (AES256_CTS, AES256_GCM, ECB_ENCRYPT, KRB_CHECKSUM, KRB_DECRYPT, KRB_ENCRYPT, UNKNOWN_NONCE,
                                OK, REQUEST_MISMATCH, client_for, compute_ctr, compute_ecb, exchange, fresh_id, gcm_open,
                                gcm_prefetch, gcm_reopen, gcm_tag, gcm_tag_chained, key_id, krb_copies, krb_seeds_bytes,
                                mismatch_counters, prefetch_one_nonce, steady_mismatch_counters,
                                wait_for_mismatches)
from mpctest.gcm_client import Engine as GcmEngine
from mpctest.gcm_client import ctr_keystream, gcm_tag_of, seal
from mpctest.krb_client import ENCTYPES, K5Crypto
from mpctest.krb_client import Engine as KrbEngine
from mpctest.krb_client import restart_leader, wait_until_krb_serving

AES_KEY = ("divergent/aes", 1, "aes128")
GCM_KEY = ("divergent/gcm", 1, "aes256-gcm")
KRB_KEY = ("divergent/krb@EXAMPLE.COM", 2, AES256_CTS)
# Sends of divergent tag copies until every server answers its own: the servers answer a tag
# without waiting to compare copies, so a refusal (another copy heard of first) is a rare race.
ANSWER_TRIES = 5
PARTIES = (1, 2, 3)


def flip(frame: bytes, at: int) -> bytes:
    """The frame with one bit of byte `at` (from the end when negative) changed."""
    out = bytearray(frame)
    out[at] ^= 0x01
    return bytes(out)


# ------------------------------------------------------------------ GF(2^128), GCM bit order

GCM_R = 0xE1 << 120


def gf_mult(x: bytes, y: bytes) -> bytes:
    a, b = int.from_bytes(x, "big"), int.from_bytes(y, "big")
    z = 0
    for i in range(127, -1, -1):
        if (a >> i) & 1:
            z ^= b
        b = (b >> 1) ^ GCM_R if b & 1 else b >> 1
    return z.to_bytes(16, "big")


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


# -------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def setup(cluster, context):
    """The shared cluster with an AES-128 key, an AES-256-GCM key and an aes256-cts user key;
    raw clients with the compute key; engines through the client library for honest jobs."""
    aes_hex, _ = cluster.import_key(*AES_KEY)
    gcm_hex, _ = cluster.import_key(*GCM_KEY)
    krb_key = secrets.token_bytes(32)
    admin = KrbEngine(cluster.admin_config)
    krb_engine = KrbEngine(cluster.compute_config)
    gcm_engine = GcmEngine(cluster.compute_config)
    k5 = K5Crypto()
    raw = {party: client_for(cluster, context, party, role="compute") for party in PARTIES}
    try:
        admin.import_key(*KRB_KEY, krb_key)
        cluster.wait_until_serving(AES_KEY)
        wait_until_krb_serving(krb_engine, KRB_KEY)
        yield {"cluster": cluster, "aes": bytes.fromhex(aes_hex), "gcm": bytes.fromhex(gcm_hex), "krb": krb_key,
               "raw": raw, "krb_engine": krb_engine, "gcm_engine": gcm_engine, "k5": k5}
    finally:
        for client in raw.values():
            client.close()
        k5.close()
        gcm_engine.close()
        krb_engine.close()
        admin.close()


Copies = bytes | list[bytes]  # one frame for every server, or each server's own (krb_copies)


def copy_for(copies: Copies, party: int) -> bytes:
    return copies if isinstance(copies, bytes) else copies[party - 1]


def divergent(frame: Copies, other: Copies, odd: int) -> dict[int, bytes]:
    return {party: copy_for(other if party == odd else frame, party) for party in PARTIES}


def flip_common(copies: list[bytes], at: int) -> list[bytes]:
    """Each server's copy with one bit changed at `at` from the end of the part all servers
    compare (the seeds after it are each server's own)."""
    return [flip(copy, at - krb_seeds_bytes()) for copy in copies]


def answered_copies(raw, odd: int, copies):
    """copies() -> (what the caller keeps, the frame, the odd server's frame), fresh nonces and id
    each time; sent until every server answers its own copy, then (kept, replies). A server that
    hears of another copy before its own arrives refuses it (all_answered), which gives a KDC
    host nothing; it is the answered case a test checks, so the copies are sent again."""
    for _ in range(ANSWER_TRIES):
        kept, frame, other = copies()
        replies = exchange(raw, divergent(frame, other, odd))
        if all_answered(replies):
            return kept, replies
    pytest.fail(f"odd server {odd}: some server refused the copies in each of {ANSWER_TRIES} tries")


# ------------------------------------------------------------------- the GCM tag attack

def reconstructions(replies) -> dict[int, bytes]:
    """The client's three openings of a tag: opening i takes server i's a and server i-1's x,
    the two components masked by the PRF key those two servers share."""
    x = {party: body[:16] for party, (_, _, body) in replies.items()}
    a = {party: body[16:32] for party, (_, _, body) in replies.items()}
    return {1: xor(a[1], x[3]), 2: xor(a[2], x[1]), 3: xor(a[3], x[2])}


def test_divergent_gcm_tag_copies_leak_nothing(setup):
    """Tag two prefetched nonces, each time with one server (3, then 2) given a text whose
    second block differs by the field's unit element. With shares masked independently of the
    copy, the three reconstructions of the first tag would give server 3's two components of its
    share of H^2 and those of the second server 2's x component, whose XOR with server 3's a
    component is H^2 = AES_K(0)^2: the hash key of every ticket tag. The servers answer a tag
    without waiting to compare copies, so what stops this is the masks, keyed by each server's
    copy: the two servers that hold one copy give its true tag, every opening that takes a
    share of the odd copy is noise, and each server counts the differing copies afterwards."""
    cluster, raw, key = setup["cluster"], setup["raw"], setup["gcm"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    before = mismatch_counters(cluster)
    logged_before = {party: len(cluster.log_events(party, "GCM job answered on differing copies")) for party in PARTIES}
    unit = bytes([0x80]) + bytes(15)  # 1 in GF(2^128), GCM's bit order
    share_components = {}
    for odd in (3, 2):
        def copies():
            nonce = prefetch_one_nonce(raw, gcm_key_id)
            text = secrets.token_bytes(32)
            other = text[:16] + xor(text[16:], unit)
            request_id = fresh_id()
            return ((nonce, text, other), gcm_tag(request_id, gcm_key_id, nonce, b"", text),
                    gcm_tag(request_id, gcm_key_id, nonce, b"", other))
        (nonce, text, other), replies = answered_copies(raw, odd, copies)
        v = reconstructions(replies)
        if odd == 3:
            share_components["a3"] = xor(v[3], v[2])
        else:
            share_components["x2"] = xor(v[3], v[1])
        # Opening i pairs servers i and i-1: only the pair without the odd server holds one copy.
        honest_pair = {3: 2, 2: 1}[odd]
        assert v[honest_pair] == gcm_tag_of(key, nonce, b"", text), "two servers with one copy gave a wrong tag"
        for opening in set(PARTIES) - {honest_pair}:
            assert v[opening] not in (gcm_tag_of(key, nonce, b"", text), gcm_tag_of(key, nonce, b"", other)), \
                f"opening {opening} mixes the two copies yet gave a tag"
    hash_key = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(bytes(16))
    recovered = xor(share_components["a3"], share_components["x2"])
    assert recovered != gf_mult(hash_key, hash_key), (
        "the GHASH key leaked: H^2 recovered from two tags with one divergent copy each")
    after = wait_for_mismatches(cluster, before, 2)
    assert all(after[party] >= before[party] + 2 for party in PARTIES), (before, after)
    for odd, holders in ((3, (1, 2)), (2, (1, 3))):
        for party in holders:
            assert any(f"party {odd}'s copy of the request differs" in event.get("detail", "")
                       for event in cluster.log_events(party, "GCM job answered on differing copies")[logged_before[party]:])
    # The nonces are spent, and honest tags stay right.
    engine = setup["gcm_engine"]
    [(nonce, keystream)] = engine.prefetch(1, 2, key=GCM_KEY)
    plaintext = secrets.token_bytes(29)
    assert seal(engine, nonce, keystream, plaintext, b"aad", key=GCM_KEY) == AESGCM(key).encrypt(nonce, plaintext,
                                                                                                  b"aad")


def test_divergent_chained_tag_copies_give_noise(setup):
    """A chained tag (a PAC's KDC checksum over its server checksum) comes back as three additive
    shares, each masked by a zero-sharing under keys bound to the server's copy. With one server
    given data that differs in one block, whichever server is odd, the shares the KDC host
    combines are the chained tag of neither copy (it never gets a checksum over a server checksum
    the servers did not agree on), and every server counts the differing copies afterwards."""
    cluster, raw, key = setup["cluster"], setup["raw"], setup["gcm"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    prefix = bytes([0x02, 0, 0, 0, 17])
    before = mismatch_counters(cluster)
    for odd in PARTIES:
        def copies():
            nonce, chained = prefetch_one_nonce(raw, gcm_key_id), prefetch_one_nonce(raw, gcm_key_id)
            data = secrets.token_bytes(48)
            other = data[:16] + xor(data[16:32], bytes([0x80]) + bytes(15)) + data[32:]
            request_id = fresh_id()
            return ((nonce, chained, data, other),
                    gcm_tag_chained(request_id, gcm_key_id, nonce, data, chained, prefix),
                    gcm_tag_chained(request_id, gcm_key_id, nonce, other, chained, prefix))
        (nonce, chained, data, other), replies = answered_copies(raw, odd, copies)
        for party, (status, error, body) in replies.items():
            assert len(body) == 16 + 16 + 1 + 16 and body[32] == 1, body.hex()
        combined = bytes(16)
        for _, _, body in replies.values():
            combined = xor(combined, body[33:49])
        for copy in (data, other):
            server_checksum = AESGCM(key).encrypt(nonce, b"", copy)
            assert combined != AESGCM(key).encrypt(chained, b"", prefix + nonce + server_checksum), \
                f"odd server {odd}: the chained tag of differing copies opened"
    after = wait_for_mismatches(cluster, before, 3)
    assert all(after[party] >= before[party] + 3 for party in PARTIES), (before, after)


def reopen_check(replies) -> bytes:
    """The XOR of the three servers' check shares of a reopen (zero: the tag is right)."""
    out = bytes(16)
    for party, (status, error, body) in replies.items():
        assert status == OK, f"server {party}: reopen status {status} ({error})"
        (blocks,) = struct.unpack_from("<I", body)
        assert blocks == 0 and len(body) == 4 + 16
        out = xor(out, body[4:20])
    return out


def reopen_of(raw, gcm_key_id: bytes, nonce: bytes, aad: bytes, tag_sent: bytes) -> bytes:
    """The XOR of the three servers' check shares of a reopen of (aad, tag_sent) under nonce."""
    frame = gcm_reopen(fresh_id(), gcm_key_id, nonce, aad, b"", tag_sent)
    return reopen_check(exchange(raw, dict.fromkeys(PARTIES, frame)))


def check_reopen_answers(cluster, raw, gcm_key_id: bytes, nonce: bytes, aad: bytes, tag: bytes) -> None:
    """The check shares of reopens of a tagged nonce XOR to zero for the true tag and otherwise
    to r * s for a fresh secret r: never s, fresh for every request, and noise whenever the
    servers' copies differ, even with the true tag on two of them."""
    assert reopen_of(raw, gcm_key_id, nonce, aad, tag) == bytes(16)
    assert reopen_of(raw, gcm_key_id, nonce, aad, tag) == bytes(16)
    unit = bytes([0x80]) + bytes(15)
    forged = xor(tag, unit)
    first = reopen_of(raw, gcm_key_id, nonce, aad, forged)
    assert first != bytes(16)
    assert first not in (unit, tag, forged), "the check opened the tag difference"
    assert reopen_of(raw, gcm_key_id, nonce, aad, forged) not in (first, unit), "another request must get a fresh r"
    before = mismatch_counters(cluster)
    for odd in PARTIES:
        request_id = fresh_id()
        frame = gcm_reopen(request_id, gcm_key_id, nonce, aad, b"", tag)
        other = gcm_reopen(request_id, gcm_key_id, nonce, flip(aad, 0), b"", tag)
        replies = exchange(raw, divergent(frame, other, odd))
        if all_answered(replies):
            assert reopen_check(replies) != bytes(16), f"server {odd} held another copy, yet the check passed"
    after = wait_for_mismatches(cluster, before, 3)
    assert all(after[party] >= before[party] + 2 for party in PARTIES), (before, after)


def test_reopen_answers_say_whether_a_tag_is_right_and_nothing_more(setup):
    """A reopen is answered at once from each server's own copy, like a tag (the difference
    between the sent tag and the true one would be a tag oracle: check_reopen_answers). A nonce
    never tagged is not held: refused, so the client opens it in full."""
    cluster, raw, key = setup["cluster"], setup["raw"], setup["gcm"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    nonce = prefetch_one_nonce(raw, gcm_key_id)
    aad = secrets.token_bytes(40)
    tagged = exchange(raw, dict.fromkeys(PARTIES, gcm_tag(fresh_id(), gcm_key_id, nonce, aad, b"")))
    tag = reconstructions(tagged)[1]
    assert tag == gcm_tag_of(key, nonce, aad, b"")
    check_reopen_answers(cluster, raw, gcm_key_id, nonce, aad, tag)
    unheld = prefetch_one_nonce(raw, gcm_key_id)
    replies = exchange(raw, dict.fromkeys(PARTIES, gcm_reopen(fresh_id(), gcm_key_id, unheld, aad, b"", tag)))
    assert all(status == UNKNOWN_NONCE and "not held for reopening" in error
               for status, error, _ in replies.values()), replies


def test_local_reopen_answers_say_whether_a_tag_is_right_and_nothing_more(setup):
    """The same for a nonce with local masks, whose shares each server computes again at every
    reopen. Nothing is held for it, yet a never-tagged local nonce is answered too: its check
    fails like a forgery."""
    cluster, raw = setup["cluster"], setup["raw"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    nonce = prefetch_one_nonce(raw, gcm_key_id, local=True)
    assert nonce[8] & 0x80
    aad = secrets.token_bytes(40)
    tagged = exchange(raw, dict.fromkeys(PARTIES, gcm_tag(fresh_id(), gcm_key_id, nonce, aad, b"")))
    openings = reconstructions(tagged)
    assert len(set(openings.values())) == 1
    tag = openings[1]
    check_reopen_answers(cluster, raw, gcm_key_id, nonce, aad, tag)
    untagged = prefetch_one_nonce(raw, gcm_key_id, local=True)
    assert reopen_of(raw, gcm_key_id, untagged, aad, tag) != bytes(16)


def all_answered(replies) -> bool:
    """Whether every server answered its copy of a tag or reopen. A server that heard of another
    copy before its own arrived refuses it instead (RequestMismatch); that gives nothing away."""
    for party, (status, error, body) in replies.items():
        assert status in (OK, REQUEST_MISMATCH), f"server {party}: {status} ({error})"
        assert status == OK or body == b"", "a refusal carried a body"
    return all(status == OK for status, _, _ in replies.values())


def test_divergent_gcm_tag_copies_give_at_most_one_tag_per_nonce(setup):
    """Each server answers its own copy once per nonce. With the odd copy at any server, the
    one pair that shares a copy opens that copy's true tag and the other openings are noise;
    with three different copies, or a copy sent to two servers and another to the third later,
    no opening ever gives the tag of a copy fewer than two servers hold."""
    raw, key = setup["raw"], setup["gcm"]
    gcm_key_id = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    pair_of = {1: 3, 2: 1, 3: 2}  # the opening made by the two servers other than the odd one
    for odd in PARTIES:
        nonce = prefetch_one_nonce(raw, gcm_key_id)
        request_id = fresh_id()
        text = secrets.token_bytes(48)
        frame = gcm_tag(request_id, gcm_key_id, nonce, b"aad", text)
        replies = exchange(raw, divergent(frame, flip(frame, -1), odd))
        if not all_answered(replies):
            continue
        v = reconstructions(replies)
        assert v[pair_of[odd]] == gcm_tag_of(key, nonce, b"aad", text)
        odd_tag = gcm_tag_of(key, nonce, b"aad", flip(text, -1))
        assert odd_tag not in v.values(), f"the tag of server {odd}'s lone copy came out"
        assert len(set(v.values())) == 3

    nonce = prefetch_one_nonce(raw, gcm_key_id)
    request_id = fresh_id()
    texts = {party: secrets.token_bytes(40) for party in PARTIES}
    replies = exchange(raw, {party: gcm_tag(request_id, gcm_key_id, nonce, b"", texts[party]) for party in PARTIES})
    if all_answered(replies):
        tags = {gcm_tag_of(key, nonce, b"", text) for text in texts.values()}
        assert not tags & set(reconstructions(replies).values()), "three different copies gave a tag"

    nonce = prefetch_one_nonce(raw, gcm_key_id)
    text, late = secrets.token_bytes(40), secrets.token_bytes(40)
    first = exchange(raw, dict.fromkeys((1, 2), gcm_tag(fresh_id(), gcm_key_id, nonce, b"", text)))
    second = exchange(raw, {3: gcm_tag(fresh_id(), gcm_key_id, nonce, b"", late)})
    replies = {**first, **second}
    assert all(status == OK for status, _, _ in replies.values()), replies
    v = reconstructions(replies)
    assert v[2] == gcm_tag_of(key, nonce, b"", text)
    assert gcm_tag_of(key, nonce, b"", late) not in v.values(), "a late copy at one server gave its tag"
    # Spent everywhere: the nonce is refused now, whatever the copy.
    again = exchange(raw, dict.fromkeys(PARTIES, gcm_tag(fresh_id(), gcm_key_id, nonce, b"", text)))
    assert all(status != OK for status, _, _ in again.values()), again
    check_honest_job("gcm_tag", setup)


# ------------------------------------------------------- every job kind, every position

def krb_key_id() -> bytes:
    return key_id(KRB_KEY[0], KRB_KEY[1], KRB_KEY[2])


def divergent_frames(kind: str, key: dict) -> tuple[Copies, Copies]:
    """(the copy two servers get, the odd copy) of one request of `kind`: one byte apart."""
    request_id = fresh_id()
    gcm = key_id(GCM_KEY[0], GCM_KEY[1], AES256_GCM)
    if kind == "ctr":
        frame = compute_ctr(request_id, AES_KEY[0], blocks=5, counter=secrets.token_bytes(16))
        return frame, flip(frame, -1)
    if kind == "ecb":
        frame = compute_ecb(request_id, AES_KEY[0], 2, secrets.token_bytes(32), ECB_ENCRYPT)
        return frame, flip(frame, -7)
    if kind == "gcm_prefetch":
        return gcm_prefetch(request_id, gcm, 2, 1), gcm_prefetch(request_id, gcm, 3, 1)
    if kind == "gcm_prefetch_local":
        # A batch of local masks runs no circuit, but its header names the copies all the same.
        return gcm_prefetch(request_id, gcm, 2, 1, local=True), gcm_prefetch(request_id, gcm, 3, 1, local=True)
    if kind == "gcm_open":
        frame = gcm_open(request_id, gcm, secrets.token_bytes(12), b"a", secrets.token_bytes(40), bytes(16))
        return frame, flip(frame, -20)
    # The record mask's seed hashes end the compared part (3 x 32 bytes and a count).
    hashes = 1 + 3 * 32
    if kind == "krb_encrypt":
        copies = krb_copies(request_id, krb_key_id(), KRB_ENCRYPT, 3, secrets.token_bytes(16 + 50))
        return copies, flip_common(copies, -1 - hashes)
    if kind == "krb_decrypt":
        copies = krb_copies(request_id, krb_key_id(), KRB_DECRYPT, 2, secrets.token_bytes(16 + 30 + 12))
        return copies, flip_common(copies, -3 - hashes)
    if kind == "krb_checksum":
        data = secrets.token_bytes(40)
        return (krb_copies(request_id, krb_key_id(), KRB_CHECKSUM, 17, data),
                krb_copies(request_id, krb_key_id(), KRB_CHECKSUM, 56, data))
    if kind == "krb_cf2":
        combine = (AES256_CTS, b"replykey", secrets.token_bytes(32))
        copies = krb_copies(request_id, krb_key_id(), KRB_ENCRYPT, 3, secrets.token_bytes(16 + 20), combine)
        return copies, flip_common(copies, -1 - hashes)  # the caller's half of the combined key
    raise AssertionError(kind)


def check_honest_job(kind: str, setup: dict) -> None:
    """One honest request of the kind, through the client library, against the reference."""
    cluster, k5 = setup["cluster"], setup["k5"]
    if kind in ("ctr", "ecb"):
        counter = secrets.token_hex(16)
        assert cluster.keystream(*AES_KEY, counter, 3) == openssl_ctr_keystream("aes128", setup["aes"].hex(), counter, 3)
    elif kind.startswith("gcm"):
        engine = setup["gcm_engine"]
        [(nonce, keystream)] = engine.prefetch(1, 1, key=GCM_KEY)
        assert keystream == ctr_keystream(setup["gcm"], nonce, 2, 1)
        sealed = AESGCM(setup["gcm"]).encrypt(nonce, b"ticket", b"aad")
        assert engine.open(nonce, b"aad", sealed[:-16], sealed[-16:], key=GCM_KEY) == b"ticket"
    else:
        engine, key = setup["krb_engine"], setup["krb"]
        _, _, enctype, cksumtype, _ = ENCTYPES["aes256"]
        data = secrets.token_bytes(33)
        assert engine.checksum(KRB_KEY, 17, data) == k5.make_checksum(cksumtype, enctype, key, 17, data)


KINDS = ("ctr", "ecb", "gcm_prefetch", "gcm_prefetch_local", "gcm_open", "krb_encrypt", "krb_decrypt", "krb_checksum",
         "krb_cf2")


@pytest.mark.parametrize("odd", PARTIES)
@pytest.mark.parametrize("kind", KINDS)
def test_divergent_copies_are_refused_everywhere(setup, kind, odd):
    cluster, raw = setup["cluster"], setup["raw"]
    before = steady_mismatch_counters(cluster)
    frame, other = divergent_frames(kind, setup)
    assert frame != other and copy_for(frame, 1)[2:18] == copy_for(other, 1)[2:18]
    replies = exchange(raw, divergent(frame, other, odd))
    for party, (status, error, body) in replies.items():
        assert (status, body) == (REQUEST_MISMATCH, b""), f"server {party}: status {status} ({error})"
        assert f"party {odd}'s copy of the request differs" in error, error
    after = mismatch_counters(cluster)
    assert all(after[party] == before[party] + 1 for party in PARTIES), (before, after)
    # The id is spent: sending the honest copy again is refused, not computed.
    replies = exchange(raw, {party: copy_for(frame, party) for party in PARTIES})
    assert all(status != OK for status, _, _ in replies.values()), replies
    check_honest_job(kind, setup)


def test_record_mask_seeds_that_differ_between_two_servers_are_refused_everywhere(setup):
    """Two servers hold each seed of a Kerberos record's mask; a client that gives them
    different ones would have them compute on different records. A seed that does not match the
    hash all three compare is refused, and so is a copy with another hash."""
    raw = setup["raw"]
    data = secrets.token_bytes(16 + 40)
    # Server 3 holds components 2 and 1 (its own, then server 2's): its component 1 altered.
    copies = krb_copies(fresh_id(), krb_key_id(), KRB_ENCRYPT, 3, data)
    copies[2] = flip(copies[2], -1)
    replies = exchange(raw, {party: copies[party - 1] for party in PARTIES})
    assert all(status != OK and body == b"" for status, _, body in replies.values()), replies
    assert "does not match its hash" in replies[3][1], replies[3]
    # Server 2 gets another hash of component 2, which it does not hold: the copies differ.
    copies = krb_copies(fresh_id(), krb_key_id(), KRB_ENCRYPT, 3, data)
    replies = exchange(raw, divergent(copies, flip_common(copies, -5), 2))
    for party, (status, error, body) in replies.items():
        assert (status, body) == (REQUEST_MISMATCH, b""), f"server {party}: status {status} ({error})"
    check_honest_job("krb_encrypt", setup)


@pytest.mark.timeout(120)
def test_divergent_kerberos_copies_are_refused_when_evaluated_layer_by_layer(fresh_cluster, context):
    """The leader's krb_evaluation decides how a Kerberos batch runs; the copies are compared
    before either way starts."""
    cluster = fresh_cluster
    key = secrets.token_bytes(32)
    admin = KrbEngine(cluster.admin_config)
    try:
        admin.import_key(*KRB_KEY, key)
    finally:
        admin.close()
    restart_leader(cluster, {"krb_evaluation": "layered"})
    engine, k5 = KrbEngine(cluster.compute_config, 60000), K5Crypto()
    raw = {party: client_for(cluster, context, party, role="compute") for party in PARTIES}
    try:
        wait_until_krb_serving(engine, KRB_KEY)
        copies = krb_copies(fresh_id(), krb_key_id(), KRB_CHECKSUM, 17, secrets.token_bytes(24))
        replies = exchange(raw, divergent(copies, flip_common(copies, -1 - (1 + 3 * 32)), 2))
        for party, (status, error, body) in replies.items():
            assert (status, body) == (REQUEST_MISMATCH, b""), f"server {party}: status {status} ({error})"
            assert "party 2's copy of the request differs" in error, error
        _, _, enctype, cksumtype, _ = ENCTYPES["aes256"]
        data = secrets.token_bytes(19)
        assert engine.checksum(KRB_KEY, 17, data) == k5.make_checksum(cksumtype, enctype, key, 17, data)
    finally:
        for client in raw.values():
            client.close()
        k5.close()
        engine.close()
