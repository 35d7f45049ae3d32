/* kdc-plugin/router/gcm_jobs.c - tickets and checksums under the protected krbtgt key
 * (gcm_jobs.h).
 *
 * Reads nothing: the engine connection and the nonce supply carry the configuration.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "gcm_jobs.h"

#include <errno.h>
#include <limits.h>
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

#define SEAL_ATTEMPTS 3

#define AAD_HEADER_LEN 5               /* the AAD's type byte and u32be usage */

/* The AAD's first bytes: its type (MPC_KDC_AAD_*) and the key usage, big-endian. */
static void
aad_header(uint8_t type, krb5_keyusage usage, uint8_t out[AAD_HEADER_LEN])
{
    out[0] = type;
    out[1] = (uint8_t)((uint32_t)usage >> 24);
    out[2] = (uint8_t)((uint32_t)usage >> 16);
    out[3] = (uint8_t)((uint32_t)usage >> 8);
    out[4] = (uint8_t)usage;
}

/* GHASH input blocks of one engine call (zero-padded AAD, zero-padded text, lengths). */
static size_t
hash_blocks(size_t aad_len, size_t text_len)
{
    return (aad_len + 15) / 16 + (text_len + 15) / 16 + 1;
}

/* KRB5_BAD_MSIZE for len bytes of data and aad_len of associated data that one engine call
 * cannot authenticate. */
static krb5_error_code
too_long(size_t len, size_t aad_len, char *why, size_t why_len)
{
    router_set_why(why, why_len, "%zu bytes of data and %zu of associated data are more than "
                   "the engine authenticates in one call (%u GHASH blocks)", len, aad_len,
                   (unsigned)MPC_GCM_MAX_HASH_BLOCKS);
    return KRB5_BAD_MSIZE;
}

int
router_gcm_serves(const mpc_kdb_key_id *key)
{
    return key != NULL && key->enctype == MPC_KDC_ENCTYPE_AES256_GCM;
}

/* ---- one seal, one open ------------------------------------------------------------- */

static const uint8_t zero_text[MPC_KDC_TICKET_KEY_LEN];

/* AES-256-CTR from counter block 0 under a ticket key (in and out may be the same buffer). */
static krb5_error_code
ticket_key_ctr(const uint8_t ticket_key[MPC_KDC_TICKET_KEY_LEN], const uint8_t *in, size_t len,
               uint8_t *out, char *why, size_t why_len)
{
    static const uint8_t counter0[16];
    EVP_CIPHER_CTX *ctx;
    int n = 0, ok;

    if (len == 0)
        return 0;
    if (len > INT_MAX) {
        router_set_why(why, why_len, "%zu bytes are too long to encrypt", len);
        return KRB5_BAD_MSIZE;
    }
    ctx = EVP_CIPHER_CTX_new();
    ok = ctx != NULL &&
         EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), NULL, ticket_key, counter0) == 1 &&
         EVP_EncryptUpdate(ctx, out, &n, in, (int)len) == 1 && (size_t)n == len;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        router_set_why(why, why_len, "AES-256-CTR under the ticket key failed (OpenSSL)");
        return KRB5_CRYPTO_INTERNAL;
    }
    return 0;
}

/* How long PAC checksums are made one at a time after the engine did not chain them: refused
 * (two servers serving, which lasts), or failed otherwise. */
#define CHAIN_REFUSED_PAUSE_MS 600000
#define CHAIN_FAILED_PAUSE_MS 30000

/* The checksum AAD's digest of the checksummed data: SHA-256. */
#define CHECKSUM_DIGEST_LEN 32

/* The AAD of a PAC's KDC checksum over a server checksum: 0x02 || u32be 17 || N || T. */
#define CHAINED_AAD_LEN (AAD_HEADER_LEN + MPC_KDC_CHECKSUM_LEN)

static void
chained_aad(const uint8_t server_checksum[MPC_KDC_CHECKSUM_LEN], uint8_t out[CHAINED_AAD_LEN])
{
    aad_header(MPC_KDC_AAD_CHECKSUM, KRB5_KEYUSAGE_APP_DATA_CKSUM, out);
    memcpy(out + AAD_HEADER_LEN, server_checksum, MPC_KDC_CHECKSUM_LEN);
}

static krb5_error_code open_checksum(engine_conn *conn, const mpc_kdb_key_id *key,
                                     const uint8_t *aad, size_t aad_len,
                                     const uint8_t nonce[MPC_KDC_NONCE_LEN],
                                     const uint8_t tag[MPC_KDC_TAG_LEN], char *why,
                                     size_t why_len);

/* Checks the served KDC checksum in a round trip of its own (a reopen, or a full open where a
 * server no longer holds its nonce), and empties the chain either way. */
static krb5_error_code
check_served_apart(engine_conn *conn, checksum_chain *chain, char *why, size_t why_len)
{
    uint8_t aad[CHAINED_AAD_LEN];
    krb5_error_code ret;

    chained_aad(chain->server_checksum, aad);
    ret = open_checksum(conn, &chain->key, aad, sizeof(aad), chain->kdc_checksum,
                        chain->kdc_checksum + MPC_KDC_NONCE_LEN, why, why_len);
    checksum_chain_clear(chain);
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY) {
        router_set_why(why, why_len, "the PAC's KDC checksum made ahead from the servers' shares "
                       "failed its check (a server altered its share): the ticket is refused");
        return KRB5_CRYPTO_INTERNAL;
    }
    return ret;
}

/* Seals under a fresh nonce, writing N to out_nonce and T to out_tag:
 *   - NONCE_CHECKSUM: a GMAC over aad (len is 0, text and out_text unused);
 *   - NONCE_TICKET: text (len bytes; out_text may overlap it in any way) under the nonce's
 *     ticket key into out_text, tagged with AAD = aad (the 5-byte header) || C. C is built
 *     in the AAD buffer and copied out only once tagged, so a retry with a fresh nonce
 *     still has the plaintext.
 * On failure out_text holds zeros. */
static krb5_error_code
seal(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain, const mpc_kdb_key_id *key,
     enum nonce_kind kind, const uint8_t *aad, size_t aad_len, const uint8_t *text, size_t len,
     uint8_t out_nonce[MPC_KDC_NONCE_LEN], uint8_t *out_text, uint8_t out_tag[MPC_KDC_TAG_LEN],
     char *why, size_t why_len)
{
    const int ticket = kind == NONCE_TICKET;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t ticket_key[MPC_KDC_TICKET_KEY_LEN], *full_aad = NULL;
    uint8_t check_aad[CHAINED_AAD_LEN];
    const uint8_t *tag_aad = aad;
    size_t tag_aad_len = aad_len;
    mpc_client *client;
    krb5_error_code ret;
    int attempt, pooled = 0, rc, checking;

    mpc_kdc_engine_key_name(key, name);
    if (ticket)
        tag_aad_len = aad_len + len;
    if (hash_blocks(tag_aad_len, ticket ? sizeof(zero_text) : 0) > MPC_GCM_MAX_HASH_BLOCKS)
        return too_long(len, aad_len, why, why_len);
    if (ticket) {
        /* The tag covers the header and C: C is written there first, then copied out. */
        full_aad = malloc(tag_aad_len);
        if (full_aad == NULL) {
            router_set_why(why, why_len, "out of memory");
            ret = ENOMEM;
            goto cleanup;
        }
        memcpy(full_aad, aad, aad_len);
        tag_aad = full_aad;
    }
    /* A KDC checksum made ahead and handed out is checked before this seal's ticket leaves:
     * in this seal's own round trip when it is under the same key, else on its own. */
    if (ticket && chain != NULL && chain->state == CHAIN_SERVED &&
        !checksum_chain_awaits_check(chain, key)) {
        ret = check_served_apart(conn, chain, why, why_len);
        if (ret)
            goto cleanup;
    }
    checking = ticket && chain != NULL && checksum_chain_awaits_check(chain, key);
    if (checking)
        chained_aad(chain->server_checksum, check_aad);
    /* A pooled nonce, then fresh ones: a nonce prefetched just before the servers changed
     * which of them serve (one went down or came back) is unknown to those that serve next. */
    for (attempt = 0; attempt < SEAL_ATTEMPTS; attempt++) {
        ret = nonce_supply_take(nonces, name, key->kvno, kind, attempt == 0, out_nonce,
                                ticket_key, &pooled, why, why_len);
        if (ret)
            goto cleanup;
        if (ticket) {
            ret = ticket_key_ctr(ticket_key, text, len, full_aad + aad_len, why, why_len);
            OPENSSL_cleanse(ticket_key, sizeof(ticket_key));
            if (ret)
                goto cleanup;
        }
        if (engine_conn_down(conn, why, why_len))
            break;
        client = engine_conn_lock(conn);
        if (checking)
            rc = mpc_client_gcm_tag_checked(client, name, key->kvno, out_nonce, tag_aad,
                                            tag_aad_len, zero_text, sizeof(zero_text),
                                            chain->kdc_checksum, check_aad, sizeof(check_aad),
                                            chain->kdc_checksum + MPC_KDC_NONCE_LEN, out_tag);
        else
            rc = mpc_client_gcm_tag(client, name, key->kvno, out_nonce, tag_aad, tag_aad_len,
                                    ticket ? zero_text : NULL, ticket ? sizeof(zero_text) : 0,
                                    out_tag);
        if (rc != MPC_OK)
            router_set_why(why, why_len, "engine %s tagging under %s kvno %u%s: %s",
                           engine_status_text(rc), name, key->kvno,
                           checking ? " with the check of the PAC's KDC checksum" : "",
                           mpc_client_last_error(client));
        engine_conn_unlock(conn, ROUTER_OP_GCM_TAG, rc);
        engine_conn_note(conn, rc == MPC_EABORT ? MPC_OK : rc, why);
        if (rc == MPC_OK) {
            if (checking)
                checksum_chain_clear(chain);
            if (ticket && len != 0)
                memcpy(out_text, full_aad + aad_len, len);
            ret = 0;
            goto cleanup;
        }
        if (checking) {
            /* MPC_EABORT: the KDC checksum in this ticket is wrong (a server altered its
             * share). On that and any other failure but a forgotten nonce the ticket does not
             * leave, so neither does the checksum. A forgotten nonce (either one) has the
             * check made on its own before the next try. */
            if (rc != MPC_ENONCE) {
                checksum_chain_clear(chain);
                break;
            }
            checking = 0;
            ret = check_served_apart(conn, chain, why, why_len);
            if (ret)
                goto cleanup;
        }
        if (rc != MPC_ENONCE)
            break;
        /* The servers forgot the nonce (restart, expiry, eviction): so they forgot the
         * rest of that pool too. */
        if (pooled)
            nonce_supply_drop(nonces, name, key->kvno, kind);
        if (attempt + 1 < SEAL_ATTEMPTS)
            engine_conn_count_reseal(conn);
    }
    ret = KRB5_CRYPTO_INTERNAL;

cleanup:
    if (ret != 0 && out_text != NULL && len != 0)
        OPENSSL_cleanse(out_text, len);
    OPENSSL_cleanse(ticket_key, sizeof(ticket_key));
    free(full_aad);
    return ret;
}

/* The engine's check of tag over (aad, text) under nonce; on MPC_OK, out (len bytes; NULL
 * when len is 0; may be text itself but not otherwise overlap it) holds text xor the
 * nonce's keystream. Returns 0, KRB5KRB_AP_ERR_BAD_INTEGRITY for a wrong tag (why not
 * set), or KRB5_CRYPTO_INTERNAL with why set. */
static krb5_error_code
engine_open(engine_conn *conn, const mpc_kdb_key_id *key, const char *name,
            const uint8_t *aad, size_t aad_len, const uint8_t nonce[MPC_KDC_NONCE_LEN],
            const uint8_t *text, size_t len, const uint8_t tag[MPC_KDC_TAG_LEN], uint8_t *out,
            char *why, size_t why_len)
{
    mpc_client *client;
    int rc;

    if (engine_conn_down(conn, why, why_len))
        return KRB5_CRYPTO_INTERNAL;
    client = engine_conn_lock(conn);
    rc = mpc_client_gcm_open(client, name, key->kvno, nonce, aad, aad_len, text, len, tag, out);
    if (rc != MPC_OK && rc != MPC_EBADTAG)
        router_set_why(why, why_len, "engine %s checking under %s kvno %u: %s",
                       engine_status_text(rc), name, key->kvno, mpc_client_last_error(client));
    engine_conn_unlock(conn, ROUTER_OP_GCM_OPEN, rc);
    engine_conn_note(conn, rc == MPC_EBADTAG ? MPC_OK : rc, why);
    if (rc == MPC_OK)
        return 0;
    return rc == MPC_EBADTAG ? KRB5KRB_AP_ERR_BAD_INTEGRITY : KRB5_CRYPTO_INTERNAL;
}

static void
integrity_failed(const char *name, const mpc_kdb_key_id *key, char *why, size_t why_len)
{
    router_set_why(why, why_len, "integrity check failed under %s kvno %u (forged or damaged "
                   "data, or another key)", name, key->kvno);
}

/* Checks a GMAC over aad (a checksum). A wrong tag gives KRB5KRB_AP_ERR_BAD_INTEGRITY. */
static krb5_error_code
open_checksum(engine_conn *conn, const mpc_kdb_key_id *key, const uint8_t *aad, size_t aad_len,
              const uint8_t nonce[MPC_KDC_NONCE_LEN], const uint8_t tag[MPC_KDC_TAG_LEN],
              char *why, size_t why_len)
{
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    krb5_error_code ret;

    mpc_kdc_engine_key_name(key, name);
    if (hash_blocks(aad_len, 0) > MPC_GCM_MAX_HASH_BLOCKS)
        return too_long(0, aad_len, why, why_len);
    ret = engine_open(conn, key, name, aad, aad_len, nonce, NULL, 0, tag, NULL, why, why_len);
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY)
        integrity_failed(name, key, why, why_len);
    return ret;
}

/* Opens a ticket of `usage`: C (len bytes) under nonce with tag, into out (len bytes; may be
 * NULL when len is 0). The ticket-key format first; a ticket that fails it is checked as one
 * of the earlier format, which tickets issued before an upgrade still have. A wrong tag
 * gives KRB5KRB_AP_ERR_BAD_INTEGRITY; on any failure out holds zeros. */
static krb5_error_code
open_ticket(engine_conn *conn, const mpc_kdb_key_id *key, krb5_keyusage usage,
            const uint8_t nonce[MPC_KDC_NONCE_LEN], const uint8_t *text, size_t len,
            const uint8_t tag[MPC_KDC_TAG_LEN], uint8_t *out, char *why, size_t why_len)
{
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t ticket_key[MPC_KDC_TICKET_KEY_LEN], header[AAD_HEADER_LEN], *aad = NULL;
    uint8_t *text_copy = NULL;
    /* The current format hashes the text as AAD beside 32 bytes of text: its limit is a few
     * bytes lower than the earlier format's. */
    const int fits_current =
        hash_blocks(AAD_HEADER_LEN + len, sizeof(zero_text)) <= MPC_GCM_MAX_HASH_BLOCKS;
    const int fits_earlier = hash_blocks(AAD_HEADER_LEN, len) <= MPC_GCM_MAX_HASH_BLOCKS;
    krb5_error_code ret;

    mpc_kdc_engine_key_name(key, name);
    if (!fits_current && !fits_earlier) {
        ret = too_long(len, AAD_HEADER_LEN, why, why_len);
        goto cleanup;
    }
    /* Decryption goes in place or into a separate buffer, never a shifted one. */
    if (out != text && router_overlaps(text, len, out, len)) {
        text_copy = malloc(len);
        if (text_copy == NULL) {
            router_set_why(why, why_len, "out of memory");
            ret = ENOMEM;
            goto cleanup;
        }
        memcpy(text_copy, text, len);
        text = text_copy;
    }
    ret = KRB5KRB_AP_ERR_BAD_INTEGRITY;
    if (fits_current) {
        aad = malloc(AAD_HEADER_LEN + len);
        if (aad == NULL) {
            router_set_why(why, why_len, "out of memory");
            ret = ENOMEM;
            goto cleanup;
        }
        aad_header(MPC_KDC_AAD_TICKET_KEY, usage, aad);
        if (len != 0)
            memcpy(aad + AAD_HEADER_LEN, text, len);
        ret = engine_open(conn, key, name, aad, AAD_HEADER_LEN + len, nonce, zero_text,
                          sizeof(zero_text), tag, ticket_key, why, why_len);
        if (ret == 0)
            ret = ticket_key_ctr(ticket_key, text, len, out, why, why_len);
    }
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY && fits_earlier) {
        aad_header(MPC_KDC_AAD_KEYSTREAM, usage, header);
        ret = engine_open(conn, key, name, header, sizeof(header), nonce, text, len, tag, out,
                          why, why_len);
    }
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY)
        integrity_failed(name, key, why, why_len);

cleanup:
    if (ret != 0 && out != NULL && len != 0)
        OPENSSL_cleanse(out, len);
    OPENSSL_cleanse(ticket_key, sizeof(ticket_key));
    free(aad);
    router_wipe_free(text_copy, len);
    return ret;
}

/* ---- encryption --------------------------------------------------------------------- */

/* A cipher state chains nothing in this format: only the empty one init_state makes. */
static krb5_error_code
check_cipher_state(const char *op, const krb5_data *cipher_state, char *why, size_t why_len)
{
    if (cipher_state != NULL && cipher_state->length != 0) {
        router_set_why(why, why_len, "%s with the protected krbtgt key: a cipher state is not "
                       "supported (" MPC_KDC_ENCTYPE_NAME " chains nothing between messages)",
                       op);
        return KRB5_CRYPTO_INTERNAL;
    }
    return 0;
}

krb5_error_code
router_gcm_encrypt(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
                   const mpc_kdb_key_id *key, krb5_keyusage usage,
                   const krb5_data *cipher_state, const krb5_data *input,
                   krb5_enc_data *output, char *why, size_t why_len)
{
    uint8_t aad[AAD_HEADER_LEN], *out;
    size_t total;
    krb5_error_code ret;

    ret = check_cipher_state("encrypt", cipher_state, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || output == NULL || (input->length != 0 && input->data == NULL)) {
        router_set_why(why, why_len, "encrypt: no input or output");
        return EINVAL;
    }
    total = (size_t)input->length + MPC_KDC_ENCRYPT_OVERHEAD;
    output->magic = KV5M_ENC_DATA;
    output->kvno = 0;
    output->enctype = MPC_KDC_ENCTYPE_AES256_GCM;
    if (output->ciphertext.data == NULL || output->ciphertext.length < total) {
        router_set_why(why, why_len, "encrypt: output buffer of %u bytes, %zu needed "
                       "(krb5_c_encrypt_length)", output->ciphertext.length, total);
        return KRB5_BAD_MSIZE;
    }
    out = (uint8_t *)output->ciphertext.data;
    aad_header(MPC_KDC_AAD_TICKET_KEY, usage, aad);
    ret = seal(conn, nonces, chain, key, NONCE_TICKET, aad, sizeof(aad),
               (const uint8_t *)input->data,
               input->length, out, out + MPC_KDC_NONCE_LEN,
               out + MPC_KDC_NONCE_LEN + input->length, why, why_len);
    if (ret == 0)
        output->ciphertext.length = (unsigned int)total;
    return ret;
}

krb5_error_code
router_gcm_decrypt(engine_conn *conn, const mpc_kdb_key_id *key, krb5_keyusage usage,
                   const krb5_data *cipher_state, const krb5_enc_data *input,
                   krb5_data *output, char *why, size_t why_len)
{
    const uint8_t *in;
    size_t plain_len;
    krb5_error_code ret;

    ret = check_cipher_state("decrypt", cipher_state, why, why_len);
    if (ret)
        return ret;
    if (input == NULL || output == NULL) {
        router_set_why(why, why_len, "decrypt: no input or output");
        return EINVAL;
    }
    /* As libk5crypto: an enctype other than the key's (or unspecified) is refused. */
    if (input->enctype != ENCTYPE_UNKNOWN && input->enctype != MPC_KDC_ENCTYPE_AES256_GCM) {
        router_set_why(why, why_len, "decrypt: ciphertext of enctype %d under a key of enctype "
                       MPC_KDC_ENCTYPE_NAME, (int)input->enctype);
        return KRB5_BAD_ENCTYPE;
    }
    if (input->ciphertext.length < MPC_KDC_ENCRYPT_OVERHEAD || input->ciphertext.data == NULL) {
        router_set_why(why, why_len, "decrypt: ciphertext of %u bytes is shorter than nonce "
                       "and tag (%d)", input->ciphertext.length, MPC_KDC_ENCRYPT_OVERHEAD);
        return KRB5_BAD_MSIZE;
    }
    plain_len = input->ciphertext.length - MPC_KDC_ENCRYPT_OVERHEAD;
    if (output->length < plain_len || (plain_len != 0 && output->data == NULL)) {
        router_set_why(why, why_len, "decrypt: output buffer of %u bytes, %zu needed",
                       output->length, plain_len);
        return KRB5_BAD_MSIZE;
    }
    in = (const uint8_t *)input->ciphertext.data;
    ret = open_ticket(conn, key, usage, in, in + MPC_KDC_NONCE_LEN, plain_len,
                      in + MPC_KDC_NONCE_LEN + plain_len, (uint8_t *)output->data, why, why_len);
    if (ret == 0)
        output->length = (unsigned int)plain_len;
    return ret;
}

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
    aad_header(MPC_KDC_AAD_CHECKSUM, usage, aad);
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
    aad_header(MPC_KDC_AAD_CHECKSUM, KRB5_KEYUSAGE_APP_DATA_CKSUM, prefix);
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
    ret = seal(conn, nonces, NULL, key, NONCE_CHECKSUM, aad, aad_len, NULL, 0, out, NULL,
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
    ret = open_checksum(conn, key, aad, aad_len, cksum, cksum + MPC_KDC_NONCE_LEN, why,
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
router_gcm_make_checksum(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
                         const mpc_kdb_key_id *key, krb5_cksumtype cksumtype,
                         krb5_keyusage usage, const krb5_data *input, krb5_checksum *cksum,
                         char *why, size_t why_len)
{
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
router_gcm_verify_checksum(engine_conn *conn, const mpc_kdb_key_id *key, krb5_keyusage usage,
                           const krb5_data *data, const krb5_checksum *cksum,
                           krb5_boolean *valid, char *why, size_t why_len)
{
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
router_gcm_make_checksum_iov(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
                             const mpc_kdb_key_id *key, krb5_cksumtype cksumtype,
                             krb5_keyusage usage, krb5_crypto_iov *data, size_t num_data,
                             char *why, size_t why_len)
{
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
router_gcm_verify_checksum_iov(engine_conn *conn, const mpc_kdb_key_id *key,
                               krb5_cksumtype cksumtype, krb5_keyusage usage,
                               const krb5_crypto_iov *data, size_t num_data,
                               krb5_boolean *valid, char *why, size_t why_len)
{
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

/* ---- cipher state and the entry points refused with the krbtgt key ------------------ */

krb5_error_code
router_gcm_init_state(krb5_data *new_state, char *why, size_t why_len)
{
    if (new_state == NULL) {
        router_set_why(why, why_len, "init_state: no output");
        return EINVAL;
    }
    /* Nothing chains between messages: the empty state (krb5_c_free_state frees it). */
    new_state->magic = KV5M_DATA;
    new_state->length = 0;
    new_state->data = NULL;
    return 0;
}

krb5_error_code
router_gcm_refuse(enum router_gcm_refused what, char *why, size_t why_len)
{
    switch (what) {
    case ROUTER_GCM_ENCRYPT_IOV:
        /* krb5kdc 1.20.1 never calls the _iov encryption (GSSAPI's) with any key. */
        router_set_why(why, why_len, "encrypt_iov with the protected krbtgt key refused: only "
                       "krb5_c_encrypt is served (krb5kdc never encrypts a ticket with iovs)");
        break;
    case ROUTER_GCM_DECRYPT_IOV:
        router_set_why(why, why_len, "decrypt_iov with the protected krbtgt key refused: only "
                       "krb5_c_decrypt is served (krb5kdc never decrypts a ticket with iovs)");
        break;
    case ROUTER_GCM_PRF:
        router_set_why(why, why_len, "prf with the protected krbtgt key refused: krb5kdc never "
                       "computes a PRF of the krbtgt key");
        break;
    case ROUTER_GCM_PRFPLUS:
        router_set_why(why, why_len, "prfplus with the protected krbtgt key refused: krb5kdc "
                       "never computes a PRF+ of the krbtgt key");
        break;
    case ROUTER_GCM_DERIVE_PRFPLUS:
        router_set_why(why, why_len, "derive_prfplus with the protected krbtgt key refused: it "
                       "derives the FAST cookie key, needed only for cookies with contents "
                       "(SPAKE preauth, which must stay disabled)");
        break;
    case ROUTER_GCM_CF2:
    default:
        router_set_why(why, why_len, "fx_cf2_simple with the protected krbtgt key refused: "
                       "krb5kdc combines only session, armor and reply keys with cf2");
        break;
    }
    return KRB5_CRYPTO_INTERNAL;
}
