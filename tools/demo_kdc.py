#!/usr/bin/env python3
"""The KDC half of `make demo`: a realm on loopback whose krbtgt key is protected by the
running three-server cluster, driven with the stock Debian MIT clients.

    /usr/bin/python3 tools/demo_kdc.py BUILD_DIR CLUSTER_DIR

Creates CLUSTER_DIR/realm (a db2 database behind mpc_kdb.so), enrolls the krbtgt key with
`mpcctl kdc protect`, starts krb5kdc -w 2 with mpc_crypto_router.so preloaded, then runs
kinit, klist -e, kvno, kinit -R and a short login storm, printing what happened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "tests" / "integration" / "kdc"))


def show(title: str, result) -> None:
    print(f"\n== {title}")
    print("   $ " + " ".join(str(a) for a in result.args))
    for line in (result.stdout + result.stderr).rstrip().splitlines():
        print("   " + line)
    if result.returncode != 0:
        raise SystemExit(f"demo failed at: {title}")


def main() -> None:
    build = (REPO / sys.argv[1]).resolve()
    cluster_dir = Path(sys.argv[2]).resolve()
    os.environ["MPC_BUILD_DIR"] = str(build)
    import mpc_cluster
    from protected_kdc import ProtectedRealm
    import ccache_tickets

    cluster = mpc_cluster.Cluster(cluster_dir)
    realm = ProtectedRealm(cluster_dir / "realm", cluster, realm="DEMO.MPC")
    try:
        print("\n== 4. A realm on loopback (database behind mpc_kdb.so over db2)")
        realm.create()
        realm.kadmin_local(f"modprinc -maxrenewlife 7d {realm.tgs}", check=True)
        realm.addprinc("alice", password="alice-demo-pw", options="-maxrenewlife 7d +requires_preauth")
        realm.addprinc("host/demo.test")
        realm.addprinc("storm", options="+requires_preauth")
        realm.ktadd(["storm"], realm.root / "storm.keytab")
        print(f"   realm {realm.realm}, KDC on 127.0.0.1:{realm.kdc_port}")

        result = realm.protect()
        show("5. Protect the krbtgt key: shares to the three servers, a marker in the database",
             result)
        show("   What the database now holds for krbtgt (admin view)", realm.getprinc(realm.tgs))

        realm.start_kdc(workers=2)
        print("\n== 6. krb5kdc -w 2 running with LD_PRELOAD=mpc_crypto_router.so")

        show("7. kinit (password, renewable)", realm.run(["kinit", "-r", "2d", realm.principal("alice")],
                                                        input="alice-demo-pw\n"))
        show("8. klist -e (the TGT uses the KDC-private enctype, shown as a number)",
             realm.run(["klist", "-e"]))
        ticket = ccache_tickets.tgt(realm.ccache, realm.tgs)
        print(f"   TGT enc-part: enctype {ticket.etype}, kvno {ticket.kvno}, "
              f"{len(ticket.cipher)} bytes = 12 nonce + {len(ticket.cipher) - 28} ciphertext + 16 tag")
        show("9. kvno (a TGS exchange: the TGT is opened and checked by the engine)",
             realm.kvno("host/demo.test"))
        show("10. kinit -R (renewal: the TGT is opened and a new one sealed)", realm.run(["kinit", "-R"]))
        show("    klist after renewal", realm.run(["klist"]))

        load = build / "tests" / "load" / "kdc_load"
        storm = subprocess.run([str(load), "as", "--principal", realm.principal("storm"), "--keytab",
                                str(realm.root / "storm.keytab"), "--count", "400", "--threads", "4"],
                               env=realm.env, capture_output=True, text=True, timeout=300)
        print("\n== 11. A short login storm: 400 AS exchanges from 4 threads")
        summary = json.loads(storm.stdout)
        print(f"   {summary['exchanges']} logins, {summary['failures']} failures, "
              f"{summary['per_second']:.0f}/s, p50 {summary['p50_ms']:.2f} ms, p99 {summary['p99_ms']:.2f} ms")
        if summary["failures"]:
            raise SystemExit(f"demo failed: {summary['first_error']}")
        status = realm.mpcctl_kdc("status", "--cluster", str(cluster.admin_config))
        show("12. mpcctl kdc status", status)
        print("\n== The KDC issued and accepted every ticket without the krbtgt key: it exists only"
              " as shares on the three servers.")
    finally:
        realm.stop()


if __name__ == "__main__":
    main()
