/* kdc-plugin/router/route_state.c - the crypto router's per-process configuration, handle key
 * and engine (route_state.h).
 *
 * Reads the router configuration (router_config.h) and, through it, the handle key file and
 * the engine cluster configuration.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "route_state.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "router_config.h"
#include "router_log.h"

struct process_state {
    pid_t pid;                  /* the process this state belongs to; 0: none yet */
    int ready;                  /* configuration read, handle key loaded, engine open */
    char error[ROUTER_MSG_LEN]; /* why not ready */
    uint8_t handle_key[MPC_KDB_HANDLE_KEY_LEN];
    route_engine engine;
    checksum_chain chain;       /* engine.chain once ready */
};

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct process_state state;
static int exit_hook_registered;

static void
atfork_prepare(void)
{
    pthread_mutex_lock(&state_lock);
}

static void
atfork_parent(void)
{
    pthread_mutex_unlock(&state_lock);
}

static void
atfork_child(void)
{
    /* The child loads its own state on first use (state.pid no longer matches); the
     * parent's engine is left to the parent. */
    pthread_mutex_unlock(&state_lock);
}

void
route_state_init(void)
{
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* The engine's background reports (router_engine_options.log). */
static void
engine_log(int priority, const char *message)
{
    router_log(priority, "engine: %s", message);
}

/* Stops the nonce supply's thread, then closes the connection it uses (in a forked child
 * both are only abandoned). */
static void
close_engine(route_engine *engine)
{
    nonce_supply_destroy(engine->nonces);
    engine_conn_close(engine->conn);
    engine->nonces = NULL;
    engine->conn = NULL;
}

/* At exit, in the process whose engine it is: the engine's background thread is stopped
 * and joined before the engine client library's static objects are destroyed. Registered
 * after that library's own exit handlers (on the first engine open), so it runs before
 * them. */
static void
close_at_exit(void)
{
    route_engine engine = { NULL, NULL, NULL };

    if (pthread_mutex_trylock(&state_lock) != 0)
        return;
    if (state.pid == getpid() && state.engine.conn != NULL) {
        engine = state.engine;
        state.engine.conn = NULL;
        state.engine.nonces = NULL;
        state.engine.chain = NULL;
        state.ready = 0;
        snprintf(state.error, sizeof(state.error), "the process is exiting");
    }
    pthread_mutex_unlock(&state_lock);
    close_engine(&engine);
}

/* Loads configuration, handle key and engine for this process into state. Called with
 * state_lock held. */
static void
load_state(pid_t pid)
{
    router_config cfg;
    char why[ROUTER_MSG_LEN] = "";

    close_engine(&state.engine);
    OPENSSL_cleanse(&state, sizeof(state));
    state.pid = pid;
    if (router_config_load(&cfg, why, sizeof(why)) != 0)
        goto cleanup;
    memcpy(state.handle_key, cfg.handle_key, MPC_KDB_HANDLE_KEY_LEN);
    cfg.options.log = engine_log;
    cfg.options.metrics_file = cfg.metrics_file;
    if (engine_conn_open(cfg.engine_config, &cfg.options, &state.engine.conn, why,
                         sizeof(why)) != 0)
        goto cleanup;
    if (nonce_supply_create(state.engine.conn, &state.engine.nonces, why, sizeof(why)) != 0) {
        close_engine(&state.engine);
        goto cleanup;
    }
    state.engine.chain = &state.chain;
    if (!exit_hook_registered && atexit(close_at_exit) == 0)
        exit_hook_registered = 1;
    state.ready = 1;

cleanup:
    if (!state.ready) {
        OPENSSL_cleanse(state.handle_key, sizeof(state.handle_key));
        snprintf(state.error, sizeof(state.error), "configuration unusable, every protected "
                 "key is refused: %s", why);
        router_log(LOG_ERR, "%s", state.error);
    }
    router_config_free(&cfg);
}

int
route_state_verify(const krb5_keyblock *kb, mpc_kdb_key_id *id, route_engine *engine,
                   char *why, size_t why_len)
{
    enum mpc_kdb_handle_status status;
    pid_t pid = getpid();
    int ok = 0;

    memset(engine, 0, sizeof(*engine));
    memset(id, 0, sizeof(*id));
    pthread_mutex_lock(&state_lock);
    if (state.pid != pid)
        load_state(pid);
    if (!state.ready) {
        snprintf(why, why_len, "%s", state.error);
    } else {
        status = mpc_kdb_handle_verify(state.handle_key, kb->contents, kb->length, id);
        if (status != MPC_KDB_HANDLE_OK) {
            snprintf(why, why_len, "key handle refused: %s",
                     mpc_kdb_handle_status_string(status));
        } else {
            *engine = state.engine;
            ok = 1;
        }
    }
    pthread_mutex_unlock(&state_lock);
    return ok ? 0 : -1;
}

int
route_state_encode_combined(const mpc_kdb_key_id *combined,
                            uint8_t out[MPC_KDB_COMBINED_HANDLE_LEN])
{
    int encoded = -1;

    pthread_mutex_lock(&state_lock);
    if (state.ready)
        encoded = mpc_kdb_combined_handle_encode(state.handle_key, combined, out);
    pthread_mutex_unlock(&state_lock);
    return encoded;
}
