/* mpc-engine/client/mpc_client.h - C interface of the engine client library.
 *
 * For the KDC plugin and any C program. A handle talks to one cluster, described
 * by a cluster configuration file (see config/cluster.example.toml). Calls on one
 * handle are serialised internally; a handle may be used after fork(): the child
 * opens its own connections on first use and leaves the parent's alone.
 *
 * Every function returns MPC_OK (0) or a negative MPC_E* code; the message of the
 * last failure on a handle is returned by mpc_client_last_error().
 *
 * Version boundary: functions below exist since interface version 1.
 */
#ifndef MPC_CLIENT_H
#define MPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPC_CLIENT_INTERFACE_VERSION 1

enum mpc_status {
  MPC_OK = 0,
  MPC_EINVAL = -1,        /* bad argument */
  MPC_ECONFIG = -2,       /* configuration or key file unusable */
  MPC_EUNREACHABLE = -3,  /* a server could not be reached or did not answer in time */
  MPC_EREFUSED = -4,      /* a server answered with an error (unknown key, too large, ...) */
  MPC_EMISMATCH = -5,     /* the servers' output shares disagree: result refused */
  MPC_EINTERNAL = -6
};

enum mpc_key_algorithm { MPC_AES128 = 1, MPC_AES256 = 2 };

typedef struct mpc_client mpc_client;

/* Opens a handle for the cluster described by config_path. On success *out owns a
 * handle the caller frees with mpc_client_close(); on failure *out is NULL and, if
 * error_buffer is not NULL, a message is written there (NUL-terminated, truncated). */
int mpc_client_open(const char *config_path, mpc_client **out, char *error_buffer, size_t error_buffer_size);

/* Sets how long each later call on this handle may take, all servers together
 * (1..600000 ms); the cluster configuration's timeout_ms applies until then. */
int mpc_client_set_timeout(mpc_client *client, uint32_t milliseconds);

/* Frees the handle; NULL is ignored. */
void mpc_client_close(mpc_client *client);

/* Message of the last failed call on this handle; owned by the handle, valid until the
 * next call on it. Never NULL. */
const char *mpc_client_last_error(const mpc_client *client);

/* out (blocks * 16 bytes, caller-owned) = AES_k(counter + i), i = 0..blocks-1, with the
 * 16-byte counter a big-endian integer as in OpenSSL's CTR mode. */
int mpc_client_keystream(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                         const uint8_t counter[16], uint32_t blocks, uint8_t *out);

/* out (length bytes, caller-owned, may not overlap in) = AES_k / AES_k^-1 of each
 * 16-byte block of in; length must be a positive multiple of 16. */
int mpc_client_ecb_encrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           const uint8_t *in, size_t length, uint8_t *out);
int mpc_client_ecb_decrypt(mpc_client *client, const char *key_name, uint32_t key_version, int algorithm,
                           const uint8_t *in, size_t length, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* MPC_CLIENT_H */
