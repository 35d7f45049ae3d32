/* kdc-plugin/router/gcm_jobs.c - tickets and checksums under the protected krbtgt key
 * (gcm_jobs.h): one seal and one open (gcm_seal.h), tickets, cipher state; the checksums
 * are in gcm_checksums.c.
 *
 * Reads nothing: the engine connection and the nonce supply carry the configuration.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "gcm_jobs.h"
#include "gcm_seal.h"

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

void
gcm_aad_header(uint8_t type, krb5_keyusage usage, uint8_t out[AAD_HEADER_LEN])
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
static void
chained_aad(const uint8_t server_checksum[MPC_KDC_CHECKSUM_LEN], uint8_t out[CHAINED_AAD_LEN])
{
    gcm_aad_header(MPC_KDC_AAD_CHECKSUM, KRB5_KEYUSAGE_APP_DATA_CKSUM, out);
    memcpy(out + AAD_HEADER_LEN, server_checksum, MPC_KDC_CHECKSUM_LEN);
}

/* A ticket whose PAC carries a KDC checksum made ahead that failed its check (a server altered
 * its share): the ticket's plaintext with that checksum replaced by one made now, checked as any
 * other checksum is (the KDC checksum covers only the server checksum, which is right). The
 * checksum's 28 random bytes appear once in the EncTicketPart, inside the PAC krb5kdc signed;
 * anything else leaves the ticket refused. *patched (len bytes) is malloc'd on the first call
 * and holds the plaintext from then on; the chain is emptied either way. */
static krb5_error_code
remake_kdc_checksum(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
                    const uint8_t *text, size_t len, uint8_t **patched, char *why, size_t why_len)
{
    uint8_t aad[CHAINED_AAD_LEN], fresh[MPC_KDC_CHECKSUM_LEN];
    uint8_t *at, *again;
    krb5_error_code ret;

    if (*patched == NULL) {
        *patched = malloc(len != 0 ? len : 1);
        if (*patched == NULL) {
            checksum_chain_clear(chain);
            router_set_why(why, why_len, "out of memory");
            return ENOMEM;
        }
        memcpy(*patched, text, len);
    }
    at = memmem(*patched, len, chain->kdc_checksum, MPC_KDC_CHECKSUM_LEN);
    again = at == NULL ? NULL
                       : memmem(at + 1, len - (size_t)(at + 1 - *patched), chain->kdc_checksum,
                                MPC_KDC_CHECKSUM_LEN);
    if (at == NULL || again != NULL) {
        checksum_chain_clear(chain);
        router_set_why(why, why_len, "the PAC's KDC checksum made ahead failed its check (a server "
                       "altered its share) and is not found once in the ticket: the ticket is "
                       "refused");
        return KRB5_CRYPTO_INTERNAL;
    }
    chained_aad(chain->server_checksum, aad);
    ret = gcm_seal(conn, nonces, NULL, &chain->key, NONCE_CHECKSUM, aad, sizeof(aad), NULL, 0, fresh,
                   NULL, fresh + MPC_KDC_NONCE_LEN, why, why_len);
    if (ret == 0) {
        memcpy(at, fresh, sizeof(fresh));
        router_log(LOG_WARNING, "the PAC's KDC checksum made ahead under %u failed its check (a "
                   "server altered its share): made again, and the ticket sealed with it", chain->key.kvno);
    }
    checksum_chain_clear(chain);
    OPENSSL_cleanse(fresh, sizeof(fresh));
    return ret;
}

/* Checks the served KDC checksum in a round trip of its own (a reopen, or a full open where a
 * server no longer holds its nonce); a failed check has it made again in the ticket's plaintext
 * (remake_kdc_checksum). The chain is empty after. */
static krb5_error_code
check_served_apart(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain,
                   const uint8_t *text, size_t len, uint8_t **patched, char *why, size_t why_len)
{
    uint8_t aad[CHAINED_AAD_LEN];
    krb5_error_code ret;

    chained_aad(chain->server_checksum, aad);
    ret = gcm_open_checksum(conn, &chain->key, aad, sizeof(aad), chain->kdc_checksum,
                        chain->kdc_checksum + MPC_KDC_NONCE_LEN, why, why_len);
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY)
        return remake_kdc_checksum(conn, nonces, chain, text, len, patched, why, why_len);
    checksum_chain_clear(chain);
    return ret;
}

/* Seals under a fresh nonce, writing N to out_nonce and T to out_tag:
 *   - NONCE_CHECKSUM: a GMAC over aad (len is 0, text and out_text unused);
 *   - NONCE_TICKET: text (len bytes; out_text may overlap it in any way) under the nonce's
 *     ticket key into out_text, tagged with AAD = aad (the 5-byte header) || C. C is built
 *     in the AAD buffer and copied out only once tagged, so a retry with a fresh nonce
 *     still has the plaintext.
 * On failure out_text holds zeros. */
krb5_error_code
gcm_seal(engine_conn *conn, nonce_supply *nonces, checksum_chain *chain, const mpc_kdb_key_id *key,
     enum nonce_kind kind, const uint8_t *aad, size_t aad_len, const uint8_t *text, size_t len,
     uint8_t out_nonce[MPC_KDC_NONCE_LEN], uint8_t *out_text, uint8_t out_tag[MPC_KDC_TAG_LEN],
     char *why, size_t why_len)
{
    const int ticket = kind == NONCE_TICKET;
    char name[MPC_KDC_ENGINE_KEY_NAME_LEN];
    uint8_t ticket_key[MPC_KDC_TICKET_KEY_LEN], *full_aad = NULL;
    uint8_t check_aad[CHAINED_AAD_LEN], *patched = NULL;
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
        ret = check_served_apart(conn, nonces, chain, text, len, &patched, why, why_len);
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
            ret = ticket_key_ctr(ticket_key, patched != NULL ? patched : text, len, full_aad + aad_len,
                                 why, why_len);
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
            checking = 0;
            if (rc == MPC_EABORT || rc == MPC_EMISMATCH) {
                /* The KDC checksum in this ticket failed its check, or the client library
                 * refused the round trip's shares (a server altered its share): the ticket is
                 * made again with a KDC checksum made now, under a fresh nonce of the service
                 * that serves from then on. */
                ret = remake_kdc_checksum(conn, nonces, chain, text, len, &patched, why, why_len);
                if (ret)
                    goto cleanup;
                if (pooled)
                    nonce_supply_drop(nonces, name, key->kvno, kind);
                if (attempt + 1 < SEAL_ATTEMPTS)
                    engine_conn_count_reseal(conn);
                continue;
            } else if (rc != MPC_ENONCE) {
                /* Any other failure: the ticket does not leave, so neither does the checksum. */
                checksum_chain_clear(chain);
                break;
            } else {
                /* A forgotten nonce (either one): the check is made on its own first. */
                ret = check_served_apart(conn, nonces, chain, text, len, &patched, why, why_len);
                if (ret)
                    goto cleanup;
            }
        }
        /* The servers forgot the nonce (restart, expiry, eviction): so they forgot the
         * rest of that pool too. A tag the client library refused (its shares disagree: a
         * server altered its share) was reported to the servers, which serve otherwise from
         * then on: made again under a fresh nonce of that service, the pool's being the
         * service's left. */
        if (rc != MPC_ENONCE && rc != MPC_EMISMATCH)
            break;
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
    if (patched != NULL)
        router_wipe_free(patched, len);
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
krb5_error_code
gcm_open_checksum(engine_conn *conn, const mpc_kdb_key_id *key, const uint8_t *aad, size_t aad_len,
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
        gcm_aad_header(MPC_KDC_AAD_TICKET_KEY, usage, aad);
        if (len != 0)
            memcpy(aad + AAD_HEADER_LEN, text, len);
        ret = engine_open(conn, key, name, aad, AAD_HEADER_LEN + len, nonce, zero_text,
                          sizeof(zero_text), tag, ticket_key, why, why_len);
        if (ret == 0)
            ret = ticket_key_ctr(ticket_key, text, len, out, why, why_len);
    }
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY && fits_earlier) {
        gcm_aad_header(MPC_KDC_AAD_KEYSTREAM, usage, header);
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
router_gcm_encrypt(const router_job *job, krb5_keyusage usage, const krb5_data *cipher_state,
                   const krb5_data *input, krb5_enc_data *output)
{
    engine_conn *conn = job->conn;
    nonce_supply *nonces = job->nonces;
    checksum_chain *chain = job->chain;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
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
    gcm_aad_header(MPC_KDC_AAD_TICKET_KEY, usage, aad);
    ret = gcm_seal(conn, nonces, chain, key, NONCE_TICKET, aad, sizeof(aad),
               (const uint8_t *)input->data,
               input->length, out, out + MPC_KDC_NONCE_LEN,
               out + MPC_KDC_NONCE_LEN + input->length, why, why_len);
    if (ret == 0)
        output->ciphertext.length = (unsigned int)total;
    return ret;
}

krb5_error_code
router_gcm_decrypt(const router_job *job, krb5_keyusage usage, const krb5_data *cipher_state,
                   const krb5_enc_data *input, krb5_data *output)
{
    engine_conn *conn = job->conn;
    const mpc_kdb_key_id *key = job->key;
    char *why = job->why;
    size_t why_len = job->why_len;
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

/* ---- cipher state and the entry points refused with the krbtgt key ------------------ */

krb5_error_code
router_gcm_init_state(const router_job *job, krb5_keyusage usage, krb5_data *new_state)
{
    (void)usage;
    if (new_state == NULL) {
        router_set_why(job->why, job->why_len, "init_state: no output");
        return EINVAL;
    }
    /* Nothing chains between messages: the empty state (krb5_c_free_state frees it). */
    new_state->magic = KV5M_DATA;
    new_state->length = 0;
    new_state->data = NULL;
    return 0;
}

krb5_error_code
router_gcm_refuse(const router_job *job, enum router_refused what, krb5_keyusage usage)
{
    char *why = job->why;
    size_t why_len = job->why_len;

    (void)usage;
    switch (what) {
    case ROUTER_REFUSED_ENCRYPT_IOV:
        /* krb5kdc 1.20.1 never calls the _iov encryption (GSSAPI's) with any key. */
        router_set_why(why, why_len, "encrypt_iov with the protected krbtgt key refused: only "
                       "krb5_c_encrypt is served (krb5kdc never encrypts a ticket with iovs)");
        break;
    case ROUTER_REFUSED_DECRYPT_IOV:
        router_set_why(why, why_len, "decrypt_iov with the protected krbtgt key refused: only "
                       "krb5_c_decrypt is served (krb5kdc never decrypts a ticket with iovs)");
        break;
    case ROUTER_REFUSED_PRF:
        router_set_why(why, why_len, "prf with the protected krbtgt key refused: krb5kdc never "
                       "computes a PRF of the krbtgt key");
        break;
    case ROUTER_REFUSED_PRFPLUS:
        router_set_why(why, why_len, "prfplus with the protected krbtgt key refused: krb5kdc "
                       "never computes a PRF+ of the krbtgt key");
        break;
    case ROUTER_REFUSED_DERIVE_PRFPLUS:
        router_set_why(why, why_len, "derive_prfplus with the protected krbtgt key refused: it "
                       "derives the FAST cookie key, needed only for cookies with contents "
                       "(SPAKE preauth, which must stay disabled)");
        break;
    case ROUTER_REFUSED_CF2:
    default:
        router_set_why(why, why_len, "fx_cf2_simple with the protected krbtgt key refused: "
                       "krb5kdc combines only session, armor and reply keys with cf2");
        break;
    }
    return KRB5_CRYPTO_INTERNAL;
}
