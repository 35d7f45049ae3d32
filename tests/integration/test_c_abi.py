"""The C interface (libmpcclient.so, mpc_client.h) from a small C program, against OpenSSL."""

from __future__ import annotations

import secrets
import subprocess

import pytest

from mpctest.mpc_cluster import REPO, client_library, openssl_ctr_keystream, openssl_ecb

SOURCE = REPO / "tests" / "integration" / "c_abi_client.c"
BAD_ARGUMENT_CALLS = 33  # expect_einval() calls in c_abi_client.c


@pytest.fixture(scope="module")
def c_client(tmp_path_factory):
    library = client_library()
    if not library.exists():
        pytest.fail(f"{library} is not built")
    binary = tmp_path_factory.mktemp("cabi") / "c_abi_client"
    result = subprocess.run(
        ["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "mpc-engine" / "client"),
         "-o", str(binary), str(SOURCE), "-L", str(library.parent), "-lmpcclient",
         f"-Wl,-rpath,{library.parent}"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"compiling {SOURCE.name} failed:\n{result.stderr}"
    return binary


NAME_CHECKS = ("keystream-empty-name", "keystream-name-with-space", "ecb-decrypt-empty-name")


@pytest.fixture(scope="module", params=(("aes128", 1), ("aes256", 2)), ids=("aes128", "aes256"))
def abi_run(request, cluster, c_client):
    """One run of c_abi_client per algorithm, through the compute-only configuration."""
    alg, code = request.param
    name = f"cabi/{alg}"
    key_hex, _ = cluster.import_key(name, 3, alg)
    cluster.wait_until_serving((name, 3, alg))
    counter = secrets.token_hex(8) + "ffffffffffffffff"  # wraps the low 64 bits at once
    blocks = 33
    plaintext = secrets.token_bytes(16 * 5)
    result = subprocess.run([str(c_client), str(cluster.compute_config), name, "3", str(code), counter,
                             str(blocks), plaintext.hex()], capture_output=True, text=True, timeout=60)
    lines = dict(line.split(" ", 1) if " " in line else (line, "") for line in result.stdout.splitlines())
    assert result.returncode == 0, f"c_abi_client exited {result.returncode}: {result.stderr}\n{result.stdout}"
    failures = {line.split()[1]: int(line.split()[2]) for line in result.stdout.splitlines()
                if line.startswith("einval-fail")}
    return {"alg": alg, "key_hex": key_hex, "counter": counter, "blocks": blocks, "plaintext": plaintext,
            "lines": lines, "einval_failures": failures}


def test_c_abi_computes_like_openssl(abi_run):
    alg, key_hex, lines = abi_run["alg"], abi_run["key_hex"], abi_run["lines"]
    assert bytes.fromhex(lines["keystream"]) == openssl_ctr_keystream(alg, key_hex, abi_run["counter"],
                                                                      abi_run["blocks"])
    assert bytes.fromhex(lines["ecb-encrypt"]) == openssl_ecb(alg, key_hex, abi_run["plaintext"])
    assert bytes.fromhex(lines["ecb-decrypt"]) == abi_run["plaintext"]


def test_c_abi_handle_works_in_child_and_parent_after_fork(abi_run):
    assert "fork-child-ok" in abi_run["lines"]
    assert "fork-parent-ok" in abi_run["lines"]


def test_c_abi_per_handle_timeout_bounds_a_call(abi_run):
    assert "timeout-ok" in abi_run["lines"], abi_run["lines"].get("timeout-fail", "no timeout line")


def test_c_abi_bad_arguments_return_einval(abi_run):
    failures = {what: rc for what, rc in abi_run["einval_failures"].items() if what not in NAME_CHECKS}
    assert not failures, f"bad arguments not refused with MPC_EINVAL (-1): {failures}"
    assert int(abi_run["lines"]["einval-ok"]) + len(abi_run["einval_failures"]) == BAD_ARGUMENT_CALLS


def test_c_abi_invalid_key_names_return_einval(abi_run):
    """An empty key name or one with a space is a bad argument, not an internal error."""
    failures = {what: rc for what, rc in abi_run["einval_failures"].items() if what in NAME_CHECKS}
    assert not failures, f"invalid key names not refused with MPC_EINVAL (-1): {failures}"


def test_c_abi_refuses_unknown_key(cluster, c_client):
    result = subprocess.run([str(c_client), str(cluster.compute_config), "cabi/none", "1", "1", "00" * 16, "1",
                             "00" * 16], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "keystream: -4" in result.stderr and "not found" in result.stderr, result.stderr
