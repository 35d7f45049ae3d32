/* kdc-plugin/router/router_config.h - the crypto router's configuration: the file named by
 * MPC_ROUTER_CONFIG and the handle key it names.
 *
 * The keys of the file are listed in the banner of router_config.c and in
 * kdc-plugin/README.md ("Configuration").
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_CONFIG_H
#define MPC_ROUTER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "engine_conn.h"
#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROUTER_DEFAULT_CONFIG "/etc/mpc-kdc/router.conf"

typedef struct router_config {
    uint8_t handle_key[MPC_KDB_HANDLE_KEY_LEN];  /* secret: router_config_free wipes it */
    char *engine_config;                         /* the engine cluster configuration's path */
    char *metrics_file;                          /* metrics_file, or NULL */
    router_engine_options options;               /* the optional keys given; 0 for the others */
} router_config;

/* Reads the file named by MPC_ROUTER_CONFIG (ROUTER_DEFAULT_CONFIG when unset or empty) and
 * the handle key file it names into *out. Returns 0, or -1 with *out cleared and why saying
 * what is wrong. The caller frees a loaded configuration with router_config_free(). */
int router_config_load(router_config *out, char *why, size_t why_len);

/* Wipes the handle key and frees what *cfg holds (it stays cleared); NULL is ignored. */
void router_config_free(router_config *cfg);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_CONFIG_H */
