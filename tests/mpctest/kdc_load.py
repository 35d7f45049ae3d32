"""A realm made ready for tests/load/kdc_load, and runs of it: many AS or TGS exchanges per
process, keytab logins so that the client's own string-to-key does not dominate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from mpctest.krb5_realm import Realm

SERVICE = "svc/host.test"


def prepare(realm: Realm) -> None:
    """The realm created, with a user `bench` (preauth required, keys in bench.keytab) and SERVICE."""
    realm.create()
    realm.addprinc("bench", password="bench-pw", options="+requires_preauth")
    realm.addprinc(SERVICE)
    realm.ktadd(["bench"], realm.root / "bench.keytab")


def kdc_load(build: Path, realm: Realm, mode: str, count: int, threads: int = 1, pause_ms: int = 0) -> dict:
    """kdc_load's summary of `count` exchanges (`mode` as or tgs); exits naming the first error
    when any exchange failed."""
    args = [str(build / "tests" / "load" / "kdc_load"), mode, "--principal", realm.principal("bench"),
            "--keytab", str(realm.root / "bench.keytab"), "--count", str(count), "--threads", str(threads),
            "--pause-ms", str(pause_ms)]
    if mode == "tgs":
        args += ["--service", realm.principal(SERVICE)]
    result = subprocess.run(args, env=realm.env, capture_output=True, text=True, timeout=600)
    summary = json.loads(result.stdout)
    if summary["failures"]:
        raise SystemExit(f"{mode} against {realm.root.name}: {summary['failures']} failures: "
                         f"{summary['first_error']}\n{realm.kdc_log()[-3000:]}")
    return summary
