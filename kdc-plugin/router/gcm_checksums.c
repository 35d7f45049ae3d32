/* kdc-plugin/router/gcm_checksums.c - checksums under the protected krbtgt key (gcm_jobs.h):
 * GMACs over the SHA-256 of what krb5kdc signs (docs/ticket-format.md), a PAC's two checksums
 * chained in one round trip (checksum_chain.h).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "gcm_jobs.h"
#include "gcm_seal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "checksum_chain.h"
#include "protected_key.h"
#include "router_log.h"
#include "router_util.h"

/* ---- checksums ---------------------------------------------------------------------- */

static int
iov_signed(const krb5_crypto_iov *iov)
{
    return iov->flags == KRB5_CRYPTO_TYPE_HEADER || iov->flags == KRB5_CRYPTO_TYPE_DATA ||
           iov->flags == KRB5_CRYPTO_TYPE_PADDING || iov->flags == KRB5_CRYPTO_TYPE_SIGN_ONLY;
}

/* Whether the checksummed data go into the AAD as they are: a PAC's KDC checksum over its
 * server checksum (usage 17, one checksum's bytes), which the PAC carries in clear anyway and
 * which the chained tag needs as it is (docs/ticket-format.md). */
static int
checksum_data_raw(krb5_keyusage usage, size_t data_len)
{
    return usage == KRB5_KEYUSAGE_APP_DATA_CKSUM && data_len == MPC_KDC_CHECKSUM_LEN;
}

/* The checksum AAD, 0x02 || u32be usage || SHA-256(data), data being the buffers
 * libk5crypto checksums (HEADER, DATA, PADDING, SIGN_ONLY, in order: its SIGN_IOV) or `one`;
 * 0x02 || u32be usage || data for checksum_data_raw. The servers compute GHASH over the AAD
 * as they get it, and the data can be secret: the ticket signature krb5kdc makes under the
 * krbtgt key covers the EncTicketPart, which holds the ticket's session key. They get its
 * digest only. *aad_out is malloc'd; the caller frees it. */
static krb5_error_code
checksum_aad(krb5_keyusage usage, const krb5_crypto_iov *iov, size_t n, const krb5_data *one,
             uint8_t **aad_out, size_t *aad_len_out, char *why, size_t why_len)
{
    size_t i, data_len = 0, at, len;
    EVP_MD_CTX *digest = NULL;
    unsigned int digest_len = 0;
    uint8_t *aad;
    int raw, ok = 1;

    *aad_out = NULL;
    *aad_len_out = 0;
    for (i = 0; i < n; i++) {
        if (iov_signed(&iov[i]))
            data_len += iov[i].data.length;
    }
    if (one != NULL)
        data_len += one->length;
    raw = checksum_data_raw(usage, data_len);
    len = AAD_HEADER_LEN + (raw ? data_len : CHECKSUM_DIGEST_LEN);
    aad = malloc(len);
    if (!raw)
        digest = EVP_MD_CTX_new();
    if (aad == NULL || (!raw && digest == NULL)) {
        free(aad);
        EVP_MD_CTX_free(digest);
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    gcm_aad_header(MPC_KDC_AAD_CHECKSUM, usage, aad);
    if (raw) {
        at = AAD_HEADER_LEN;
        for (i = 0; i < n; i++) {
            if (iov_signed(&iov[i]) && iov[i].data.length != 0) {
                memcpy(aad + at, iov[i].data.data, iov[i].data.length);
                at += iov[i].data.length;
            }
        }
        if (one != NULL && one->length != 0)
            memcpy(aad + at, one->data, one->length);
        *aad_out = aad;
        *aad_len_out = len;
        return 0;
    }
    ok = EVP_DigestInit_ex(digest, EVP_sha256(), NULL) == 1;
    for (i = 0; ok && i < n; i++) {
        if (iov_signed(&iov[i]) && iov[i].data.length != 0)
            ok = EVP_DigestUpdate(digest, iov[i].data.data, iov[i].data.length) == 1;
    }
    if (ok && one != NULL && one->length != 0)
        ok = EVP_DigestUpdate(digest, one->data, one->length) == 1;
    if (ok)
        ok = EVP_DigestFinal_ex(digest, aad + AAD_HEADER_LEN, &digest_len) == 1 &&
             digest_len == CHECKSUM_DIGEST_LEN;
    EVP_MD_CTX_free(digest);
    if (!ok) {
        free(aad);
        router_set_why(why, why_len, "SHA-256 of the checksummed data failed");
        return KRB5_CRYPTO_INTERNAL;
    }
    *aad_out = aad;
    *aad_len_out = len;
    return 0;
}

/* cksumtype 0 means the enctype's mandatory type, ours; any other type with our key is
 * what libk5crypto answers for a keyed checksum of another enctype. */
static krb5_error_code
check_cksumtype(const char *op, krb5_cksumtype cksumtype, char *why, size_t why_len)
{
    if (cksumtype == 0 || cksumtype == MPC_KDC_CKSUMTYPE_GMAC)
        return 0;
    router_set_why(why, why_len, "%s: checksum type %d with a key of enctype "
                   MPC_KDC_ENCTYPE_NAME " (only " MPC_KDC_CKSUMTYPE_NAME ", %d)", op,
                   (int)cksumtype, MPC_KDC_CKSUMTYPE_GMAC);
    return KRB5_BAD_ENCTYPE;
}

/* A PAC's server checksum and, in the same round trip, its KDC checksum (over the first's
 * bytes, usage 17), kept in chain. Returns 0 with out written, or nonzero when it could not
 * be had (the caller then makes the one checksum as usual; the nonces taken are spent). */
static int
seal_chained(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
             const mpc_kdb_key_id *key, const uint8_t *aad, size_t aad_len,
             uint8_t out[MPC_KDC_CHECKSUM_LEN], char *why, size_t why_len)
{
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t kdc[MPC_KDC_CHECKSUM_LEN], prefix[AAD_HEADER_LEN];
    mpc_client *client;
    int pooled = 0, pooled_next = 0, rc;

    mpc_kdc_engine_key_name(key, name);
    if (nonce_supply_take(nonces, name, key->kvno, NONCE_CHECKSUM, 1, out, NULL, &pooled, why,
                          why_len) != 0 ||
        nonce_supply_take(nonces, name, key->kvno, NONCE_CHECKSUM, 1, kdc, NULL, &pooled_next,
                          why, why_len) != 0 ||
        engine_conn_down(conn, why, why_len))
        return -1;
    gcm_aad_header(MPC_KDC_AAD_CHECKSUM, KRB5_KEYUSAGE_APP_DATA_CKSUM, prefix);
    client = engine_conn_lock(conn);
    rc = mpc_client_gcm_tag_chained(client, name, key->kvno, out, aad, aad_len, kdc, prefix,
                                    sizeof(prefix), out + MPC_KDC_NONCE_LEN,
                                    kdc + MPC_KDC_NONCE_LEN);
    if (rc != MPC_OK)
        router_set_why(why, why_len, "engine %s tagging a PAC's two checksums under %s kvno %u: %s",
                       engine_status_text(rc), name, key->kvno, mpc_client_last_error(client));
    engine_conn_unlock(conn, ROUTER_OP_GCM_TAG_CHAINED, rc);
    /* A refusal is an engine that cannot chain now (two servers serving), not a failure. */
    engine_conn_note(conn, rc == MPC_EREFUSED ? MPC_OK : rc, why);
    if (rc == MPC_OK) {
        checksum_chain_hold(chain, key, out, kdc);
        OPENSSL_cleanse(kdc, sizeof(kdc));
        return 0;
    }
    if (rc != MPC_ENONCE) {
        const int pause_ms = rc == MPC_EREFUSED ? CHAIN_REFUSED_PAUSE_MS : CHAIN_FAILED_PAUSE_MS;

        router_log(LOG_INFO, "%s; PAC checksums are made one at a time for %d s", why,
                   pause_ms / 1000);
        chain->paused_until_ms = router_now_ms() + (uint64_t)pause_ms;
    }
    if (rc == MPC_ENONCE && (pooled || pooled_next))
        nonce_supply_drop(nonces, name, key->kvno, NONCE_CHECKSUM);
    return -1;
}

/* Whether the CHECKSUM buffer lies inside a DATA buffer: a checksum over data that holds its
 * own (zeroed) slot, which is how krb5_pac_sign makes a PAC's server checksum. */
static int
checksum_inside_data(const krb5_crypto_iov *iov, size_t n)
{
    const krb5_crypto_iov *checksum = NULL;
    uintptr_t sum_at, data_at;
    size_t i;

    for (i = 0; i < n; i++) {
        if (iov[i].flags == KRB5_CRYPTO_TYPE_CHECKSUM)
            checksum = &iov[i];
    }
    if (checksum == NULL)
        return 0;
    sum_at = (uintptr_t)checksum->data.data;
    for (i = 0; i < n; i++) {
        data_at = (uintptr_t)iov[i].data.data;
        if (iov[i].flags == KRB5_CRYPTO_TYPE_DATA && iov[i].data.data != NULL &&
            checksum->data.data != NULL && sum_at >= data_at &&
            sum_at - data_at + checksum->data.length <= iov[i].data.length)
            return 1;
    }
    return 0;
}

/* A checksum, with the chain: the PAC KDC checksum it holds when krb5kdc asks for exactly
 * that one, else, for a PAC's server checksum (pac_server), the pair made in one round trip,
 * else one made now. */
static krb5_error_code
checksum_make(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
              const mpc_kdb_key_id *key, krb5_keyusage usage, const krb5_crypto_iov *iov,
              size_t n, const krb5_data *one, int pac_server, uint8_t out[MPC_KDC_CHECKSUM_LEN],
              char *why, size_t why_len)
{
    uint8_t *aad = NULL;
    size_t aad_len = 0;
    krb5_error_code ret;

    ret = checksum_aad(usage, iov, n, one, &aad, &aad_len, why, why_len);
    if (ret)
        return ret;
    if (chain != NULL && checksum_chain_serve(chain, key, usage, aad + AAD_HEADER_LEN,
                                              aad_len - AAD_HEADER_LEN, out)) {
        free(aad);
        return 0;
    }
    if (chain != NULL && pac_server && usage == KRB5_KEYUSAGE_APP_DATA_CKSUM &&
        checksum_chain_can_hold(chain, router_now_ms()) &&
        seal_chained(conn, nonces, chain, key, aad, aad_len, out, why, why_len) == 0) {
        free(aad);
        return 0;
    }
    ret = gcm_seal(conn, nonces, NULL, key, NONCE_CHECKSUM, aad, aad_len, NULL, 0, out, NULL,
               out + MPC_KDC_NONCE_LEN, why, why_len);
    free(aad);
    return ret;
}

static krb5_error_code
checksum_verify(engine_conn *conn, const mpc_kdb_key_id *key, krb5_keyusage usage,
                const krb5_crypto_iov *iov, size_t n, const krb5_data *one,
                const uint8_t *cksum, krb5_boolean *valid, char *why, size_t why_len)
{
    uint8_t *aad = NULL;
    size_t aad_len = 0;
    krb5_error_code ret;

    ret = checksum_aad(usage, iov, n, one, &aad, &aad_len, why, why_len);
    if (ret)
        return ret;
    ret = gcm_open_checksum(conn, key, aad, aad_len, cksum, cksum + MPC_KDC_NONCE_LEN, why,
                        why_len);
    free(aad);
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY) {
        /* A wrong checksum is an answer, not an error (as libk5crypto). */
        *valid = FALSE;
        return 0;
    }
    if (ret == 0)
        *valid = TRUE;
    return ret;
}

krb5_error_code
router_gcm_make_checksum(const router_job *job, krb5_cksumtype cksumtype, krb5_keyusage usage,
                         const krb5_data *input, krb5_checksum *cksum)
{
    engine_conn *conn = job->conn;
    nonce_supply *nonces = job->nonces;
    checksum_chain *chain = job->chain;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
    uint8_t *contents;
    krb5_error_code ret;

    ret = check_cksumtype("make_checksum", cksumtype, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || cksum == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "make_checksum: no input or output");
        return EINVAL;
    }
    contents = malloc(MPC_KDC_CHECKSUM_LEN);
    if (contents == NULL) {
        router_set_why(why, why_len, "out of memory");
        return ENOMEM;
    }
    ret = checksum_make(conn, nonces, chain, key, usage, NULL, 0, input, 0, contents, why,
                        why_len);
    if (ret) {
        free(contents);
        return ret;
    }
    cksum->magic = KV5M_CHECKSUM;
    cksum->checksum_type = MPC_KDC_CKSUMTYPE_GMAC;
    cksum->length = MPC_KDC_CHECKSUM_LEN;
    cksum->contents = contents;
    return 0;
}

krb5_error_code
router_gcm_verify_checksum(const router_job *job, krb5_keyusage usage, const krb5_data *data,
                           const krb5_checksum *cksum,
                           krb5_boolean *valid)
{
    engine_conn *conn = job->conn;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
    krb5_error_code ret;

    if (data == NULL || cksum == NULL || valid == NULL ||
        (data->length != 0 && data->data == NULL)) {
        router_set_why(why, why_len, "verify_checksum: no data, checksum or result");
        return EINVAL;
    }
    ret = check_cksumtype("verify_checksum", cksum->checksum_type, why, why_len);
    if (ret)
        return ret;
    if (cksum->length != MPC_KDC_CHECKSUM_LEN || cksum->contents == NULL) {
        router_set_why(why, why_len, "verify_checksum: checksum of %u bytes, "
                       MPC_KDC_CKSUMTYPE_NAME " has %d", cksum->length, MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    return checksum_verify(conn, key, usage, NULL, 0, data, cksum->contents, valid, why,
                           why_len);
}

static krb5_crypto_iov *
find_checksum_iov(const krb5_crypto_iov *data, size_t num_data)
{
    size_t i;

    for (i = 0; i < num_data; i++) {
        if (data[i].flags == KRB5_CRYPTO_TYPE_CHECKSUM)
            return (krb5_crypto_iov *)&data[i];
    }
    return NULL;
}

krb5_error_code
router_gcm_make_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                             krb5_keyusage usage,
                             krb5_crypto_iov *data, size_t num_data)
{
    engine_conn *conn = job->conn;
    nonce_supply *nonces = job->nonces;
    checksum_chain *chain = job->chain;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
    uint8_t out[MPC_KDC_CHECKSUM_LEN];
    krb5_crypto_iov *checksum;
    krb5_error_code ret;

    ret = check_cksumtype("make_checksum_iov", cksumtype, why, why_len);
    if (ret)
        return ret;
    checksum = data != NULL ? find_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length < MPC_KDC_CHECKSUM_LEN ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "make_checksum_iov: no CHECKSUM buffer of at least %d "
                       "bytes", MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    ret = checksum_make(conn, nonces, chain, key, usage, data, num_data, NULL,
                        checksum_inside_data(data, num_data), out, why, why_len);
    if (ret)
        return ret;
    memcpy(checksum->data.data, out, MPC_KDC_CHECKSUM_LEN);
    checksum->data.length = MPC_KDC_CHECKSUM_LEN;
    return 0;
}

krb5_error_code
router_gcm_verify_checksum_iov(const router_job *job, krb5_cksumtype cksumtype,
                               krb5_keyusage usage,
                               const krb5_crypto_iov *data,
                               size_t num_data,
                               krb5_boolean *valid)
{
    engine_conn *conn = job->conn;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
    const krb5_crypto_iov *checksum;
    krb5_error_code ret;

    ret = check_cksumtype("verify_checksum_iov", cksumtype, why, why_len);
    if (ret)
        return ret;
    if (valid == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no result");
        return EINVAL;
    }
    checksum = data != NULL ? find_checksum_iov(data, num_data) : NULL;
    if (checksum == NULL || checksum->data.length != MPC_KDC_CHECKSUM_LEN ||
        checksum->data.data == NULL) {
        router_set_why(why, why_len, "verify_checksum_iov: no CHECKSUM buffer of %d bytes",
                       MPC_KDC_CHECKSUM_LEN);
        return KRB5_BAD_MSIZE;
    }
    return checksum_verify(conn, key, usage, data, num_data, NULL,
                           (const uint8_t *)checksum->data.data, valid, why, why_len);
}
