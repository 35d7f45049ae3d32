"""The commands and files that docs/operations.md gives, character for character: the test
shows that what an operator copies from it works, and test_rollout_static.py finds each of
them in the document. Status and rotation, the database sent to the replicas, backups and
restores, the other keys' rotation, the GPU drop-in, upgrade, the KDC's backup and its
replacement, and "Install by hand" with its files."""

from __future__ import annotations

from .common import REALM

STATUS_COMMAND = "mpcctl kdc status --cluster /etc/mpc-kdc/cluster-admin.toml"
ROTATE_COMMAND = f"mpcctl kdc rotate krbtgt/{REALM} --cluster /etc/mpc-kdc/cluster-admin.toml"
# docs/operations.md: the whole database sent to the replicas now, not at the timer's next run.
KPROP_COMMAND = "systemctl start mpc-kprop.service"
BACKUP_DIR = "/root/mpc-backup"
# docs/operations.md "Back up", its blocks joined with &&.
BACKUP_COMMAND = (f"systemctl stop mpc-server && mkdir -p {BACKUP_DIR} && "
                  f"cp -a /var/lib/mpc-server {BACKUP_DIR}/ && "
                  f"cp -a /etc/mpc-kdc/storage.key /etc/mpc-kdc/server.key /etc/mpc-kdc/server.pub {BACKUP_DIR}/ && "
                  "systemctl start mpc-server")
# The same backup taken with mdb_copy while the server runs.
MDB_COPY_BACKUP_COMMAND = (f"umask 077 && mkdir -p {BACKUP_DIR}/mpc-server && "
                           f"mdb_copy /var/lib/mpc-server {BACKUP_DIR}/mpc-server && "
                           f"chown -R mpc-server:mpc-server {BACKUP_DIR}/mpc-server && "
                           f"cp -a /etc/mpc-kdc/storage.key /etc/mpc-kdc/server.key /etc/mpc-kdc/server.pub "
                           f"{BACKUP_DIR}/")
RESTORE_COMMAND = (f"systemctl stop mpc-server && cp -a {BACKUP_DIR}/mpc-server /var/lib/ && "
                   f"cp -a {BACKUP_DIR}/storage.key {BACKUP_DIR}/server.key {BACKUP_DIR}/server.pub /etc/mpc-kdc/ && "
                   "systemctl start mpc-server")
# "Replace a failed server", case 2: on the new host, after the package, before the playbook.
# The copy came over the network: its owner is mpc-server's on this host, whatever uid that is.
RESTORE_NEW_HOST_COMMAND = (f"cp -a {BACKUP_DIR}/mpc-server /var/lib/ && "
                            f"cp -a {BACKUP_DIR}/storage.key {BACKUP_DIR}/server.key {BACKUP_DIR}/server.pub "
                            "/etc/mpc-kdc/ && "
                            "chown -R mpc-server:mpc-server /var/lib/mpc-server /etc/mpc-kdc/storage.key "
                            "/etc/mpc-kdc/server.key && "
                            "chmod 0600 /etc/mpc-kdc/storage.key /etc/mpc-kdc/server.key")
# Case 3: a new krbtgt engine key that the empty server holds too, and every older one dropped.
RETIRE_COMMAND = ROTATE_COMMAND + " --retire-now"
# "Rotate keys": the old pairs moved away before the playbook makes new ones, and deleted
# once logins work with the new ones.
OLD_KEYS = "/root/mpc-old-keys"
SERVER_KEY_MOVE_COMMAND = f"mkdir -p {OLD_KEYS} && mv /etc/mpc-kdc/server.key /etc/mpc-kdc/server.pub {OLD_KEYS}/"
CLIENT_KEYS_MOVE_COMMAND = (f"mkdir -p {OLD_KEYS} && mv /etc/mpc-kdc/kdc-compute.key /etc/mpc-kdc/kdc-compute.pub "
                            f"/etc/mpc-kdc/kdc-admin.key /etc/mpc-kdc/kdc-admin.pub {OLD_KEYS}/")
OLD_KEYS_DELETE_COMMAND = f"rm -rf {OLD_KEYS}"
HANDLE_KEY_COMMAND = ("(umask 077 && openssl rand -out /etc/krb5kdc/mpc-handle.key 32) && "
                      "systemctl restart krb5-kdc")
# "GPU servers".
GPU_DROP_IN_COMMAND = ("install -D -m 0644 /usr/share/doc/mpc-server/examples/gpu.conf "
                       "/etc/systemd/system/mpc-server.service.d/gpu.conf && "
                       "systemctl daemon-reload && systemctl restart mpc-server")
# "Upgrade", run in the folder with the .deb files.
UPGRADE_SERVER_COMMAND = "apt install -y ./mpc-server_{version}_amd64.deb"
UPGRADE_KDC_COMMAND = "apt install -y ./mpc-server_{version}_amd64.deb ./mpc-kdc-plugin_{version}_amd64.deb"
KDC_RESTART_COMMAND = "systemctl restart krb5-kdc"
REINSTALL_COMMAND = "apt install -y --reinstall ./mpc-server_{version}_amd64.deb"
# "Back up", the KDC, and "Replace the KDC host": the database dumped and the KDC's files
# copied, then on a new host the packages, the files and the database put back.
KDC_BACKUP_DIR = "/root/kdc-backup"
KDC_FILES = f"{KDC_BACKUP_DIR}/kdc-files.tar"
KDC_BACKUP_COMMAND = (f"umask 077 && mkdir -p {KDC_BACKUP_DIR} && kdb5_util dump {KDC_BACKUP_DIR}/realm.dump && "
                      f"tar -C / --exclude='etc/mpc-kdc/kdc-*.key' -cf {KDC_FILES} "
                      "etc/krb5.conf etc/krb5kdc etc/mpc-kdc")
KDC_PACKAGES_COMMAND = ("apt install -y krb5-kdc krb5-user ./mpc-server_{version}_amd64.deb "
                        "./mpc-kdc-plugin_{version}_amd64.deb")
KDC_RESTORE_COMMAND = f"tar -C / -xpf {KDC_FILES} && kdb5_util load {KDC_BACKUP_DIR}/realm.dump"
# "Install by hand" and "Enroll" by hand, on hosts named as in the guide, in its realm.
HAND_REALM = "EXAMPLE.ORG"
SERVER_KEYGEN_COMMAND = ("mpcctl keygen --out /etc/mpc-kdc/server && "
                         "mpcctl storage-keygen --out /etc/mpc-kdc/storage.key")
SERVER_KEY_OWNER_COMMAND = "chown mpc-server:mpc-server /etc/mpc-kdc/server.key /etc/mpc-kdc/storage.key"
SERVER_ENABLE_COMMAND = "systemctl enable --now mpc-server"
SERVER_RESTART_COMMAND = "systemctl restart mpc-server"
KDC_KEYGEN_COMMAND = "mpcctl keygen --out /etc/mpc-kdc/kdc-compute && mpcctl keygen --out /etc/mpc-kdc/kdc-admin"
ADMIN_CLUSTER_COMMAND = ("sed 's/kdc-compute.key/kdc-admin.key/' /etc/mpc-kdc/cluster.toml > "
                         "/etc/mpc-kdc/cluster-admin.toml")
HANDLE_KEY_NEW_COMMAND = "(umask 077 && openssl rand -out /etc/krb5kdc/mpc-handle.key 32)"
# Asks for the master password twice; the test answers on stdin.
DATABASE_CREATE_COMMAND = "kdb5_util create -s"
PROTECT_COMMAND = f"mpcctl kdc protect krbtgt/{HAND_REALM} --cluster /etc/mpc-kdc/cluster-admin.toml"
HAND_ROTATE_COMMAND = f"mpcctl kdc rotate krbtgt/{HAND_REALM} --cluster /etc/mpc-kdc/cluster-admin.toml"
# The files of "Install by hand", as the guide shows them (the server's for party 1 there).
HAND_SERVER_TOML = """party = {party}
client_endpoint = "tcp://0.0.0.0:7101"
peer_endpoint = "tcp://0.0.0.0:7201"
data_endpoint = "tcp://0.0.0.0:7221"
secret_key_file = "/etc/mpc-kdc/server.key"
storage_path = "/var/lib/mpc-server"
storage_key_file = "/etc/mpc-kdc/storage.key"
{peers}
[clients]
compute = ["/etc/mpc-kdc/kdc-compute.pub"]
admin = ["/etc/mpc-kdc/kdc-admin.pub"]
"""
HAND_PEER = """
[[peers]]
party = {party}
endpoint = "tcp://mpc{party}.example.org:7201"
data_endpoint = "tcp://mpc{party}.example.org:7221"
public_key = "/etc/mpc-kdc/server{party}.pub"
"""
HAND_KRB5_CONF = """[libdefaults]
    default_realm = EXAMPLE.ORG
    dns_lookup_kdc = false
    dns_lookup_realm = false
    rdns = false
    udp_preference_limit = 1

[realms]
    EXAMPLE.ORG = {
        kdc = kdc.example.org
    }
"""
HAND_KDC_CONF = """[kdcdefaults]
    kdc_ports = 88
    kdc_tcp_ports = 88

[realms]
    EXAMPLE.ORG = {
        database_module = mpcdb
        key_stash_file = /etc/krb5kdc/stash
        acl_file = /etc/krb5kdc/kadm5.acl
        master_key_type = aes256-cts-hmac-sha1-96
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
        max_life = 10h
        max_renewable_life = 7d
    }

[dbmodules]
    db_module_dir = /usr/lib/mpc-kdc
    mpcdb = {
        db_library = mpc_kdb
        mpc_backend = db2
        mpc_handle_key_file = /etc/krb5kdc/mpc-handle.key
        database_name = /var/lib/krb5kdc/principal
    }

[plugins]
    kdcpreauth = {
        disable = spake
    }

[logging]
    kdc = SYSLOG:INFO:DAEMON
    admin_server = SYSLOG:INFO:DAEMON
    default = SYSLOG:INFO:DAEMON
"""
HAND_CLUSTER_TOML = """protocol = "rss3"
timeout_ms = 2000
secret_key_file = "/etc/mpc-kdc/kdc-compute.key"
""" + "".join(f"""
[[servers]]
party = {party}
endpoint = "tcp://mpc{party}.example.org:7101"
data_endpoint = "tcp://mpc{party}.example.org:7221"
public_key = "/etc/mpc-kdc/server{party}.pub"
""" for party in (1, 2, 3))
HAND_ROUTER_CONF = """handle_key_file = /etc/krb5kdc/mpc-handle.key
engine_config = /etc/mpc-kdc/cluster.toml
"""


def hand_server_toml(party: int) -> str:
    """/etc/mpc-kdc/server.toml of "Install by hand" for PARTY: its peers are the other two."""
    peers = "".join(HAND_PEER.format(party=peer) for peer in (1, 2, 3) if peer != party)
    return HAND_SERVER_TOML.format(party=party, peers=peers)
