"""What the integration tests, benchmarks and load tests share: real clusters of mpc-server
processes (mpc_cluster), MIT krb5 realms (krb5_realm, protected_kdc, replica_kdc), clients of the
engine (client_handle, gcm_client, krb_client, router_driver), the formats they check
(kdc_formats, ccache_tickets, share_store_reader, raw_frames), the KDC's load generators
(storm, kdc_load) and the benchmarks' measures (bench, kdc_plots).

`tests/` is the import root: pytest adds it (tests/integration/pytest.ini), and the Makefile runs
every script with PYTHONPATH=tests.
"""
