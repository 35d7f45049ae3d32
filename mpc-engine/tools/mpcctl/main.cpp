// mpcctl: administration and checks for the mpc-kdc engine.
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tools/mpcctl/commands.hpp"

namespace {

constexpr const char* kUsage = R"(usage: mpcctl COMMAND ...

Keys for links and storage:
  keygen --out PREFIX                      CurveZMQ key pair: PREFIX.key (0600) and PREFIX.pub
  storage-keygen --out FILE                per-server storage key (0600)

Keys in the engine (--cluster FILE: a cluster configuration with an admin key):
  key import --cluster F --name N --kvno V --alg A [--key-file F]
                                           A: aes128, aes256, aes256-gcm, aes128-cts-hmac-sha1-96,
                                           aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128 or
                                           aes256-cts-hmac-sha384-192; the key as hex from the file or
                                           stdin, never written to disk (aes256-gcm: a 32-byte key for the
                                           gcm-* jobs only; *-cts-hmac-sha*: the Kerberos protocol key, for
                                           the krb jobs only, stored as its derived keys)
  key generate --cluster F --name N --kvno V --alg aes256-gcm
                                           the three servers make the key among themselves and store
                                           their shares: no host ever holds it (three-server clusters)
  key list --cluster F [--prefix P]
  key delete --cluster F --name N --kvno V --alg A

Computations (print hex, to compare with `openssl enc`):
  aes keystream --cluster F --name N --kvno V --alg A --counter HEX32 --blocks N
  aes ecb-encrypt|ecb-decrypt --cluster F --name N --kvno V --alg A --in HEX
                                           (A: aes128 or aes256)
  aes gcm-prefetch --cluster F --name N --kvno V [--count C] [--blocks-per-nonce B]
                                           C (1) fresh nonces of an aes256-gcm key, one line each:
                                           the nonce, then B keystream blocks AES_K(N || j + 2)
  aes gcm-tag --cluster F --name N --kvno V --nonce HEX24 [--aad HEX] [--in HEX]
                                           tag of ciphertext --in under a prefetched nonce (uses it up)
  aes gcm-open --cluster F --name N --kvno V --nonce HEX24 [--aad HEX] [--in HEX] --tag HEX32
                                           plaintext of ciphertext --in; exit status 2 if the tag is wrong

Kerberos enctype jobs (RFC 3962, RFC 8009) of a Kerberos key, hex on one line, as libk5crypto
computes them (U: key usage: 2 or 3 to encrypt, 1 or 2 to decrypt, 17 or 56 to checksum):
  krb encrypt --cluster F --name N --kvno V --alg A --usage U [--confounder HEX32] [--in HEX]
                                           confounder random unless given; prints the ciphertext with its MAC
  krb decrypt --cluster F --name N --kvno V --alg A --usage U --in HEX
                                           plaintext; exit status 2 if the integrity check fails
  krb checksum --cluster F --name N --kvno V --alg A --usage U [--in HEX]
                                           the enctype's HMAC under Kc
  ... [--combine-alg A1 --pepper P --mask HEX]
                                           any of the three under KRB-FX-CF2(K1, pepper1, key, P)
                                           (krb5_c_fx_cf2_simple), the mask being PRF+(K1, pepper1)
                                           of an A1 key's length: FAST's uses only (P
                                           "challengelongterm": decrypt 54, encrypt 55;
                                           "replykey": encrypt 3, checksum 56)

A local cluster for development (three servers, or two with gc2 and lut2):
  cluster init --dir D [--host 127.0.0.1] [--base-port 7100] [--protocol rss3|gc2|lut2]
               [--lut-preprocessing ot|dealer]  (lut2: OT between the servers, or a dealer process)
               [--security active|passive]      (rss3, gc2: what one deviating server meets; default active)
               [--data-links on|off]            (rss3: batch layer messages over AES-256-GCM data links
                                                 on ports base+21..23, or over CurveZMQ; default on)
               [--ticket-key-import refuse|allow] (rss3: whether aes256-gcm keys of a known value
                                                 may be imported beside generated ones; default refuse)
  cluster start --dir D [--server-binary PATH] [--dealer-binary PATH]
  cluster stop --dir D
  cluster status --cluster F
  cluster exclude N --cluster F --reason TEXT  (a three-server cluster's server N stops serving; the
                                             other two serve as a pair, actively secure, until
                                             `cluster readmit N`, restarts included; keys cannot
                                             change meanwhile)
  cluster readmit N --cluster F

Protected KDC keys (on the KDC host, with the database and its stash; the realm's profile
from KRB5_CONFIG and KRB5_KDC_PROFILE, the default realm unless --realm R or -r R):
  kdc protect PRINCIPAL --cluster F [--realm R] [--force]
                                           krbtgt/R's kvno onto an AES-256-GCM ticket key the three
                                           servers generate (no host ever holds it; two servers: one
                                           derived from the old key); the database keeps a marker only
                                           (--force: a principal other than krbtgt/R)
  kdc protect --principal P [--principal Q ...] | --all-users [--realm R]
                                           users' AES keys (RFC 3962, RFC 8009) into the engine
                                           (enrolled by the KDB module with its mpc_cluster_config); the
                                           database keeps markers; --all-users: all but krbtgt/*, K/M,
                                           kadmin/*, kiprop/* and those already protected
  kdc unprotect P --randkey | --password [--realm R]
                                           emergency: new keys for P, engine keys deleted; the old key
                                           cannot be restored (it never existed in one place)
  kdc rotate PRINCIPAL --cluster F [--realm R] [--retire-now]
                                           a new ticket key at kvno + 1 (generated by three servers, as
                                           protect makes it); older kvnos are retired
                                           once no ticket under them can be valid (--retire-now: at once)
  kdc status [--cluster F] [--realm R]     protected principals, marker kvnos, engine keys;
                                           exit status 3 if anything is inconsistent
  kdc metrics --file F [--out PATH]        the crypto router's counters (router.conf metrics_file)
                                           as Prometheus text, or written whole to PATH

Circuits:
  circuit list
  circuit stats NAME | --bristol FILE       gates, AND gates, AND-depth
  circuit write NAME --out FILE             Bristol Fashion export
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> words(argv + 2, argv + argc);
  try {
    if (command == "keygen") return mpc::tools::run_keygen_command(words);
    if (command == "storage-keygen") return mpc::tools::run_storage_keygen_command(words);
    if (command == "key") return mpc::tools::run_key_command(words);
    if (command == "aes") return mpc::tools::run_aes_command(words);
    if (command == "cluster") return mpc::tools::run_cluster_command(words);
    if (command == "circuit") return mpc::tools::run_circuit_command(words);
    if (command == "krb") return mpc::tools::run_krb_command(words);
    if (command == "kdc") return mpc::tools::run_kdc_command(words);
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "mpcctl: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "mpcctl: " << error.what() << "\n";
    return 1;
  }
}
