/* kdc-plugin/router/krb_jobs.c - protected keys of the standard enctypes 17 and 18
 * (aes128/aes256-cts-hmac-sha1-96, RFC 3962) and 19 and 20 (aes128-cts-hmac-sha256-128,
 * aes256-cts-hmac-sha384-192, RFC 8009): users' and services' keys, through the engine's
 * Kerberos jobs (krb_jobs.h).
 *
 * The engine computes exactly what libk5crypto's krb5_c_encrypt / _decrypt /
 * _make_checksum compute under the key (mpc-engine/client/mpc_client.h, the Kerberos jobs),
 * with the derived keys and HMAC states held as shares; so ciphertexts and checksums here
 * are byte for byte libk5crypto's, and clients notice nothing.
 *
 *   engine key: name = mpc_kdc_engine_key_name(handle id), version = kvno, algorithm the id
 *               of the enctype's row in the key-algorithm table (router_krb_algorithm), as
 *               enrolled by kdb/user_enroll.c;
 *   encrypt:    confounder from krb5_c_random_make_octets (libk5crypto's own, as its
 *               krb5int_dk_encrypt), confounder || plaintext to mpc_client_krb_encrypt;
 *   decrypt:    mpc_client_krb_decrypt checks the HMAC inside the computation; a wrong one
 *               (MPC_EBADTAG) is KRB5KRB_AP_ERR_BAD_INTEGRITY, as libk5crypto answers a
 *               wrong password or a forged message;
 *   checksums:  mpc_client_krb_checksum (the enctype's HMAC under Kc: 12, 16 or 24
 *               bytes, router_krb_mac_len), verified here by a
 *               constant-time comparison; the _iov calls checksum HEADER, DATA, PADDING
 *               and SIGN_ONLY in order (krb_rules.h), as libk5crypto;
 *   KRB-FX-CF2: krb5kdc combines a client's key with the FAST armor key (the encrypted
 *               challenge, RFC 6113 5.4.6) or the strengthen key (the reply key). The
 *               combined key gives PRF+(client key, pepper), which is as good as the
 *               password for FAST, so it never exists in clear: router_krb_cf2 computes
 *               the clear key's half, PRF+(K1, pepper1), with libk5crypto and describes
 *               the combined key (kdc-plugin/kdb/handle.h, combined handles); encrypt,
 *               decrypt and checksum under it go to mpc_client_krb_cf2_*, which compute
 *               the combined key inside the job. Served as krb5kdc uses them (usages 54
 *               and 55 with "challengelongterm", 3 and 56 with "replykey"); the engine
 *               enforces the same list.
 *   PRF:        refused: a protected key's PRF output is never opened (krb5kdc asks for
 *               one only inside krb5_c_fx_cf2_simple, which is served as above).
 *
 * What is refused (KRB5_CRYPTO_INTERNAL, fail closed, the message naming the call, usage
 * and key; krb_rules.h says why these): a usage other than 1, 2, 3, 17, 56 (the engine
 * holds no other derived keys: usage 64, the CAMMAC of authentication indicators, is one
 * a KDC could ask for) or, under a combined key, other than 3, 54, 55, 56; a usage the
 * engine serves for other operations only (it never encrypts under usage 1, which would
 * forge a client's preauthentication); a cipher state, a checksum type other than the
 * enctype's own for a new checksum, more data than one engine call takes
 * (MPC_KRB_MAX_DATA_BYTES), and the entry points krb5kdc never uses with these keys: the
 * _iov encryption (GSSAPI's), krb5_c_derive_prfplus (SPAKE's, which must stay disabled)
 * and krb5_c_init_state. A handle is never passed to a libk5crypto function.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "krb_jobs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "krb_rules.h"
#include "originals.h"
#include "protected_key.h"
#include "router_util.h"

_Static_assert(ROUTER_KRB_CONFOUNDER_LEN == MPC_KRB_CONFOUNDER_BYTES, "confounder length");
_Static_assert(ROUTER_KRB_MAX_MAC_LEN == MPC_KRB_MAX_MAC_BYTES, "longest MAC");
_Static_assert(ROUTER_KRB_MAX_DATA == MPC_KRB_MAX_DATA_BYTES, "longest data of one call");

/* One engine key, and how messages name it. Under a combined handle the job runs under
 * KRB-FX-CF2 of the stored key (name, kvno, algorithm) and the caller's key: `combine` is
 * set and `enctype` is the combined key's, which fixes every length. */
struct krb_key {
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint32_t kvno;
    int algorithm;
    krb5_enctype enctype;
    const mpc_krb_combine *combine;
    mpc_krb_combine combine_storage;
    char kind[64];
};

#define KEY_FMT "%s kvno %u (%s)%s"
#define KEY_ARGS(k) (k)->name, (unsigned)(k)->kvno, router_krb_enctype_name((k)->enctype), (k)->kind
#define NO_USAGE (-1)

static void
key_of(const mpc_kdb_key_id *id, struct krb_key *k)
{
    memset(k, 0, sizeof(*k));
    mpc_kdc_engine_key_name(id, k->name);
    k->kvno = id->kvno;
    k->enctype = id->enctype;
    k->algorithm = router_krb_algorithm(id->enctype);
    if (id->combine.enctype != 0) {
        k->enctype = id->combine.enctype;
        k->combine_storage.combined_algorithm = router_krb_algorithm(id->combine.enctype);
        k->combine_storage.pepper = id->combine.pepper;
        k->combine_storage.mask = id->combine.mask;
        k->combine_storage.mask_length = id->combine.mask_len;
        k->combine = &k->combine_storage;
        snprintf(k->kind, sizeof(k->kind), " in KRB-FX-CF2 (\"%s\", %s)", id->combine.pepper,
                 router_krb_enctype_name(id->enctype));
    }
}

/* The usages served under k: those whose derived keys the engine holds, or those krb5kdc
 * uses with a combined key (the engine checks each against its pepper and operation). */
static int
usage_served(const struct krb_key *k, krb5_keyusage usage)
{
    if (k->combine == NULL)
        return router_krb_usage_served(usage);
    return usage == 3 || usage == 54 || usage == 55 || usage == 56;
}

/* A copy of len bytes (at least one byte allocated) or NULL. */
static uint8_t *
copy_of(const void *p, size_t len)
{
    uint8_t *copy = malloc(len != 0 ? len : 1);

    if (copy != NULL && len != 0)
        memcpy(copy, p, len);
    return copy;
}

int
router_krb_serves(const mpc_kdb_key_id *key)
{
    return key != NULL && router_krb_algorithm(key->enctype) != 0 &&
           (key->combine.enctype == 0 || router_krb_algorithm(key->combine.enctype) != 0);
}

/* ---- refusals ---------------------------------------------------------------------- */

static krb5_error_code
refuse_usage(const char *op, const struct krb_key *k, krb5_keyusage usage, char *why,
             size_t why_len)
{
    char usages[64];

    router_krb_usage_names(usages, sizeof(usages));
    if (k->combine != NULL)
        router_set_why(why, why_len, "%s with the protected key " KEY_FMT " refused: usage %d is "
                       "not served (a combined key serves usages 3, 54, 55 and 56 only; fail "
                       "closed)", op, KEY_ARGS(k), (int)usage);
    else
        router_set_why(why, why_len, "%s with the protected key " KEY_FMT " refused: usage %d is "
                       "not served (the engine holds derived keys for usages %s only; fail "
                       "closed)", op, KEY_ARGS(k), (int)usage, usages);
    return KRB5_CRYPTO_INTERNAL;
}

static krb5_error_code
refuse_state(const char *op, const struct krb_key *k, krb5_keyusage usage, char *why,
             size_t why_len)
{
    router_set_why(why, why_len, "%s with the protected key " KEY_FMT ", usage %d, refused: a "
            "cipher "
            "state is not supported (krb5kdc passes none with these keys)", op, KEY_ARGS(k),
            (int)usage);
    return KRB5_CRYPTO_INTERNAL;
}

/* ---- one engine call --------------------------------------------------------------- */

/* Starts a foreground call: 0 and *client (under the call lock), or KRB5_CRYPTO_INTERNAL
 * while the engine is known to be unreachable. */
static krb5_error_code
call_begin(engine_conn *conn, mpc_client **client, char *why, size_t why_len)
{
    *client = NULL;
    if (engine_conn_down(conn, why, why_len))
        return KRB5_CRYPTO_INTERNAL;
    *client = engine_conn_lock(conn);
    return 0;
}

/* Ends the call begun by call_begin with the engine's status rc. */
static krb5_error_code
call_end(engine_conn *conn, mpc_client *client, int rc, const char *doing,
         const struct krb_key *k, int usage, char *why, size_t why_len)
{
    char usage_text[32] = "";

    if (usage != NO_USAGE)
        snprintf(usage_text, sizeof(usage_text), ", usage %d", usage);
    if (rc != MPC_OK && rc != MPC_EBADTAG)
        router_set_why(why, why_len, "engine %s %s under " KEY_FMT "%s: %s",
                engine_status_text(rc), doing, KEY_ARGS(k), usage_text,
                mpc_client_last_error(client));
    engine_conn_unlock(conn, ROUTER_OP_KRB, rc);
    /* A wrong HMAC is an answer from a working engine. */
    engine_conn_note(conn, rc == MPC_EBADTAG ? MPC_OK : rc, why);
    if (rc == MPC_OK)
        return 0;
    if (rc == MPC_EBADTAG) {
        router_set_why(why, why_len, "integrity check failed under " KEY_FMT "%s (wrong key or "
                "password, forged or damaged data)", KEY_ARGS(k), usage_text);
        return KRB5KRB_AP_ERR_BAD_INTEGRITY;
    }
    return KRB5_CRYPTO_INTERNAL;
}

/* The enctype's HMAC under Kc_usage of data into mac (router_krb_mac_len bytes). */
static krb5_error_code
engine_checksum(engine_conn *conn, const struct krb_key *k, krb5_keyusage usage,
                const uint8_t *data, size_t len, uint8_t mac[ROUTER_KRB_MAX_MAC_LEN], char *why,
                size_t why_len)
{
    mpc_client *client;
    krb5_error_code ret;
    int rc;

    if (len > ROUTER_KRB_MAX_DATA) {
        router_set_why(why, why_len, "checksum over %zu bytes under " KEY_FMT ": more than the "
                "engine takes in one call (%d)", len, KEY_ARGS(k), ROUTER_KRB_MAX_DATA);
        return KRB5_BAD_MSIZE;
    }
    ret = call_begin(conn, &client, why, why_len);
    if (ret)
        return ret;
    if (k->combine != NULL)
        rc = mpc_client_krb_cf2_checksum(client, k->name, k->kvno, k->algorithm, k->combine,
                                         (uint32_t)usage, len != 0 ? data : NULL, len, mac);
    else
        rc = mpc_client_krb_checksum(client, k->name, k->kvno, k->algorithm, (uint32_t)usage,
                                     len != 0 ? data : NULL, len, mac);
    return call_end(conn, client, rc, "checksumming", k, (int)usage, why, why_len);
}

/* ---- encryption -------------------------------------------------------------------- */

krb5_error_code
router_krb_encrypt(const router_job *job, krb5_keyusage usage, const krb5_data *cipher_state,
                   const krb5_data *input, krb5_enc_data *output)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    uint8_t confounder[ROUTER_KRB_CONFOUNDER_LEN], *out = NULL, *plain_copy = NULL;
    const uint8_t *plain;
    krb5_data confounder_data;
    size_t total = 0;
    mpc_client *client;
    krb5_error_code ret;
    int rc;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("encrypt", &k, usage, why, why_len);
    if (cipher_state != NULL)
        return refuse_state("encrypt", &k, usage, why, why_len);
    if (input == NULL || output == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "encrypt: no input or output");
        return EINVAL;
    }
    /* As libk5crypto, before it checks the length. */
    output->magic = KV5M_ENC_DATA;
    output->kvno = 0;
    output->enctype = k.enctype;
    if (router_krb_encrypt_length(k.enctype, input->length, &total) != 0) {
        router_set_why(why, why_len, "encrypt: a plaintext of %u bytes under " KEY_FMT " is longer "
                "than the engine encrypts in one call (%d bytes)", input->length, KEY_ARGS(&k),
                ROUTER_KRB_MAX_DATA - ROUTER_KRB_CONFOUNDER_LEN);
        return KRB5_BAD_MSIZE;
    }
    if (output->ciphertext.data == NULL || output->ciphertext.length < total) {
        router_set_why(why, why_len, "encrypt: output buffer of %u bytes, %zu needed "
                "(krb5_c_encrypt_length)", output->ciphertext.length, total);
        return KRB5_BAD_MSIZE;
    }
    out = (uint8_t *)output->ciphertext.data;
    plain = (const uint8_t *)input->data;
    if (router_overlaps(plain, input->length, out, total)) {
        plain_copy = copy_of(plain, input->length);
        if (plain_copy == NULL) {
            router_set_why(why, why_len, "out of memory");
            return ENOMEM;
        }
        plain = plain_copy;
    }
    confounder_data.magic = KV5M_DATA;
    confounder_data.length = sizeof(confounder);
    confounder_data.data = (char *)confounder;
    ret = krb5_c_random_make_octets(NULL, &confounder_data);
    if (ret) {
        router_set_why(why, why_len, "encrypt: no random confounder (krb5_c_random_make_octets: "
                "error %ld)", (long)ret);
        goto cleanup;
    }
    ret = call_begin(conn, &client, why, why_len);
    if (ret)
        goto cleanup;
    if (k.combine != NULL)
        rc = mpc_client_krb_cf2_encrypt(client, k.name, k.kvno, k.algorithm, k.combine,
                                        (uint32_t)usage, confounder,
                                        input->length != 0 ? plain : NULL, input->length, out);
    else
        rc = mpc_client_krb_encrypt(client, k.name, k.kvno, k.algorithm, (uint32_t)usage,
                                    confounder, input->length != 0 ? plain : NULL,
                                    input->length, out);
    ret = call_end(conn, client, rc, "encrypting", &k, (int)usage, why, why_len);
    if (ret == 0)
        output->ciphertext.length = (unsigned int)total;

cleanup:
    OPENSSL_cleanse(confounder, sizeof(confounder));
    if (ret != 0)
        OPENSSL_cleanse(out, total);
    router_wipe_free(plain_copy, input->length);
    return ret;
}

krb5_error_code
router_krb_decrypt(const router_job *job, krb5_keyusage usage, const krb5_data *cipher_state,
                   const krb5_enc_data *input, krb5_data *output)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    const uint8_t *in;
    uint8_t *in_copy = NULL, *out;
    size_t in_len, plain_len = 0;
    mpc_client *client;
    krb5_error_code ret;
    int rc;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("decrypt", &k, usage, why, why_len);
    if (cipher_state != NULL)
        return refuse_state("decrypt", &k, usage, why, why_len);
    if (input == NULL || output == NULL) {
        router_set_why(why, why_len, "decrypt: no input or output");
        return EINVAL;
    }
    /* As libk5crypto: a ciphertext labelled with another enctype is refused. */
    if (input->enctype != ENCTYPE_UNKNOWN && input->enctype != k.enctype) {
        router_set_why(why, why_len, "decrypt: ciphertext of enctype %d under " KEY_FMT,
                (int)input->enctype, KEY_ARGS(&k));
        return KRB5_BAD_ENCTYPE;
    }
    in_len = input->ciphertext.length;
    if (router_krb_plain_length(k.enctype, in_len, &plain_len) != 0) {
        router_set_why(why, why_len, "decrypt: a ciphertext of %zu bytes under " KEY_FMT " is %s "
                "(%zu bytes)", in_len, KEY_ARGS(&k),
                in_len < ROUTER_KRB_CONFOUNDER_LEN + router_krb_mac_len(k.enctype)
                ? "shorter than confounder and HMAC"
                : "longer than the engine decrypts in one call",
                in_len < ROUTER_KRB_CONFOUNDER_LEN + router_krb_mac_len(k.enctype)
                ? ROUTER_KRB_CONFOUNDER_LEN + router_krb_mac_len(k.enctype)
                : (size_t)ROUTER_KRB_MAX_DATA);
        return KRB5_BAD_MSIZE;
    }
    if (input->ciphertext.data == NULL) {
        router_set_why(why, why_len, "decrypt: no ciphertext");
        return EINVAL;
    }
    if (output->length < plain_len || (plain_len != 0 && output->data == NULL)) {
        router_set_why(why, why_len, "decrypt: output buffer of %u bytes, %zu needed",
                output->length, plain_len);
        return KRB5_BAD_MSIZE;
    }
    in = (const uint8_t *)input->ciphertext.data;
    out = (uint8_t *)output->data;
    if (router_overlaps(in, in_len, out, plain_len)) {
        in_copy = copy_of(in, in_len);
        if (in_copy == NULL) {
            router_set_why(why, why_len, "out of memory");
            return ENOMEM;
        }
        in = in_copy;
    }
    ret = call_begin(conn, &client, why, why_len);
    if (ret)
        goto cleanup;
    if (k.combine != NULL)
        rc = mpc_client_krb_cf2_decrypt(client, k.name, k.kvno, k.algorithm, k.combine,
                                        (uint32_t)usage, in, in_len, plain_len != 0 ? out : NULL);
    else
        rc = mpc_client_krb_decrypt(client, k.name, k.kvno, k.algorithm, (uint32_t)usage, in,
                                    in_len, plain_len != 0 ? out : NULL);
    ret = call_end(conn, client, rc, "decrypting", &k, (int)usage, why, why_len);
    if (ret == 0)
        output->length = (unsigned int)plain_len;

cleanup:
    /* As libk5crypto: no plaintext is left behind by a failed decryption. */
    if (ret != 0 && out != NULL)
        OPENSSL_cleanse(out, plain_len);
    router_wipe_free(in_copy, in_len);
    return ret;
}

/* ---- checksums --------------------------------------------------------------------- */

/* The checksum type of a new checksum: the enctype's own (0 names it); any other is a
 * choice of the caller's that the engine cannot serve. */
static krb5_error_code
new_checksum_type(const char *op, const struct krb_key *k, krb5_cksumtype requested,
                  krb5_keyusage usage, krb5_cksumtype *type, char *why, size_t why_len)
{
    if (router_krb_resolve_cksumtype(k->enctype, requested, type) == 0)
        return 0;
    router_set_why(why, why_len, "%s with the protected key " KEY_FMT ", usage %d, refused: "
            "checksum "
            "type %d (only %d, the enctype's own, is served)", op, KEY_ARGS(k), (int)usage,
            (int)requested, (int)router_krb_cksumtype(k->enctype));
    return KRB5_CRYPTO_INTERNAL;
}

/* The checksum type of a checksum to verify (0, "the key's own", only where zero_is_own):
 * one that does not go with the key is the data's fault, answered as libk5crypto answers
 * it. */
static krb5_error_code
verified_checksum_type(const char *op, const struct krb_key *k, krb5_cksumtype given,
                       int zero_is_own, char *why, size_t why_len)
{
    krb5_cksumtype type;

    if ((given != 0 || zero_is_own) &&
        router_krb_resolve_cksumtype(k->enctype, given, &type) == 0)
        return 0;
    router_set_why(why, why_len, "%s: checksum type %d under " KEY_FMT, op, (int)given,
                   KEY_ARGS(k));
    return KRB5_BAD_ENCTYPE;
}

/* Computes the checksum of data and compares it with expected in constant time. */
static krb5_error_code
checksum_compare(engine_conn *conn, const struct krb_key *k, krb5_keyusage usage,
                 const uint8_t *data, size_t len, const uint8_t *expected,
                 krb5_boolean *valid, char *why, size_t why_len)
{
    uint8_t mac[ROUTER_KRB_MAX_MAC_LEN];
    krb5_error_code ret;

    ret = engine_checksum(conn, k, usage, data, len, mac, why, why_len);
    if (ret == 0)
        *valid = CRYPTO_memcmp(mac, expected, router_krb_mac_len(k->enctype)) == 0 ? TRUE : FALSE;
    OPENSSL_cleanse(mac, sizeof(mac));
    return ret;
}

krb5_error_code
router_krb_make_checksum(const router_job *job, krb5_cksumtype cksumtype, krb5_keyusage usage,
                         const krb5_data *input, krb5_checksum *cksum)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    krb5_cksumtype type = 0;
    uint8_t *contents;
    krb5_error_code ret;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("make_checksum", &k, usage, why, why_len);
    ret = new_checksum_type("make_checksum", &k, cksumtype, usage, &type, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || cksum == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "make_checksum: no input or output");
        return EINVAL;
    }
    contents = malloc(router_krb_mac_len(k.enctype));
    if (contents == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    ret = engine_checksum(conn, &k, usage, (const uint8_t *)input->data, input->length,
                          contents, why, why_len);
    if (ret) {
        free(contents);
        return ret;
    }
    cksum->magic = KV5M_CHECKSUM;
    cksum->checksum_type = type;
    cksum->length = (unsigned int)router_krb_mac_len(k.enctype);
    cksum->contents = contents;
    return 0;
}

krb5_error_code
router_krb_verify_checksum(const router_job *job, krb5_keyusage usage, const krb5_data *data,
                           const krb5_checksum *cksum,
                           krb5_boolean *valid)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    krb5_error_code ret;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("verify_checksum", &k, usage, why, why_len);
    if (data == NULL || cksum == NULL || valid == NULL ||
        (data->length != 0 && data->data == NULL)) {
        router_set_why(why, why_len, "verify_checksum: no data, checksum or result");
        return EINVAL;
    }
    /* A checksum's own type 0 is no type (libk5crypto: KRB5_BAD_ENCTYPE); only the _iov
     * call reads a 0 argument as "the key's own". */
    ret = verified_checksum_type("verify_checksum", &k, cksum->checksum_type, 0, why,
                                 why_len);
    if (ret)
        return ret;
    if (cksum->length != router_krb_mac_len(k.enctype) || cksum->contents == NULL) {
        router_set_why(why, why_len, "verify_checksum: checksum of %u bytes, checksum type %d has "
                "%zu", cksum->length, (int)router_krb_cksumtype(k.enctype),
                router_krb_mac_len(k.enctype));
        return KRB5_BAD_MSIZE;
    }
    return checksum_compare(conn, &k, usage, (const uint8_t *)data->data, data->length,
                            cksum->contents, valid, why, why_len);
}

/* The signed buffers of an iov list, gathered into *out (malloc'd, *len bytes). */
static krb5_error_code
gather(const char *op, const struct krb_key *k, const krb5_crypto_iov *data, size_t num_data,
       uint8_t **out, size_t *len, char *why, size_t why_len)
{
    size_t n = router_krb_signed_length(data, num_data);

    *out = NULL;
    *len = 0;
    /* Checked before the copy, so that a huge input costs no allocation. */
    if (n > ROUTER_KRB_MAX_DATA) {
        router_set_why(why, why_len, "%s over %zu bytes under " KEY_FMT ": more than the engine "
                "takes in one call (%d)", op, n, KEY_ARGS(k), ROUTER_KRB_MAX_DATA);
        return KRB5_BAD_MSIZE;
    }
    *out = malloc(n != 0 ? n : 1);
    if (*out == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    router_krb_gather_signed(data, num_data, *out);
    *len = n;
    return 0;
}

krb5_error_code
router_krb_make_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                             krb5_keyusage usage,
                             krb5_crypto_iov *data, size_t num_data)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    krb5_crypto_iov *checksum;
    krb5_cksumtype type = 0;
    uint8_t *msg = NULL, mac[ROUTER_KRB_MAX_MAC_LEN];
    size_t len = 0;
    krb5_error_code ret;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("make_checksum_iov", &k, usage, why, why_len);
    ret = new_checksum_type("make_checksum_iov", &k, cksumtype, usage, &type, why, why_len);
    if (ret)
        return ret;
    checksum = data != NULL ? router_krb_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length < router_krb_mac_len(k.enctype) ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "make_checksum_iov: no CHECKSUM buffer of at least %zu bytes",
                router_krb_mac_len(k.enctype));
        return KRB5_BAD_MSIZE;
    }
    ret = gather("make_checksum_iov", &k, data, num_data, &msg, &len, why, why_len);
    if (ret)
        return ret;
    ret = engine_checksum(conn, &k, usage, msg, len, mac, why, why_len);
    if (ret == 0) {
        memcpy(checksum->data.data, mac, router_krb_mac_len(k.enctype));
        checksum->data.length = (unsigned int)router_krb_mac_len(k.enctype);
    }
    OPENSSL_cleanse(mac, sizeof(mac));
    router_wipe_free(msg, len);
    return ret;
}

krb5_error_code
router_krb_verify_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                               krb5_keyusage usage,
                               const krb5_crypto_iov *data,
                               size_t num_data,
                               krb5_boolean *valid)
{
    engine_conn *conn = job->conn;
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;
    const krb5_crypto_iov *checksum;
    uint8_t *msg = NULL;
    size_t len = 0;
    krb5_error_code ret;

    key_of(job->key, &k);
    if (!usage_served(&k, usage))
        return refuse_usage("verify_checksum_iov", &k, usage, why, why_len);
    ret = verified_checksum_type("verify_checksum_iov", &k, cksumtype, 1, why, why_len);
    if (ret)
        return ret;
    if (valid == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no result");
        return EINVAL;
    }
    checksum = data != NULL ? router_krb_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length != router_krb_mac_len(k.enctype) ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no CHECKSUM buffer of %zu bytes",
                router_krb_mac_len(k.enctype));
        return KRB5_BAD_MSIZE;
    }
    ret = gather("verify_checksum_iov", &k, data, num_data, &msg, &len, why, why_len);
    if (ret)
        return ret;
    ret = checksum_compare(conn, &k, usage, msg, len, (const uint8_t *)checksum->data.data,
                           valid, why, why_len);
    router_wipe_free(msg, len);
    return ret;
}

/* ---- PRF, PRF+ and cf2 ------------------------------------------------------------- */

krb5_error_code
router_krb_refuse(const router_job *job, enum router_refused what, krb5_keyusage usage)
{
    char *why = job->why;
    size_t why_len = job->why_len;
    struct krb_key k;

    key_of(job->key, &k);
    switch (what) {
    case ROUTER_REFUSED_ENCRYPT_IOV:
        router_set_why(why, why_len, "encrypt_iov with the protected key " KEY_FMT ", usage %d, "
                       "refused: only krb5_c_encrypt is served (krb5kdc never encrypts with "
                       "iovs; GSSAPI does)", KEY_ARGS(&k), (int)usage);
        break;
    case ROUTER_REFUSED_DECRYPT_IOV:
        router_set_why(why, why_len, "decrypt_iov with the protected key " KEY_FMT ", usage %d, "
                       "refused: only krb5_c_decrypt is served (krb5kdc never decrypts with "
                       "iovs; GSSAPI does)", KEY_ARGS(&k), (int)usage);
        break;
    case ROUTER_REFUSED_PRF:
    case ROUTER_REFUSED_PRFPLUS:
        router_set_why(why, why_len, "%s with the protected key " KEY_FMT " refused: a "
                       "protected key's PRF output is as good as the key for FAST and is never "
                       "opened (krb5kdc needs it only inside krb5_c_fx_cf2_simple, which the "
                       "engine serves)", what == ROUTER_REFUSED_PRF ? "prf" : "prfplus",
                       KEY_ARGS(&k));
        break;
    case ROUTER_REFUSED_DERIVE_PRFPLUS:
        router_set_why(why, why_len, "derive_prfplus with the protected key " KEY_FMT " refused: "
                       "a key derived from a protected key would leave the engine in clear "
                       "(only the SPAKE preauth mechanism asks for one, and it must stay "
                       "disabled)", KEY_ARGS(&k));
        break;
    case ROUTER_REFUSED_INIT_STATE:
    default:
        router_set_why(why, why_len, "init_state with the protected key " KEY_FMT ", usage %d, "
                       "refused: no cipher state is served (krb5kdc passes none with these "
                       "keys)", KEY_ARGS(&k), (int)usage);
        break;
    }
    return KRB5_CRYPTO_INTERNAL;
}

/* No cipher state is served: krb5kdc passes none with these keys. */
krb5_error_code
router_krb_init_state(const router_job *job, krb5_keyusage usage, krb5_data *new_state)
{
    (void)new_state;
    return router_krb_refuse(job, ROUTER_REFUSED_INIT_STATE, usage);
}

/* KRB-FX-CF2 (RFC 6113 5.1) with one protected key: random-to-key(PRF+(k1, pepper1) xor
 * PRF+(k2, pepper2)), both of the key length of k1's enctype, which the result takes. The
 * clear key's PRF+ is computed here (libk5crypto); *combined names the protected key with
 * that mask, its pepper and the result's enctype, for the router to wrap in a combined
 * handle. random-to-key is the identity for the four enctypes served. */
krb5_error_code
router_krb_cf2(const router_key *k1, const char *pepper1, const router_key *k2,
               const char *pepper2, mpc_kdb_key_id *combined, char *why, size_t why_len)
{
    const router_key *stored, *clear;
    const char *stored_pepper, *clear_pepper;
    char served[256];
    krb5_enctype enctype;
    size_t keybytes = 0, keylength = 0, pepper_len;
    krb5_data in, out;
    const struct router_originals *libk5crypto = router_originals();
    krb5_error_code ret;

    memset(combined, 0, sizeof(*combined));
    if (pepper1 == NULL || pepper2 == NULL || (k1->id == NULL && k1->clear == NULL) ||
        (k2->id == NULL && k2->clear == NULL)) {
        router_set_why(why, why_len, "fx_cf2_simple: no key or pepper");
        return EINVAL;
    }
    if (k1->id != NULL && k2->id != NULL) {
        router_set_why(why, why_len, "fx_cf2_simple of two protected keys refused: krb5kdc "
                "combines "
                "a protected key only with a key it holds (the armor or strengthen key)");
        return KRB5_CRYPTO_INTERNAL;
    }
    stored = k1->id != NULL ? k1 : k2;
    clear = k1->id != NULL ? k2 : k1;
    stored_pepper = k1->id != NULL ? pepper1 : pepper2;
    clear_pepper = k1->id != NULL ? pepper2 : pepper1;
    if (stored->id->combine.enctype != 0) {
        router_set_why(why, why_len, "fx_cf2_simple of a combined key refused: krb5kdc never "
                "combines one again");
        return KRB5_CRYPTO_INTERNAL;
    }
    enctype = k1->id != NULL ? k1->id->enctype : k1->clear->enctype;
    if (router_krb_algorithm(enctype) == 0 || libk5crypto->krb5_c_keylengths == NULL ||
        libk5crypto->krb5_c_keylengths(NULL, enctype, &keybytes, &keylength) != 0 ||
        keybytes != keylength || keybytes > MPC_KDB_MASK_MAX) {
        router_krb_served_names(served, sizeof(served));
        router_set_why(why, why_len, "fx_cf2_simple: a combined key of enctype %d is not served "
                "(only %s)", (int)enctype, served);
        return KRB5_CRYPTO_INTERNAL;
    }
    pepper_len = strlen(stored_pepper);
    if (pepper_len == 0 || pepper_len > MPC_KDB_PEPPER_MAX) {
        router_set_why(why, why_len, "fx_cf2_simple: pepper \"%s\" of the protected key is not "
                "served",
                stored_pepper);
        return KRB5_CRYPTO_INTERNAL;
    }
    *combined = *stored->id;
    combined->combine.enctype = enctype;
    memcpy(combined->combine.pepper, stored_pepper, pepper_len + 1);
    combined->combine.mask_len = (uint32_t)keybytes;
    in.magic = out.magic = KV5M_DATA;
    in.length = (unsigned int)strlen(clear_pepper);
    in.data = (char *)clear_pepper;
    out.length = (unsigned int)keybytes;
    out.data = (char *)combined->combine.mask;
    ret = libk5crypto->krb5_c_prfplus != NULL
              ? libk5crypto->krb5_c_prfplus(NULL, clear->clear, &in, &out)
              : KRB5_CRYPTO_INTERNAL;
    if (ret) {
        router_set_why(why, why_len, "fx_cf2_simple: PRF+ of the clear key (enctype %d) failed: "
                "error %ld", (int)clear->clear->enctype, (long)ret);
        OPENSSL_cleanse(combined, sizeof(*combined));
        return ret;
    }
    return 0;
}
