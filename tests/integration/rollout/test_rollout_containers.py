"""The short form of the rollout test, inside `make test`: the packages built from this tree
and the Ansible roles on four booted Debian 12 containers (packaging/rollout-test --short):
site.yml over SSH, every unit active, kinit and kvno with the krbtgt key protected, the metrics
endpoints and their firewall, one engine server stopped (logins go on, the KDC still up) and
started again (logins back). `make rollout-test` runs the full form, which adds a replica KDC
fed by kprop (its units, the krbtgt key protected there too, each KDC accepting the other's
TGTs, also while an engine server is down), a second run of the playbook with changed=0 and
every procedure of operations.md. A replica KDC against a protected engine, with kprop, is
also tested inside `make test` without containers (tests/integration/kdc/test_replica_kdc.py).

It runs when this machine can boot the containers: root, systemd-nspawn, debootstrap,
overlayfs, a writable cgroup hierarchy, the Ansible environment, and a cached image or the
Debian mirror to build one; otherwise it skips, naming what is missing. It runs after the
other integration tests (it is the longest). The script tears everything down (containers,
bridge, cgroups, mounts) on failure too; a timeout or Ctrl-C here sends it SIGTERM and waits
for its teardown.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BUILD_DIR = Path(os.environ.get("MPC_BUILD_DIR", REPO / "build")).resolve()
ANSIBLE_VENV = Path(os.environ.get("MPC_ANSIBLE_VENV", BUILD_DIR / "ansible-venv")).resolve()
ROLLOUT = REPO / "packaging" / "rollout-test"
# The short form takes about 2 to 3 minutes with the image cached (four containers),
# plus about a minute for the first image build; the hard limit leaves room for a loaded
# machine.
RUN_TIMEOUT_S = 720
TEARDOWN_TIMEOUT_S = 120


def rollout(*args: str | Path, log: Path | None = None, timeout: float) -> int:
    """Runs packaging/rollout-test in a session of its own (a Ctrl-C at the terminal reaches
    pytest only) and, whatever interrupts the wait, stops it with SIGTERM, on which it tears
    everything down, and waits for that."""
    env = dict(os.environ, MPC_ANSIBLE_VENV=str(ANSIBLE_VENV))
    out = open(log, "w") if log else subprocess.DEVNULL
    try:
        process = subprocess.Popen([str(ROLLOUT), *map(str, args)], stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except BaseException:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=TEARDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            raise
    finally:
        if log:
            out.close()


@pytest.fixture(scope="module")
def packages() -> Path:
    if not (BUILD_DIR / "kdc-plugin" / "kdb" / "mpc_kdb.so").is_file():
        pytest.skip(f"no built tree in {BUILD_DIR} (set MPC_BUILD_DIR)")
    out = BUILD_DIR / "rollout" / "short-packages"
    done = subprocess.run([REPO / "packaging" / "build-debs", BUILD_DIR, out], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.run_last
@pytest.mark.timeout(RUN_TIMEOUT_S + TEARDOWN_TIMEOUT_S + 60)
def test_rollout_short_form(packages):
    check = subprocess.run([ROLLOUT, "--check", "--short", "--packages", packages, BUILD_DIR],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, MPC_ANSIBLE_VENV=str(ANSIBLE_VENV)))
    if check.returncode == 3:
        pytest.skip("rollout short form needs " + "; ".join(
            line.removeprefix("missing: ") for line in check.stdout.splitlines()))
    assert check.returncode == 0, check.stdout + check.stderr

    log = BUILD_DIR / "rollout" / "short-form.log"
    started = time.monotonic()
    code = rollout("--short", "--packages", packages, BUILD_DIR, log=log, timeout=RUN_TIMEOUT_S)
    text = log.read_text()
    print(f"rollout short form: exit {code} after {time.monotonic() - started:.0f} s (log: {log})")
    assert code == 0, text[-8000:]
    # The checks the short form promises, each reported by the script once it passed.
    for reported in ("4 containers booted (mpc1, mpc2, mpc3, kdc)",
                     "mpc-server active on mpc1, mpc2, mpc3; krb5-kdc active", "kinit and kvno succeed",
                     "protected (mpc-protected = true)", "other hosts are kept off the metrics ports",
                     "with mpc-server stopped on mpc2", "logins work", "short form passed"):
        assert reported in text, (reported, text[-8000:])
