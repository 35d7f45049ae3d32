/* tests/integration/c_abi_client.c - drives libmpcclient through its C interface.
 *
 * usage: c_abi_client CONFIG NAME KVNO ALG COUNTER_HEX BLOCKS ECB_HEX
 *   ALG is 1 (AES-128) or 2 (AES-256). Prints, one per line:
 *     keystream HEX        blocks of keystream from COUNTER_HEX
 *     ecb-encrypt HEX      ECB_HEX encrypted
 *     ecb-decrypt HEX      that ciphertext decrypted again
 *     einval-ok N          N bad-argument calls returned MPC_EINVAL with a message
 *     einval-fail WHAT RC  a bad-argument call that did not (one line each)
 *     fork-child-ok        the child of fork() computed the same keystream with the parent's handle
 *     fork-parent-ok       the parent computed it again, during and after the child
 * Exits 0 when every computation succeeded (whatever the einval lines say), else 1
 * with the reason on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpc_client.h"

static int parse_hex(const char *text, uint8_t *out, size_t max, size_t *length)
{
    size_t n = strlen(text), i;
    if (n % 2 != 0 || n / 2 > max)
        return -1;
    for (i = 0; i < n / 2; i++) {
        unsigned int byte;
        if (sscanf(text + 2 * i, "%2x", &byte) != 1)
            return -1;
        out[i] = (uint8_t)byte;
    }
    *length = n / 2;
    return 0;
}

static void print_hex(const char *label, const uint8_t *data, size_t length)
{
    size_t i;
    printf("%s ", label);
    for (i = 0; i < length; i++)
        printf("%02x", data[i]);
    printf("\n");
}

static int einval_ok = 0;

static void expect_einval(const char *what, int rc, const mpc_client *client)
{
    if (rc == MPC_EINVAL && (client == NULL || mpc_client_last_error(client)[0] != '\0'))
        einval_ok++;
    else
        printf("einval-fail %s %d\n", what, rc);
}

static int bad_arguments(mpc_client *client, const char *name, uint32_t kvno, int alg)
{
    uint8_t counter[16] = {0};
    uint8_t buffer[64] = {0}, out[64];
    mpc_client *none = NULL;
    char message[128];

    expect_einval("timeout-zero", mpc_client_set_timeout(client, 0), client);
    expect_einval("timeout-too-long", mpc_client_set_timeout(client, 600001), client);
    expect_einval("open-null-path", mpc_client_open(NULL, &none, message, sizeof message), NULL);
    expect_einval("open-null-out", mpc_client_open("/nonexistent.toml", NULL, message, sizeof message), NULL);
    expect_einval("keystream-null-client", mpc_client_keystream(NULL, name, kvno, alg, counter, 1, out), NULL);
    expect_einval("keystream-null-name", mpc_client_keystream(client, NULL, kvno, alg, counter, 1, out), client);
    expect_einval("keystream-alg-0", mpc_client_keystream(client, name, kvno, 0, counter, 1, out), client);
    expect_einval("keystream-alg-3", mpc_client_keystream(client, name, kvno, 3, counter, 1, out), client);
    expect_einval("keystream-null-counter", mpc_client_keystream(client, name, kvno, alg, NULL, 1, out), client);
    expect_einval("keystream-zero-blocks", mpc_client_keystream(client, name, kvno, alg, counter, 0, out), client);
    expect_einval("keystream-null-out", mpc_client_keystream(client, name, kvno, alg, counter, 1, NULL), client);
    expect_einval("keystream-too-many-blocks",
                  mpc_client_keystream(client, name, kvno, alg, counter, (1u << 22) + 1, out), client);
    expect_einval("keystream-empty-name", mpc_client_keystream(client, "", kvno, alg, counter, 1, out), client);
    expect_einval("keystream-name-with-space",
                  mpc_client_keystream(client, "bad name", kvno, alg, counter, 1, out), client);
    expect_einval("ecb-null-client", mpc_client_ecb_encrypt(NULL, name, kvno, alg, buffer, 16, out), NULL);
    expect_einval("ecb-null-name", mpc_client_ecb_encrypt(client, NULL, kvno, alg, buffer, 16, out), client);
    expect_einval("ecb-alg-7", mpc_client_ecb_encrypt(client, name, kvno, 7, buffer, 16, out), client);
    expect_einval("ecb-null-in", mpc_client_ecb_encrypt(client, name, kvno, alg, NULL, 16, out), client);
    expect_einval("ecb-null-out", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 16, NULL), client);
    expect_einval("ecb-zero-length", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 0, out), client);
    expect_einval("ecb-length-15", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 15, out), client);
    expect_einval("ecb-length-17", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 17, out), client);
    expect_einval("ecb-overlap", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 32, buffer + 16), client);
    expect_einval("ecb-in-place", mpc_client_ecb_encrypt(client, name, kvno, alg, buffer, 32, buffer), client);
    expect_einval("ecb-decrypt-length-20", mpc_client_ecb_decrypt(client, name, kvno, alg, buffer, 20, out), client);
    expect_einval("ecb-decrypt-null-in", mpc_client_ecb_decrypt(client, name, kvno, alg, NULL, 16, out), client);
    expect_einval("ecb-decrypt-empty-name", mpc_client_ecb_decrypt(client, "", kvno, alg, buffer, 16, out), client);
    /* The Kerberos calls refuse the plain AES algorithms, bad usages and short input. */
    expect_einval("krb-encrypt-plain-alg",
                  mpc_client_krb_encrypt(client, name, kvno, alg, 2, counter, buffer, 16, out), client);
    expect_einval("krb-encrypt-usage-4", mpc_client_krb_encrypt(client, name, kvno, MPC_AES256_CTS_HMAC_SHA1_96, 4,
                                                                counter, buffer, 16, out), client);
    expect_einval("krb-decrypt-short", mpc_client_krb_decrypt(client, name, kvno, MPC_AES128_CTS_HMAC_SHA1_96, 2,
                                                              buffer, 27, out), client);
    expect_einval("krb-checksum-null-out", mpc_client_krb_checksum(client, name, kvno, MPC_AES128_CTS_HMAC_SHA1_96,
                                                                   17, buffer, 16, NULL), client);
    expect_einval("krb-cf2-null-combine",
                  mpc_client_krb_cf2_checksum(client, name, kvno, MPC_AES128_CTS_HMAC_SHA1_96, NULL, 56, buffer, 16,
                                              out), client);
    expect_einval("import-wrong-length", mpc_client_import_key(client, name, kvno, alg, buffer, 15), client);
    printf("einval-ok %d\n", einval_ok);

    /* Other documented behaviour of the handle functions. */
    if (mpc_client_last_error(NULL) == NULL) {
        fprintf(stderr, "mpc_client_last_error(NULL) returned NULL\n");
        return -1;
    }
    mpc_client_close(NULL);
    none = (mpc_client *)1;
    message[0] = '\0';
    if (mpc_client_open("/nonexistent/cluster.toml", &none, message, sizeof message) != MPC_ECONFIG ||
        none != NULL || message[0] == '\0') {
        fprintf(stderr, "opening a missing configuration did not fail with MPC_ECONFIG and a message\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    mpc_client *client = NULL;
    char message[512] = "";
    uint8_t counter[16], ecb_in[4096], ecb_out[4096], ecb_back[4096];
    uint8_t *stream, *again, *child_stream;
    size_t counter_length = 0, ecb_length = 0;
    uint32_t kvno, blocks;
    int alg, rc, status;
    pid_t child;

    if (argc != 8) {
        fprintf(stderr, "usage: c_abi_client CONFIG NAME KVNO ALG COUNTER_HEX BLOCKS ECB_HEX\n");
        return 2;
    }
    kvno = (uint32_t)strtoul(argv[3], NULL, 10);
    alg = atoi(argv[4]);
    blocks = (uint32_t)strtoul(argv[6], NULL, 10);
    if (parse_hex(argv[5], counter, sizeof counter, &counter_length) != 0 || counter_length != 16 ||
        parse_hex(argv[7], ecb_in, sizeof ecb_in, &ecb_length) != 0 || blocks == 0) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    stream = malloc((size_t)blocks * 16);
    again = malloc((size_t)blocks * 16);
    child_stream = malloc((size_t)blocks * 16);
    if (stream == NULL || again == NULL || child_stream == NULL)
        return 1;

    rc = mpc_client_open(argv[1], &client, message, sizeof message);
    if (rc != MPC_OK) {
        fprintf(stderr, "mpc_client_open: %d %s\n", rc, message);
        return 1;
    }
    rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, stream);
    if (rc != MPC_OK) {
        fprintf(stderr, "keystream: %d %s\n", rc, mpc_client_last_error(client));
        return 1;
    }
    print_hex("keystream", stream, (size_t)blocks * 16);
    rc = mpc_client_ecb_encrypt(client, argv[2], kvno, alg, ecb_in, ecb_length, ecb_out);
    if (rc != MPC_OK) {
        fprintf(stderr, "ecb-encrypt: %d %s\n", rc, mpc_client_last_error(client));
        return 1;
    }
    print_hex("ecb-encrypt", ecb_out, ecb_length);
    rc = mpc_client_ecb_decrypt(client, argv[2], kvno, alg, ecb_out, ecb_length, ecb_back);
    if (rc != MPC_OK) {
        fprintf(stderr, "ecb-decrypt: %d %s\n", rc, mpc_client_last_error(client));
        return 1;
    }
    print_hex("ecb-decrypt", ecb_back, ecb_length);

    if (bad_arguments(client, argv[2], kvno, alg) != 0)
        return 1;
    /* A bad call leaves the handle usable. */
    rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, again);
    if (rc != MPC_OK || memcmp(again, stream, (size_t)blocks * 16) != 0) {
        fprintf(stderr, "keystream after bad calls: %d %s\n", rc, mpc_client_last_error(client));
        return 1;
    }

    /* A per-handle timeout bounds a call: a large job under a 1 ms limit fails fast as
     * unreachable, and the handle works again once the limit is raised. */
    {
        const uint32_t big = 20000;
        uint8_t *big_out = malloc((size_t)big * 16);
        struct timespec start, end;
        double elapsed;
        if (big_out == NULL || mpc_client_set_timeout(client, 1) != MPC_OK)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &start);
        rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, big, big_out);
        clock_gettime(CLOCK_MONOTONIC, &end);
        elapsed = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
        free(big_out);
        if (rc == MPC_EUNREACHABLE && elapsed < 0.5)
            printf("timeout-ok %.3f\n", elapsed);
        else
            printf("timeout-fail %d %.3f %s\n", rc, elapsed, mpc_client_last_error(client));
        if (mpc_client_set_timeout(client, 5000) != MPC_OK)
            return 1;
        usleep(300000); /* let the servers finish the abandoned job */
        rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, again);
        if (rc != MPC_OK || memcmp(again, stream, (size_t)blocks * 16) != 0) {
            fprintf(stderr, "keystream after a timeout: %d %s\n", rc, mpc_client_last_error(client));
            return 1;
        }
    }

    fflush(stdout);
    child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        alarm(20);
        rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, child_stream);
        if (rc != MPC_OK) {
            fprintf(stderr, "child keystream: %d %s\n", rc, mpc_client_last_error(client));
            _exit(3);
        }
        if (memcmp(child_stream, stream, (size_t)blocks * 16) != 0) {
            fprintf(stderr, "child keystream differs from the parent's\n");
            _exit(4);
        }
        printf("fork-child-ok\n");
        fflush(stdout);
        mpc_client_close(client); /* must not disturb the parent's connections */
        exit(0);
    }
    /* The parent keeps working while the child computes, and after it is gone. */
    rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, again);
    if (rc != MPC_OK || memcmp(again, stream, (size_t)blocks * 16) != 0) {
        fprintf(stderr, "parent keystream during the child: %d %s\n", rc, mpc_client_last_error(client));
        kill(child, 9);
        waitpid(child, NULL, 0);
        return 1;
    }
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child failed (status %d)\n", status);
        return 1;
    }
    memset(again, 0, (size_t)blocks * 16);
    rc = mpc_client_keystream(client, argv[2], kvno, alg, counter, blocks, again);
    if (rc != MPC_OK || memcmp(again, stream, (size_t)blocks * 16) != 0) {
        fprintf(stderr, "parent keystream after the child: %d %s\n", rc, mpc_client_last_error(client));
        return 1;
    }
    printf("fork-parent-ok\n");
    mpc_client_close(client);
    free(stream);
    free(again);
    free(child_stream);
    return 0;
}
