/* kdc-plugin/router/router_log.h - what the crypto router tells the operator: its log
 * (stderr and syslog), the refusals it counts, and the call trace for tests.
 *
 * Reads the environment variable MPC_ROUTER_TRACE (tests and diagnosis only): when set to a
 * path, one line per intercepted call that takes a key is appended there: pid, function,
 * the object that called it (dladdr of the return address), the route taken (real | handle
 * | container | refused), and per key its enctype, length and an 8-byte fingerprint, never
 * its bytes: for a handle candidate the first 8 bytes of SHA-256 of it (a handle is a
 * reference, and tests recognise the handles they expect by it), for any other key the
 * first 8 bytes of HMAC-SHA256 under a random key drawn when the trace is opened and never
 * written (an unkeyed hash of a key derived from a password would let a reader of the trace
 * test password guesses).
 *
 * Version boundary: internal to mpc_crypto_router.so.
 */
#ifndef MPC_ROUTER_LOG_H
#define MPC_ROUTER_LOG_H

#include <krb5/krb5.h>

#include "originals.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest line the router writes to its log or hands to krb5_set_error_message. */
#define ROUTER_MSG_LEN 512

/* Once per process image, before any other call here: opens the trace named by
 * MPC_ROUTER_TRACE (a krb5kdc -w worker forked later shares it and its fingerprint key, so
 * one key has one fingerprint across the process tree), and arranges for a forked child to
 * count its refusals afresh. */
void router_log_init(void);

/* Writes "mpc_crypto_router: MESSAGE" to syslog (LOG_DAEMON) and
 * "mpc_crypto_router[PID]: MESSAGE" to stderr. */
void router_log(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One trace line for a call of fn from caller (a return address) that took the route
 * "real", "handle", "container" or "refused" with the key k1 and, for a KRB-FX-CF2, k2 (each
 * may be NULL). Nothing when no trace is open. */
void router_trace(enum router_fn fn, const void *caller, const char *route,
                  const krb5_keyblock *k1, const krb5_keyblock *k2);

/* Refuses a call of fn: sets "mpc_crypto_router: FUNCTION: why" on ctx (when there is one),
 * counts the refusal and logs the first one of the process and the first one of each
 * function (a user's key refused in an entry point, or for a usage, the engine does not
 * serve leaves a line naming them even after an earlier refusal elsewhere; one line per
 * function bounds the log). Returns code. */
krb5_error_code router_refuse(krb5_context ctx, enum router_fn fn, krb5_error_code code,
                              const char *why);

#ifdef __cplusplus
}
#endif

#endif /* MPC_ROUTER_LOG_H */
