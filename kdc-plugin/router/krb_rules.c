/* kdc-plugin/router/krb_rules.c - what the crypto router accepts for a protected key of a
 * standard enctype (krb_rules.h). Values from RFC 3961/3962, RFC 8009 and krb5 1.20.1's
 * lib/crypto/krb (etypes.c, cksumtypes.c, decrypt.c, cf2.c).
 */

#include "krb_rules.h"

#include <errno.h>
#include <string.h>

/* mpc_client.h's enum mpc_key_algorithm, since interface 3 (4, 5) and 4 (6, 7). */
#define ENGINE_AES128_CTS_HMAC_SHA1_96 4
#define ENGINE_AES256_CTS_HMAC_SHA1_96 5
#define ENGINE_AES128_CTS_HMAC_SHA256_128 6
#define ENGINE_AES256_CTS_HMAC_SHA384_192 7

int
router_krb_algorithm(krb5_enctype enctype)
{
    switch (enctype) {
    case ENCTYPE_AES128_CTS_HMAC_SHA1_96: return ENGINE_AES128_CTS_HMAC_SHA1_96;
    case ENCTYPE_AES256_CTS_HMAC_SHA1_96: return ENGINE_AES256_CTS_HMAC_SHA1_96;
    case ENCTYPE_AES128_CTS_HMAC_SHA256_128: return ENGINE_AES128_CTS_HMAC_SHA256_128;
    case ENCTYPE_AES256_CTS_HMAC_SHA384_192: return ENGINE_AES256_CTS_HMAC_SHA384_192;
    default: return 0;
    }
}

const char *
router_krb_enctype_name(krb5_enctype enctype)
{
    switch (enctype) {
    case ENCTYPE_AES128_CTS_HMAC_SHA1_96: return "aes128-cts-hmac-sha1-96";
    case ENCTYPE_AES256_CTS_HMAC_SHA1_96: return "aes256-cts-hmac-sha1-96";
    case ENCTYPE_AES128_CTS_HMAC_SHA256_128: return "aes128-cts-hmac-sha256-128";
    case ENCTYPE_AES256_CTS_HMAC_SHA384_192: return "aes256-cts-hmac-sha384-192";
    default: return "unknown";
    }
}

krb5_cksumtype
router_krb_cksumtype(krb5_enctype enctype)
{
    switch (enctype) {
    case ENCTYPE_AES128_CTS_HMAC_SHA1_96: return CKSUMTYPE_HMAC_SHA1_96_AES128;
    case ENCTYPE_AES256_CTS_HMAC_SHA1_96: return CKSUMTYPE_HMAC_SHA1_96_AES256;
    case ENCTYPE_AES128_CTS_HMAC_SHA256_128: return CKSUMTYPE_HMAC_SHA256_128_AES128;
    case ENCTYPE_AES256_CTS_HMAC_SHA384_192: return CKSUMTYPE_HMAC_SHA384_192_AES256;
    default: return 0;
    }
}

size_t
router_krb_mac_len(krb5_enctype enctype)
{
    switch (enctype) {
    case ENCTYPE_AES128_CTS_HMAC_SHA1_96:
    case ENCTYPE_AES256_CTS_HMAC_SHA1_96: return 12;     /* HMAC-SHA1-96 */
    case ENCTYPE_AES128_CTS_HMAC_SHA256_128: return 16;  /* HMAC-SHA256-128 */
    case ENCTYPE_AES256_CTS_HMAC_SHA384_192: return 24;  /* HMAC-SHA384-192 */
    default: return 0;
    }
}

int
router_krb_usage_served(krb5_keyusage usage)
{
    switch (usage) {
    case KRB5_KEYUSAGE_AS_REQ_PA_ENC_TS:        /* 1: preauth timestamp */
    case KRB5_KEYUSAGE_KDC_REP_TICKET:          /* 2: ticket */
    case KRB5_KEYUSAGE_AS_REP_ENCPART:          /* 3: AS-REP enc-part */
    case KRB5_KEYUSAGE_APP_DATA_CKSUM:          /* 17: PAC checksums */
    case KRB5_KEYUSAGE_AS_REQ:                  /* 56: PA-REQ-ENC-PA-REP */
        return 1;
    default:
        return 0;
    }
}

krb5_error_code
router_krb_resolve_cksumtype(krb5_enctype enctype, krb5_cksumtype requested,
                             krb5_cksumtype *resolved)
{
    krb5_cksumtype mandatory = router_krb_cksumtype(enctype);

    *resolved = 0;
    if (mandatory == 0 || (requested != 0 && requested != mandatory))
        return KRB5_BAD_ENCTYPE;
    *resolved = mandatory;
    return 0;
}

krb5_error_code
router_krb_encrypt_length(krb5_enctype enctype, size_t plain_len, size_t *total)
{
    size_t mac = router_krb_mac_len(enctype);

    *total = 0;
    if (mac == 0)
        return KRB5_BAD_ENCTYPE;
    if (plain_len > ROUTER_KRB_MAX_DATA - ROUTER_KRB_CONFOUNDER_LEN)
        return KRB5_BAD_MSIZE;
    *total = plain_len + ROUTER_KRB_CONFOUNDER_LEN + mac;
    return 0;
}

krb5_error_code
router_krb_plain_length(krb5_enctype enctype, size_t cipher_len, size_t *plain_len)
{
    size_t mac = router_krb_mac_len(enctype);

    *plain_len = 0;
    if (mac == 0)
        return KRB5_BAD_ENCTYPE;
    if (cipher_len < ROUTER_KRB_CONFOUNDER_LEN + mac || cipher_len > ROUTER_KRB_MAX_DATA)
        return KRB5_BAD_MSIZE;
    *plain_len = cipher_len - ROUTER_KRB_CONFOUNDER_LEN - mac;
    return 0;
}

int
router_krb_iov_signed(const krb5_crypto_iov *iov)
{
    return iov->flags == KRB5_CRYPTO_TYPE_HEADER || iov->flags == KRB5_CRYPTO_TYPE_DATA ||
           iov->flags == KRB5_CRYPTO_TYPE_PADDING || iov->flags == KRB5_CRYPTO_TYPE_SIGN_ONLY;
}

size_t
router_krb_signed_length(const krb5_crypto_iov *data, size_t num_data)
{
    size_t i, len = 0;

    for (i = 0; i < num_data; i++) {
        if (!router_krb_iov_signed(&data[i]))
            continue;
        if (data[i].data.length > SIZE_MAX - len)
            return SIZE_MAX;
        len += data[i].data.length;
    }
    return len;
}

void
router_krb_gather_signed(const krb5_crypto_iov *data, size_t num_data, uint8_t *out)
{
    size_t i, at = 0;

    for (i = 0; i < num_data; i++) {
        if (!router_krb_iov_signed(&data[i]) || data[i].data.length == 0)
            continue;
        memcpy(out + at, data[i].data.data, data[i].data.length);
        at += data[i].data.length;
    }
}

krb5_crypto_iov *
router_krb_checksum_iov(const krb5_crypto_iov *data, size_t num_data)
{
    size_t i;

    for (i = 0; i < num_data; i++) {
        if (data[i].flags == KRB5_CRYPTO_TYPE_CHECKSUM)
            return (krb5_crypto_iov *)&data[i];
    }
    return NULL;
}
