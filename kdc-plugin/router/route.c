/* kdc-plugin/router/route.c - which calls with a key handle go to the engine, and which are
 * refused (route.h).
 *
 * Reads nothing itself: route_state.c holds the configuration.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "key_families.h"
#include "krb_jobs.h"
#include "krb_rules.h"
#include "protected_key.h"
#include "route_state.h"
#include "router_kdb_interface.h"
#include "router_log.h"

#define WHY_DECL char why[ROUTER_MSG_LEN] = ""

void
route_init(void)
{
    route_state_init();
}

int
route_is_candidate(const krb5_keyblock *kb)
{
    return kb != NULL && kb->contents != NULL &&
           mpc_kdb_handle_is_candidate(kb->contents, kb->length);
}

/* Verifies the candidate kb: 0 with *id and *engine set, or a refusal. Traced either way. */
static krb5_error_code
verify(const route_call *call, const krb5_keyblock *kb, mpc_kdb_key_id *id,
       route_engine *engine)
{
    WHY_DECL;
    int ok = route_state_verify(kb, id, engine, why, sizeof(why)) == 0;

    router_trace(call->fn, call->caller, ok ? "handle" : "refused", kb, NULL);
    return ok ? 0 : router_refuse(call->ctx, call->fn, KRB5_CRYPTO_INTERNAL, why);
}

/* After a job: passes success through; an answer about the data gets its message and
 * nothing more; any other failure is a refusal. */
static krb5_error_code
job_done(const route_call *call, krb5_error_code ret, const char *why)
{
    if (ret == 0)
        return 0;
    if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY || ret == KRB5_BAD_MSIZE ||
        ret == KRB5_BAD_ENCTYPE) {
        if (call->ctx != NULL)
            krb5_set_error_message(call->ctx, ret, "mpc_crypto_router: %s: %s",
                                   router_fn_name(call->fn), why[0] ? why : "rejected");
        return ret;
    }
    return router_refuse(call->ctx, call->fn, ret, why[0] ? why : "engine call failed");
}

/* Preauth decryptions under a handle that ended without a verdict on the data
 * (router_kdb_interface.h). */
static unsigned long undecided_decrypts;

__attribute__((visibility("default"))) unsigned long
mpc_router_undecided_decrypts(void)
{
    return __atomic_load_n(&undecided_decrypts, __ATOMIC_RELAXED);
}

static krb5_error_code
decrypt_done(krb5_keyusage usage, krb5_error_code ret)
{
    if ((usage == KRB5_KEYUSAGE_AS_REQ_PA_ENC_TS || usage == KRB5_KEYUSAGE_ENC_CHALLENGE_CLIENT) &&
        ret != 0 && ret != KRB5KRB_AP_ERR_BAD_INTEGRITY && ret != KRB5_BAD_MSIZE &&
        ret != KRB5_BAD_ENCTYPE)
        __atomic_add_fetch(&undecided_decrypts, 1, __ATOMIC_RELAXED);
    return ret;
}

/* A verified handle of an enctype no job serves (fail closed). */
static krb5_error_code
refuse_enctype(const char *op, const mpc_kdb_key_id *key, char *why, size_t why_len)
{
    char served[256];

    router_krb_served_names(served, sizeof(served));
    snprintf(why, why_len, "%s with a protected key refused: the engine serves only keys of "
             "enctypes " MPC_KDC_ENCTYPE_NAME " (%d, the protected krbtgt key), %s, not enctype "
             "%d (fail closed)", op, MPC_KDC_ENCTYPE_AES256_GCM, served, (int)key->enctype);
    return KRB5_CRYPTO_INTERNAL;
}

/* One call under a verified handle: its key, this process's engine, the family of keys
 * serving it (NULL: a verified handle of an enctype no job serves) and the reason of a
 * refusal. */
typedef struct route_job {
    mpc_kdb_key_id id;
    route_engine engine;
    const router_family *family;
    router_job job;
    char why[ROUTER_MSG_LEN];
} route_job;

/* Verifies the candidate handle kb and finds its family: 0 with *rj set, or a refusal. */
static krb5_error_code
begin(const route_call *call, const krb5_keyblock *kb, route_job *rj)
{
    krb5_error_code ret;

    memset(rj, 0, sizeof(*rj));
    ret = verify(call, kb, &rj->id, &rj->engine);
    if (ret) {
        OPENSSL_cleanse(&rj->id, sizeof(rj->id));
        return ret;
    }
    rj->family = router_family_of(&rj->id);
    rj->job.conn = rj->engine.conn;
    rj->job.nonces = rj->engine.nonces;
    rj->job.chain = rj->engine.chain;
    rj->job.key = &rj->id;
    rj->job.why = rj->why;
    rj->job.why_len = sizeof(rj->why);
    return 0;
}

/* The call's answer (job_done) once its job returned ret; the key wiped. */
static krb5_error_code
end(const route_call *call, route_job *rj, krb5_error_code ret)
{
    ret = job_done(call, ret, rj->why);
    OPENSSL_cleanse(&rj->id, sizeof(rj->id));
    return ret;
}

static krb5_error_code
unserved(route_job *rj, const char *op)
{
    return refuse_enctype(op, &rj->id, rj->why, sizeof(rj->why));
}

/* ---- encryption --------------------------------------------------------------------- */

krb5_error_code
route_encrypt(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
              const krb5_data *cipher_state, const krb5_data *input, krb5_enc_data *output)
{
    route_job rj;
    krb5_error_code ret = begin(call, key, &rj);

    if (ret)
        return ret;
    return end(call, &rj, rj.family != NULL
                              ? rj.family->encrypt(&rj.job, usage, cipher_state, input, output)
                              : unserved(&rj, "encrypt"));
}

krb5_error_code
route_decrypt(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
              const krb5_data *cipher_state, const krb5_enc_data *input, krb5_data *output)
{
    route_job rj;
    krb5_error_code ret = begin(call, key, &rj);

    if (ret == 0)
        ret = end(call, &rj, rj.family != NULL
                                 ? rj.family->decrypt(&rj.job, usage, cipher_state, input, output)
                                 : unserved(&rj, "decrypt"));
    return decrypt_done(usage, ret);
}

/* A call that no job serves for a protected key: the handle is verified as for any other
 * call, then refused with the reason its family gives (usage: the call's, or 0). */
static krb5_error_code
refuse_call(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
            enum router_refused what, const char *name)
{
    route_job rj;
    krb5_error_code ret = begin(call, key, &rj);

    if (ret)
        return ret;
    return end(call, &rj, rj.family != NULL ? rj.family->refuse(&rj.job, what, usage)
                                            : unserved(&rj, name));
}

krb5_error_code
route_encrypt_iov(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
                  const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    (void)cipher_state;
    (void)data;
    (void)num_data;
    return refuse_call(call, key, usage, ROUTER_REFUSED_ENCRYPT_IOV, "encrypt_iov");
}

krb5_error_code
route_decrypt_iov(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
                  const krb5_data *cipher_state, krb5_crypto_iov *data, size_t num_data)
{
    (void)cipher_state;
    (void)data;
    (void)num_data;
    return refuse_call(call, key, usage, ROUTER_REFUSED_DECRYPT_IOV, "decrypt_iov");
}

/* ---- checksums ---------------------------------------------------------------------- */

krb5_error_code
route_make_checksum(const route_call *call, const krb5_keyblock *key, krb5_cksumtype cksumtype,
                    krb5_keyusage usage, const krb5_data *input, krb5_checksum *cksum)
{
    route_job rj;
    krb5_error_code ret;

    if (cksum != NULL) {
        cksum->length = 0;
        cksum->contents = NULL;
    }
    ret = begin(call, key, &rj);
    if (ret)
        return ret;
    return end(call, &rj,
               rj.family != NULL
                   ? rj.family->make_checksum(&rj.job, cksumtype, usage, input, cksum)
                   : unserved(&rj, "make_checksum"));
}

krb5_error_code
route_verify_checksum(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
                      const krb5_data *data, const krb5_checksum *cksum, krb5_boolean *valid)
{
    route_job rj;
    krb5_error_code ret;

    if (valid != NULL)
        *valid = FALSE;
    ret = begin(call, key, &rj);
    if (ret)
        return ret;
    return end(call, &rj,
               rj.family != NULL
                   ? rj.family->verify_checksum(&rj.job, usage, data, cksum, valid)
                   : unserved(&rj, "verify_checksum"));
}

krb5_error_code
route_make_checksum_iov(const route_call *call, const krb5_keyblock *key,
                        krb5_cksumtype cksumtype, krb5_keyusage usage, krb5_crypto_iov *data,
                        size_t num_data)
{
    route_job rj;
    krb5_error_code ret = begin(call, key, &rj);

    if (ret)
        return ret;
    return end(call, &rj,
               rj.family != NULL
                   ? rj.family->make_checksum_iov(&rj.job, cksumtype, usage, data, num_data)
                   : unserved(&rj, "make_checksum_iov"));
}

krb5_error_code
route_verify_checksum_iov(const route_call *call, const krb5_keyblock *key,
                          krb5_cksumtype cksumtype, krb5_keyusage usage,
                          const krb5_crypto_iov *data, size_t num_data, krb5_boolean *valid)
{
    route_job rj;
    krb5_error_code ret;

    if (valid != NULL)
        *valid = FALSE;
    ret = begin(call, key, &rj);
    if (ret)
        return ret;
    return end(call, &rj,
               rj.family != NULL
                   ? rj.family->verify_checksum_iov(&rj.job, cksumtype, usage, data, num_data,
                                                    valid)
                   : unserved(&rj, "verify_checksum_iov"));
}

/* ---- PRF, cipher state: no job opens a protected key's PRF ------------------------- */

krb5_error_code
route_prf(const route_call *call, const krb5_keyblock *key, krb5_data *input,
          krb5_data *output)
{
    (void)input;
    (void)output;
    return refuse_call(call, key, 0, ROUTER_REFUSED_PRF, "prf");
}

krb5_error_code
route_prfplus(const route_call *call, const krb5_keyblock *key, const krb5_data *input,
              krb5_data *output)
{
    (void)input;
    (void)output;
    return refuse_call(call, key, 0, ROUTER_REFUSED_PRFPLUS, "prfplus");
}

krb5_error_code
route_derive_prfplus(const route_call *call, const krb5_keyblock *key, const krb5_data *input,
                     krb5_enctype enctype, krb5_keyblock **out)
{
    (void)input;
    (void)enctype;
    if (out != NULL)
        *out = NULL;
    return refuse_call(call, key, 0, ROUTER_REFUSED_DERIVE_PRFPLUS, "derive_prfplus");
}

krb5_error_code
route_init_state(const route_call *call, const krb5_keyblock *key, krb5_keyusage usage,
                 krb5_data *new_state)
{
    route_job rj;
    krb5_error_code ret = begin(call, key, &rj);

    if (ret)
        return ret;
    return end(call, &rj, rj.family != NULL ? rj.family->init_state(&rj.job, usage, new_state)
                                            : unserved(&rj, "init_state"));
}

krb5_error_code
route_free_state(const route_call *call, const krb5_keyblock *key, krb5_data *state)
{
    const struct router_originals *libk5crypto = router_originals();
    krb5_keyblock stripped;

    memset(&stripped, 0, sizeof(stripped));
    stripped.magic = key->magic;
    stripped.enctype = key->enctype;
    router_trace(call->fn, call->caller, "container", &stripped, NULL);
    if (key->enctype == MPC_KDC_ENCTYPE_AES256_GCM) {
        /* libk5crypto knows no such enctype; the GCM jobs' states are plain data. */
        if (state != NULL) {
            free(state->data);
            state->data = NULL;
            state->length = 0;
        }
        return 0;
    }
    return libk5crypto->krb5_c_free_state(call->ctx, &stripped, state);
}

krb5_error_code
route_create_key(const route_call *call, const krb5_keyblock *key, krb5_key *out)
{
    router_trace(call->fn, call->caller, "container", key, NULL);
    return router_originals()->krb5_k_create_key(call->ctx, key, out);
}

/* ---- KRB-FX-CF2 --------------------------------------------------------------------- */

/* Wraps a combined key (the description of a KRB-FX-CF2 with a protected key) in an
 * authenticated combined handle of the combined key's enctype. */
static krb5_error_code
combined_keyblock(const route_call *call, const mpc_kdb_key_id *combined, krb5_keyblock **out)
{
    krb5_keyblock *kb;
    krb5_error_code ret;

    kb = calloc(1, sizeof(*kb));
    if (kb == NULL || (kb->contents = malloc(MPC_KDB_COMBINED_HANDLE_LEN)) == NULL) {
        ret = router_refuse(call->ctx, call->fn, ENOMEM, "out of memory");
        goto cleanup;
    }
    if (route_state_encode_combined(combined, kb->contents) != 0) {
        ret = router_refuse(call->ctx, call->fn, KRB5_CRYPTO_INTERNAL,
                            "cannot make the combined key's handle");
        goto cleanup;
    }
    kb->magic = KV5M_KEYBLOCK;
    kb->enctype = combined->combine.enctype;
    kb->length = MPC_KDB_COMBINED_HANDLE_LEN;
    *out = kb;
    kb = NULL;
    ret = 0;

cleanup:
    if (kb != NULL) {
        free(kb->contents);
        free(kb);
    }
    return ret;
}

krb5_error_code
route_cf2(const route_call *call, const krb5_keyblock *k1, const char *pepper1,
          const krb5_keyblock *k2, const char *pepper2, krb5_keyblock **out)
{
    mpc_kdb_key_id id1, id2, combined;
    route_engine engine;
    router_key rk1 = { NULL, k1 }, rk2 = { NULL, k2 };
    krb5_error_code ret = 0;
    WHY_DECL;

    memset(&combined, 0, sizeof(combined));
    if (out == NULL) {
        ret = router_refuse(call->ctx, call->fn, EINVAL, "no output");
        goto cleanup;
    }
    *out = NULL;
    if (route_is_candidate(k1)) {
        ret = verify(call, k1, &id1, &engine);
        if (ret)
            goto cleanup;
        rk1.id = &id1;
        rk1.clear = NULL;
    }
    if (route_is_candidate(k2)) {
        ret = verify(call, k2, &id2, &engine);
        if (ret)
            goto cleanup;
        rk2.id = &id2;
        rk2.clear = NULL;
    }
    /* Handles of the standard enctypes (a user's key in FAST encrypted challenge) with
     * clear keys; the krbtgt key never takes part in a cf2. */
    if ((rk1.id == NULL || router_family_of(rk1.id) == &router_krb_family) &&
        (rk2.id == NULL || router_family_of(rk2.id) == &router_krb_family))
        ret = router_krb_cf2(&rk1, pepper1, &rk2, pepper2, &combined, why, sizeof(why));
    else if (rk1.id != NULL && router_family_of(rk1.id) == NULL)
        ret = refuse_enctype("fx_cf2_simple", rk1.id, why, sizeof(why));
    else if (rk2.id != NULL && router_family_of(rk2.id) == NULL)
        ret = refuse_enctype("fx_cf2_simple", rk2.id, why, sizeof(why));
    else {
        router_job job = { .key = rk1.id != NULL ? rk1.id : rk2.id, .why = why,
                           .why_len = sizeof(why) };
        /* One of the two is the protected krbtgt key. */
        ret = router_gcm_family.refuse(&job, ROUTER_REFUSED_CF2, 0);
    }
    if (ret == 0)
        ret = combined_keyblock(call, &combined, out);
    else
        ret = job_done(call, ret, why);

cleanup:
    OPENSSL_cleanse(&combined, sizeof(combined));
    return ret;
}
