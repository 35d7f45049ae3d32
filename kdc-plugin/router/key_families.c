/* kdc-plugin/router/key_families.c - the rows of key_families.h. */

#include "key_families.h"

#include "gcm_jobs.h"
#include "krb_jobs.h"

const router_family router_gcm_family = {
    .serves = router_gcm_serves,
    .encrypt = router_gcm_encrypt,
    .decrypt = router_gcm_decrypt,
    .make_checksum = router_gcm_make_checksum,
    .verify_checksum = router_gcm_verify_checksum,
    .make_checksum_iov = router_gcm_make_checksum_iov,
    .verify_checksum_iov = router_gcm_verify_checksum_iov,
    .init_state = router_gcm_init_state,
    .refuse = router_gcm_refuse,
};

const router_family router_krb_family = {
    .serves = router_krb_serves,
    .encrypt = router_krb_encrypt,
    .decrypt = router_krb_decrypt,
    .make_checksum = router_krb_make_checksum,
    .verify_checksum = router_krb_verify_checksum,
    .make_checksum_iov = router_krb_make_checksum_iov,
    .verify_checksum_iov = router_krb_verify_checksum_iov,
    .init_state = router_krb_init_state,
    .refuse = router_krb_refuse,
};

const router_family *
router_family_of(const mpc_kdb_key_id *key)
{
    static const router_family *const rows[] = { &router_gcm_family, &router_krb_family };
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rows[i]->serves(key))
            return rows[i];
    return NULL;
}
