/* kdc-plugin/router/private_types.c - the keyless answers about the protected krbtgt key's
 * private enctype and checksum type (private_types.h).
 *
 * Lengths from the format (kdb/protected_key.h) and the key-algorithm table
 * (mpc-engine/keys/key_algorithms.h).
 */

#include "private_types.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "keys/key_algorithms.h"
#include "originals.h"
#include "protected_key.h"

int
router_is_private_enctype(krb5_enctype enctype)
{
    return enctype == MPC_KDC_ENCTYPE_AES256_GCM;
}

int
router_is_private_cksumtype(krb5_cksumtype cksumtype)
{
    return cksumtype == MPC_KDC_CKSUMTYPE_GMAC;
}

/* Copies name into buffer as libk5crypto does: ENOMEM when it does not fit. */
static krb5_error_code
copy_name(const char *name, char *buffer, size_t buflen)
{
    size_t len = strlen(name);

    if (buffer == NULL || len >= buflen)
        return ENOMEM;
    memcpy(buffer, name, len + 1);
    return 0;
}

krb5_boolean
private_krb5_c_valid_enctype(krb5_enctype ktype)
{
    (void)ktype;
    return TRUE;
}

/* An enctype libk5crypto or this router knows. */
static int
known_enctype(krb5_enctype enctype)
{
    const struct router_originals *libk5crypto = router_originals();

    return router_is_private_enctype(enctype) ||
           (libk5crypto->krb5_c_valid_enctype != NULL &&
            libk5crypto->krb5_c_valid_enctype(enctype));
}

krb5_error_code
private_krb5_c_enctype_compare(krb5_context ctx, krb5_enctype e1, krb5_enctype e2,
                               krb5_boolean *similar)
{
    (void)ctx;
    /* As libk5crypto: an unknown enctype on either side is an error; otherwise the
     * private enctype is similar only to itself (no other enctype's keys fit it). */
    if (!known_enctype(e1) || !known_enctype(e2))
        return KRB5_BAD_ENCTYPE;
    *similar = e1 == e2;
    return 0;
}

krb5_error_code
private_krb5_c_encrypt_length(krb5_context ctx, krb5_enctype enctype, size_t inputlen,
                              size_t *length)
{
    (void)ctx;
    (void)enctype;
    if (inputlen > SIZE_MAX - MPC_KDC_ENCRYPT_OVERHEAD)
        return KRB5_BAD_MSIZE;
    *length = inputlen + MPC_KDC_ENCRYPT_OVERHEAD;
    return 0;
}

krb5_error_code
private_krb5_c_crypto_length(krb5_context ctx, krb5_enctype enctype, krb5_cryptotype type,
                             unsigned int *size)
{
    (void)ctx;
    (void)enctype;
    switch (type) {
    case KRB5_CRYPTO_TYPE_EMPTY:
    case KRB5_CRYPTO_TYPE_SIGN_ONLY:
    case KRB5_CRYPTO_TYPE_PADDING:     /* counter mode: no padding */
        *size = 0;
        break;
    case KRB5_CRYPTO_TYPE_DATA:
        *size = (unsigned int)~0;      /* as libk5crypto (and Heimdal) */
        break;
    case KRB5_CRYPTO_TYPE_HEADER:
        *size = MPC_KDC_NONCE_LEN;
        break;
    case KRB5_CRYPTO_TYPE_TRAILER:
        *size = MPC_KDC_TAG_LEN;
        break;
    case KRB5_CRYPTO_TYPE_CHECKSUM:
        *size = MPC_KDC_CHECKSUM_LEN;
        break;
    default:
        return EINVAL;
    }
    return 0;
}

krb5_error_code
private_krb5_c_padding_length(krb5_context ctx, krb5_enctype enctype, size_t data_length,
                              unsigned int *size)
{
    (void)ctx;
    (void)enctype;
    (void)data_length;
    *size = 0;
    return 0;
}

krb5_error_code
private_krb5_c_block_size(krb5_context ctx, krb5_enctype enctype, size_t *blocksize)
{
    (void)ctx;
    (void)enctype;
    /* Counter mode is a stream: ciphertexts have any length (as RC4's block size 1). */
    *blocksize = 1;
    return 0;
}

krb5_error_code
private_krb5_c_keylengths(krb5_context ctx, krb5_enctype enctype, size_t *keybytes,
                          size_t *keylength)
{
    const struct mpc_key_algorithm_info *row = mpc_key_algorithm_by_enctype(enctype);

    (void)ctx;
    if ((keybytes == NULL && keylength == NULL) || row == NULL)
        return EINVAL;
    /* The AES-256 key the servers hold as shares; the KDC itself only ever holds a handle
     * (MPC_KDB_HANDLE_LEN bytes) in its place. */
    if (keybytes != NULL)
        *keybytes = row->key_bytes;
    if (keylength != NULL)
        *keylength = row->key_bytes;
    return 0;
}

krb5_error_code
private_krb5int_c_mandatory_cksumtype(krb5_context ctx, krb5_enctype etype,
                                      krb5_cksumtype *cksumtype)
{
    (void)ctx;
    (void)etype;
    *cksumtype = MPC_KDC_CKSUMTYPE_GMAC;
    return 0;
}

krb5_error_code
private_krb5_c_checksum_length(krb5_context ctx, krb5_cksumtype cksumtype, size_t *length)
{
    (void)ctx;
    (void)cksumtype;
    *length = MPC_KDC_CHECKSUM_LEN;
    return 0;
}

krb5_boolean
private_krb5_c_is_keyed_cksum(krb5_cksumtype ctype)
{
    (void)ctype;
    return TRUE;
}

krb5_boolean
private_krb5_c_is_coll_proof_cksum(krb5_cksumtype ctype)
{
    (void)ctype;
    return TRUE;       /* a MAC under a secret key */
}

krb5_boolean
private_krb5_c_valid_cksumtype(krb5_cksumtype ctype)
{
    (void)ctype;
    return TRUE;
}

krb5_error_code
private_krb5_enctype_to_name(krb5_enctype enctype, krb5_boolean shortest, char *buffer,
                             size_t buflen)
{
    (void)enctype;
    (void)shortest;
    return copy_name(MPC_KDC_ENCTYPE_NAME, buffer, buflen);
}

krb5_error_code
private_krb5_cksumtype_to_string(krb5_cksumtype cksumtype, char *buffer, size_t buflen)
{
    (void)cksumtype;
    return copy_name(MPC_KDC_CKSUMTYPE_NAME, buffer, buflen);
}

krb5_boolean
private_krb5int_c_deprecated_enctype(krb5_enctype etype)
{
    (void)etype;
    return FALSE;
}

krb5_boolean
private_krb5int_c_weak_enctype(krb5_enctype etype)
{
    (void)etype;
    return FALSE;
}

/* The private enctype is always permitted: it is configured by protecting a key, not by
 * permitted_enctypes, which cannot name it. */
krb5_boolean
private_krb5_is_permitted_enctype(krb5_context ctx, krb5_enctype etype)
{
    (void)ctx;
    (void)etype;
    return TRUE;
}
