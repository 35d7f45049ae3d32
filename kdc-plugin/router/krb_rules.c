/* kdc-plugin/router/krb_rules.c - what the crypto router accepts for a protected key of a
 * standard enctype (krb_rules.h). Facts about the enctypes from the key-algorithm table
 * (mpc-engine/keys/key_algorithms.h); the rest from RFC 3961/3962, RFC 8009 and krb5
 * 1.20.1's lib/crypto/krb (decrypt.c, cf2.c).
 */

#include "krb_rules.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The table's row of a served enctype: a Kerberos row; NULL for any other enctype. */
static const struct mpc_key_algorithm_info *
served_row(krb5_enctype enctype)
{
    const struct mpc_key_algorithm_info *row = mpc_key_algorithm_by_enctype(enctype);

    return mpc_key_is_kerberos(row) ? row : NULL;
}

int
router_krb_algorithm(krb5_enctype enctype)
{
    const struct mpc_key_algorithm_info *row = served_row(enctype);

    return row != NULL ? row->id : 0;
}

const char *
router_krb_enctype_name(krb5_enctype enctype)
{
    const struct mpc_key_algorithm_info *row = served_row(enctype);

    return row != NULL ? row->name : "unknown";
}

krb5_cksumtype
router_krb_cksumtype(krb5_enctype enctype)
{
    const struct mpc_key_algorithm_info *row = served_row(enctype);

    return row != NULL ? row->cksumtype : 0;
}

size_t
router_krb_mac_len(krb5_enctype enctype)
{
    const struct mpc_key_algorithm_info *row = served_row(enctype);

    return row != NULL ? row->mac_bytes : 0;
}

int
router_krb_usage_served(krb5_keyusage usage)
{
    return usage >= 0 && mpc_key_usage_index((uint32_t)usage) >= 0;
}

void
router_krb_usage_names(char *buf, size_t len)
{
    size_t i, at = 0;
    int n;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < MPC_KEY_USAGE_COUNT && at < len; i++) {
        n = snprintf(buf + at, len - at, "%s%u", i == 0 ? "" : i + 1 == MPC_KEY_USAGE_COUNT ? " and " : ", ",
                     (unsigned)mpc_key_usages[i]);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

void
router_krb_served_names(char *buf, size_t len)
{
    size_t i, served = 0, written = 0, at = 0;
    int n;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < MPC_KEY_ALGORITHM_COUNT; i++)
        served += mpc_key_is_kerberos(&mpc_key_algorithms[i]) ? 1 : 0;
    for (i = 0; i < MPC_KEY_ALGORITHM_COUNT && at < len; i++) {
        if (!mpc_key_is_kerberos(&mpc_key_algorithms[i]))
            continue;
        n = snprintf(buf + at, len - at, "%s%s (%d)",
                     written == 0 ? "" : written + 1 == served ? " and " : ", ",
                     mpc_key_algorithms[i].name, (int)mpc_key_algorithms[i].enctype);
        if (n < 0)
            break;
        at += (size_t)n;
        written++;
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
