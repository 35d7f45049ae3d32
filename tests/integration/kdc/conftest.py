"""Fixtures for the KDC tests: throwaway realms (krb5_realm.Realm) on the stock Debian
MIT krb5 binaries, with the database behind our KDB module mpc_kdb.so.

mpc_kdb.so comes from $MPC_BUILD_DIR/kdc-plugin/kdb/ (see tests/integration/conftest.py;
$MPC_KDB_MODULE overrides the path). Each realm test runs twice, with the module wrapping
db2 and wrapping klmdb. Debian 12 builds krb5 without LMDB, so klmdb.so is looked for in
$MPC_KLMDB_DIR and then in the system KDB module directory, and the klmdb runs are skipped,
saying so, where there is none (tests/integration/kdc/build-klmdb builds one from the
Debian source package).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mpctest import mpc_cluster
from mpctest.krb5_realm import Realm, find_kdb_module_dir, system_kdb_module_dir
from mpctest.protected_kdc import router_library

HERE = Path(__file__).resolve().parent
BACKENDS = ("db2", "klmdb")


@pytest.fixture(scope="session")
def router_so() -> Path:
    """The crypto router, mpc_crypto_router.so ($MPC_ROUTER_SO overrides the path)."""
    path = router_library()
    if not path.is_file():
        pytest.fail(f"mpc_crypto_router.so not built: {path} (build target mpc_crypto_router, or set MPC_ROUTER_SO)")
    return path


@pytest.fixture(scope="session")
def mpc_module() -> Path:
    path = Path(os.environ.get("MPC_KDB_MODULE",
                               mpc_cluster.build_dir() / "kdc-plugin" / "kdb" / "mpc_kdb.so"))
    if not path.is_file():
        pytest.fail(f"mpc_kdb.so not built: {path} (build target mpc_kdb, or set MPC_KDB_MODULE)")
    return path


@pytest.fixture(scope="session")
def klmdb_dir() -> Path | None:
    extra = [Path(os.environ["MPC_KLMDB_DIR"])] if os.environ.get("MPC_KLMDB_DIR") else []
    return find_kdb_module_dir("klmdb", extra)


@pytest.fixture(params=BACKENDS)
def backend(request, klmdb_dir) -> str:
    if request.param == "klmdb" and klmdb_dir is None:
        pytest.skip("no klmdb.so: Debian 12's krb5 is built without LMDB "
                    "(set MPC_KLMDB_DIR, see tests/integration/kdc/build-klmdb)")
    return request.param


@pytest.fixture
def make_realm(tmp_path, mpc_module, klmdb_dir):
    """make_realm(name, backend=..., **Realm kwargs): realms stopped at teardown."""
    realms: list[Realm] = []

    def make(name: str = "realm", backend: str = "db2", create: bool = True, **kwargs) -> Realm:
        kwargs.setdefault("mpc_module", mpc_module)
        dirs = list(kwargs.pop("module_dirs", []))
        if backend == "klmdb" and klmdb_dir is not None:
            dirs.append(klmdb_dir)
        realm = Realm(tmp_path / name, backend=backend, module_dirs=dirs, **kwargs)
        realms.append(realm)
        if create:
            realm.create()
        return realm

    try:
        yield make
    finally:
        for realm in realms:
            realm.stop()


@pytest.fixture
def realm(make_realm, backend) -> Realm:
    """A created realm whose database goes through mpc_kdb over `backend`."""
    return make_realm(backend=backend)


@pytest.fixture(scope="session")
def kdb_probe(tmp_path_factory) -> Path:
    """kdb_probe.c built against the installed libkdb5 (see its header)."""
    binary = tmp_path_factory.mktemp("probe") / "kdb_probe"
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "kadm-server", "kdb", "krb5"],
                           capture_output=True, text=True, timeout=30)
    assert flags.returncode == 0, flags.stderr
    cc = shutil.which("cc") or "cc"
    built = subprocess.run([cc, "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                            str(HERE / "kdb_probe.c"), *flags.stdout.split()],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return binary


@pytest.fixture(scope="session")
def audit_writing_backend(tmp_path_factory) -> Path:
    """A directory with audit_writing.so (audit_writing_backend.c): db2, but for an audit_as_req
    that also stores the server entry it is handed."""
    out = tmp_path_factory.mktemp("audit-writing")
    flags = subprocess.run(["pkg-config", "--cflags", "kdb"], capture_output=True, text=True, timeout=30)
    assert flags.returncode == 0, flags.stderr
    db2 = system_kdb_module_dir() / "db2.so"
    built = subprocess.run([shutil.which("cc") or "cc", "-std=gnu11", "-Wall", "-Werror", "-shared", "-fPIC",
                            f'-DDB2_MODULE="{db2}"', "-o", str(out / "audit_writing.so"),
                            str(HERE / "audit_writing_backend.c"), *flags.stdout.split(), "-ldl"],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="session")
def fake_backends(tmp_path_factory) -> Path:
    """A directory with fake_v8.so and fake_cpw.so (fake_backend.c), back ends to refuse."""
    out = tmp_path_factory.mktemp("fakes")
    flags = subprocess.run(["pkg-config", "--cflags", "kdb"], capture_output=True, text=True,
                           timeout=30)
    assert flags.returncode == 0, flags.stderr
    for name, defines in (("fake_v8", ["-DFAKE_MAJ_VER=8"]),
                          ("fake_cpw", ["-DFAKE_MAJ_VER=9", "-DFAKE_CHANGE_PWD"])):
        built = subprocess.run([shutil.which("cc") or "cc", "-std=gnu11", "-Wall", "-Werror",
                                "-Wno-unused-function", "-shared", "-fPIC", *defines,
                                "-o", str(out / f"{name}.so"), str(HERE / "fake_backend.c"),
                                *flags.stdout.split()],
                               capture_output=True, text=True, timeout=120)
        assert built.returncode == 0, built.stderr
    return out
