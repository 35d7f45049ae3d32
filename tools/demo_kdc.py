#!/usr/bin/env python3
"""The KDC half of `make demo`: a realm on loopback whose krbtgt key and one user's keys are
protected by the running three-server cluster, driven with the stock Debian MIT clients.

    /usr/bin/python3 tools/demo_kdc.py BUILD_DIR CLUSTER_DIR

Creates CLUSTER_DIR/realm (a db2 database behind mpc_kdb.so, with mpc_cluster_config set so
that users' keys can be enrolled), enrolls the krbtgt key with `mpcctl kdc protect`, protects
the user alice with `mpcctl kdc protect --principal`, starts krb5kdc -w 2 with
mpc_crypto_router.so preloaded, then runs kinit with alice's password, klist -e, kvno,
kinit -R, a wrong password, kinit -T (FAST) and a short login storm of an unprotected
principal, printing what happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

ALICE_PASSWORD = "alice-demo-pw"


def command_line(args) -> str:
    # The build directory's binaries by name: the path adds nothing to the story. Commands
    # run in the realm's directory, so relative cache and keytab names are shown as given.
    words = [str(a) for a in args]
    if words and "/" in words[0]:
        words[0] = Path(words[0]).name
    return " ".join(words)


def show(title: str, result, expect_failure: bool = False) -> None:
    print(f"\n== {title}")
    print("   $ " + command_line(result.args))
    for line in (result.stdout + result.stderr).rstrip().splitlines():
        print("   " + line)
    if (result.returncode != 0) != expect_failure:
        raise SystemExit(f"demo failed at: {title}"
                         + (" (it should have been refused)" if expect_failure else ""))


def prefer_tcp(realm) -> None:
    # A protected user's AS exchange takes longer than the second after which MIT clients
    # resend a UDP request; another krb5kdc worker would then compute it again.
    text = realm.krb5_conf.read_text()
    realm.krb5_conf.write_text(text.replace("[libdefaults]\n", "[libdefaults]\n    udp_preference_limit = 1\n", 1))


def timed(run):
    started = time.monotonic()
    result = run()
    return result, (time.monotonic() - started) * 1000


def main() -> None:
    build = (REPO / sys.argv[1]).resolve()
    cluster_dir = Path(sys.argv[2]).resolve()
    os.environ["MPC_BUILD_DIR"] = str(build)
    from mpctest import mpc_cluster
    from mpctest.protected_kdc import ProtectedRealm
    from mpctest import ccache_tickets

    cluster = mpc_cluster.Cluster(cluster_dir)
    realm = ProtectedRealm(cluster_dir / "realm", cluster, enrol_users=True, realm="DEMO.MPC")
    alice = realm.principal("alice")
    prefer_tcp(realm)
    try:
        print("\n== 4. A realm on loopback (database behind mpc_kdb.so over db2; mpc_cluster_config"
              " names the cluster, so users' keys can be enrolled)")
        realm.create()
        realm.kadmin_local(f"modprinc -maxrenewlife 7d {realm.tgs}", check=True)
        realm.addprinc("alice", password=ALICE_PASSWORD, options="-maxrenewlife 7d +requires_preauth")
        realm.addprinc("host/demo.test")
        realm.addprinc("storm", options="+requires_preauth")
        realm.ktadd(["storm"], realm.root / "storm.keytab")
        print(f"   realm {realm.realm}, KDC on 127.0.0.1:{realm.kdc_port} (clients use TCP: "
              "udp_preference_limit = 1); alice has a password, storm a keytab")

        show("5. Protect the krbtgt key: shares to the three servers, a marker in the database",
             realm.protect())
        show("   What the database now holds for krbtgt (admin view)", realm.getprinc(realm.tgs))

        show("6. Protect alice: her aes256/aes128 keys go to the engine, markers stay in the database",
             realm.mpcctl_kdc("protect", "--principal", alice))
        show("   What the database now holds for alice (admin view: enctype, kvno, salt, no key)",
             realm.getprinc(alice))
        show("7. mpcctl kdc status (krbtgt and alice, each key checked on the three servers)",
             realm.mpcctl_kdc("status", "--cluster", str(cluster.admin_config)))

        realm.start_kdc(workers=2)
        print("\n== 8. krb5kdc -w 2 running with LD_PRELOAD=mpc_crypto_router.so")

        result, took = timed(lambda: realm.run(["kinit", "-r", "2d", alice], input=f"{ALICE_PASSWORD}\n"))
        show(f"9. kinit alice with her password (renewable): the engine decrypts her timestamp, encrypts"
             f" the AS reply and checksums the request (key usages 1, 3, 56); took {took:.0f} ms", result)
        again_cache = "FILE:again.cc"
        result, took = timed(lambda: realm.run(["kinit", "-c", again_cache, alice], input=f"{ALICE_PASSWORD}\n"))
        show(f"   kinit alice once more, warm (the first login also opened engine connections and had the"
             f" servers build the circuits); took {took:.0f} ms", result)
        show("10. klist -e (her session key is standard aes256; the TGT uses the KDC-private enctype,"
             " shown as a number)", realm.run(["klist", "-e"]))
        ticket = ccache_tickets.tgt(realm.ccache, realm.tgs)
        print(f"   TGT enc-part: enctype {ticket.etype}, kvno {ticket.kvno}, "
              f"{len(ticket.cipher)} bytes = 12 nonce + {len(ticket.cipher) - 28} ciphertext + 16 tag")
        show("11. kvno (a TGS exchange: the TGT is opened and checked by the engine)",
             realm.kvno("host/demo.test"))
        show("12. kinit -R (renewal: the TGT is opened and a new one sealed)", realm.run(["kinit", "-R"]))
        show("    klist after renewal", realm.run(["klist"]))

        wrong_cache = "FILE:wrong.cc"
        result, took = timed(lambda: realm.run(["kinit", "-c", wrong_cache, alice], input="not-her-password\n"))
        show(f"13. kinit alice with a wrong password: refused as by any KDC; took {took:.0f} ms", result,
             expect_failure=True)
        if "Password incorrect" not in result.stderr:
            raise SystemExit("demo failed: the wrong password was not refused with 'Password incorrect'")

        armor = "FILE:armor.cc"
        fast = "FILE:fast.cc"
        show("14. An armor ticket for FAST, from the unprotected storm keytab",
             realm.run(["kinit", "-c", armor, "-k", "-t", "storm.keytab", realm.principal("storm")]))
        result, took = timed(lambda: realm.run(["kinit", "-c", fast, "-T", armor, alice],
                                               input=f"{ALICE_PASSWORD}\n"))
        show(f"    kinit -T (FAST encrypted challenge: the challenges and the reply are under keys KRB-FX-CF2"
             f" makes from her key, computed inside each engine job, never in krb5kdc); took {took:.0f} ms",
             result)
        show("    klist of the FAST login", realm.run(["klist", "-c", fast]))

        load = build / "tests" / "load" / "kdc_load"
        storm = subprocess.run([str(load), "as", "--principal", realm.principal("storm"), "--keytab",
                                str(realm.root / "storm.keytab"), "--count", "400", "--threads", "4"],
                               env=realm.env, capture_output=True, text=True, timeout=300)
        print("\n== 15. A short login storm: 400 AS exchanges from 4 threads as storm, an unprotected"
              " principal with a keytab (its TGTs are still sealed by the engine)")
        summary = json.loads(storm.stdout)
        print(f"   {summary['exchanges']} logins, {summary['failures']} failures, "
              f"{summary['per_second']:.0f}/s, p50 {summary['p50_ms']:.2f} ms, p99 {summary['p99_ms']:.2f} ms")
        if summary["failures"]:
            raise SystemExit(f"demo failed: {summary['first_error']}")
        show("16. mpcctl kdc status", realm.mpcctl_kdc("status", "--cluster", str(cluster.admin_config)))
        print("\n== The KDC issued and accepted every ticket, and checked alice's password, without the"
              " krbtgt key or alice's keys: they exist only as shares on the three servers.")
    finally:
        realm.stop()


if __name__ == "__main__":
    main()
