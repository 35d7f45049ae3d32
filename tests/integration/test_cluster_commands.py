"""mpcctl's cluster commands as `make demo` and the README run them: no binary paths given."""

from __future__ import annotations

import pytest

from mpctest.mpc_cluster import Cluster, openssl_ctr_keystream


@pytest.mark.timeout(90)
def test_cluster_start_finds_the_server_in_its_build_tree(tmp_path):
    cluster = Cluster(tmp_path / "c")
    try:
        cluster.init()
        result = cluster.mpcctl("cluster", "start", "--dir", str(cluster.dir), timeout=60, check=False)
        assert result.returncode == 0, result.stderr + cluster.log_tail()
        key = ("demo/k", 1, "aes128")
        key_hex, _ = cluster.import_key(*key)
        cluster.wait_until_serving(key)
        counter = "000102030405060708090a0b0c0d0e0f"
        assert cluster.keystream(*key, counter, 20000) == openssl_ctr_keystream("aes128", key_hex, counter, 20000)
    finally:
        cluster.stop()
