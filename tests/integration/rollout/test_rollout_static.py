"""The rollout's offline checks: the Debian packages build from the tree with their library
dependencies, the systemd units verify without a warning, and the Ansible roles pass
ansible-lint, the GPU drop-in verifies with the unit, every command the rollout test runs
as docs/operations.md's is written there, every file it writes for "Install by hand" is a
block there, and that block's kdc.conf is the mpc_kdc role's. The rollout itself (containers,
playbook, logins) is test_rollout_containers.py (short form) and `make rollout-test` (full).

Each check skips, naming what is missing, when its tool is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
import subprocess
from pathlib import Path

import pytest

from rollout import commands

REPO = Path(__file__).resolve().parents[3]
BUILD_DIR = Path(os.environ.get("MPC_BUILD_DIR", REPO / "build"))
ANSIBLE_VENV = Path(os.environ.get("MPC_ANSIBLE_VENV", BUILD_DIR / "ansible-venv"))
MAX_EXPOSURE = 2.0
TIMEOUT_S = 120


def need(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: tools/install-deps installs them)")


def run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT_S, **kwargs)


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    need("dpkg-deb", "dpkg-shlibdeps", "cmake")
    if not (BUILD_DIR / "kdc-plugin" / "kdb" / "mpc_kdb.so").is_file():
        pytest.skip(f"no built tree in {BUILD_DIR} (set MPC_BUILD_DIR)")
    out = tmp_path_factory.mktemp("packages")
    done = run([REPO / "packaging" / "build-debs", BUILD_DIR, out])
    assert done.returncode == 0, done.stderr
    debs = {deb.name.split("_")[0]: deb for deb in out.glob("*.deb")}
    assert set(debs) == {"mpc-server", "mpc-kdc-plugin"}
    return debs


def control(deb: Path) -> dict[str, str]:
    done = run(["dpkg-deb", "--field", deb])
    assert done.returncode == 0, done.stderr
    fields: dict[str, str] = {}
    for line in done.stdout.splitlines():
        if line and not line[0].isspace() and ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def contents(deb: Path) -> dict[str, str]:
    """Path -> 'mode owner/group' of every entry."""
    done = run(["dpkg-deb", "--contents", deb])
    assert done.returncode == 0, done.stderr
    entries = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        entries[fields[5].lstrip(".")] = f"{fields[0]} {fields[1]}"
    return entries


def depends(deb: Path) -> set[str]:
    return {re.split(r"[ (]", item.strip())[0] for item in control(deb)["Depends"].split(",")}


def needed(deb: Path, tmp_path: Path) -> set[str]:
    """NEEDED sonames of every ELF file in the package, from objdump -p."""
    root = tmp_path / deb.stem
    assert run(["dpkg-deb", "-x", deb, root]).returncode == 0
    sonames = set()
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF":
            dump = run(["objdump", "-p", path]).stdout
            sonames |= set(re.findall(r"^\s*NEEDED\s+(\S+)", dump, re.M))
    return sonames


def owning_packages(soname: str) -> set[str]:
    """Every installed package that ships a file of this name: libm.so.6, say, comes with libc6
    and, where it is installed, with libc6-i386 too."""
    done = run(["dpkg", "-S", f"*/{soname}"])
    assert done.returncode == 0, f"no installed Debian package ships {soname}"
    return {package.strip() for line in done.stdout.splitlines() for package in line.split(":")[0].split(",")}


def test_mpc_server_package(packages, tmp_path):
    need("objdump")
    deb = packages["mpc-server"]
    files = contents(deb)
    for path, mode in {"/usr/sbin/mpc-server": "-rwxr-xr-x root/root",
                       "/usr/sbin/mpc-lut-dealer": "-rwxr-xr-x root/root",
                       "/usr/bin/mpcctl": "-rwxr-xr-x root/root",
                       "/lib/systemd/system/mpc-server.service": "-rw-r--r-- root/root",
                       "/lib/systemd/system/mpc-lut-dealer.service": "-rw-r--r-- root/root",
                       "/usr/share/doc/mpc-server/examples/mpc-lut-dealer.example.toml": "-rw-r--r-- root/root",
                       "/usr/share/doc/mpc-server/examples/mpc-server.example.toml": "-rw-r--r-- root/root",
                       "/usr/share/doc/mpc-server/examples/gpu.conf": "-rw-r--r-- root/root"}.items():
        assert files.get(path) == mode, (path, files.get(path))
    info = run(["dpkg-deb", "--info", deb]).stdout
    assert "postinst" in info and "postrm" in info
    declared = depends(deb)
    assert "adduser" in declared
    for soname in needed(deb, tmp_path):
        assert owning_packages(soname) & declared, soname


def test_mpc_kdc_plugin_package(packages, tmp_path):
    need("objdump")
    deb = packages["mpc-kdc-plugin"]
    files = contents(deb)
    for path in ("/usr/lib/mpc-kdc/mpc_kdb.so", "/usr/lib/mpc-kdc/mpc_crypto_router.so",
                 "/usr/lib/libmpcclient.so.1", "/lib/systemd/system/krb5-kdc.service.d/mpc-router.conf"):
        assert path in files, path
    declared = depends(deb)
    assert "krb5-kdc" in declared and "mpc-kdc-plugin" not in declared
    sonames = needed(deb, tmp_path) - {"libmpcclient.so.1"}
    for soname in sonames:
        assert owning_packages(soname) & declared, soname
    # The module and the router carry no run path into a build tree.
    root = tmp_path / deb.stem
    for module in ("mpc_kdb.so", "mpc_crypto_router.so"):
        dump = run(["objdump", "-p", root / "usr/lib/mpc-kdc" / module]).stdout
        paths = re.findall(r"(?:RUNPATH|RPATH)\s+(\S+)", dump)
        assert all(path == "$ORIGIN/.." for path in paths), (module, paths)


@pytest.fixture(scope="module")
def unit_root(packages, tmp_path_factory) -> Path:
    """The packages unpacked over a copy of the host's units (verify needs the targets they
    name) and the stock krb5-kdc.service with the programs it starts."""
    need("systemd-analyze")
    root = tmp_path_factory.mktemp("units")
    for deb in packages.values():
        assert run(["dpkg-deb", "-x", deb, root]).returncode == 0
    units = root / "lib/systemd/system"
    for unit in Path("/lib/systemd/system").iterdir():
        if unit.is_file() and not (units / unit.name).exists():
            shutil.copy2(unit, units / unit.name)
    if not (units / "krb5-kdc.service").is_file():
        pytest.skip("needs Debian's krb5-kdc.service (package krb5-kdc) to verify the drop-in")
    for program in ("/usr/sbin/krb5kdc", "/bin/kill"):
        (root / program.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(program, root / program.lstrip("/"))
    return root


def test_units_verify_without_warnings(unit_root):
    done = run(["systemd-analyze", "verify", f"--root={unit_root}", "mpc-server.service", "mpc-lut-dealer.service",
                "krb5-kdc.service", "mpc-kdc-metrics.service", "mpc-kdc-metrics.timer"])
    # verify exits 0 on unknown keys and only warns: any output is a failure.
    assert done.returncode == 0 and done.stderr == "" and done.stdout == "", done.stderr + done.stdout


def test_verify_reports_a_bad_key(unit_root, tmp_path):
    """The check above would see a mistake in the drop-in."""
    root = tmp_path / "root"
    shutil.copytree(unit_root, root, symlinks=True)
    drop_in = root / "lib/systemd/system/krb5-kdc.service.d/mpc-router.conf"
    drop_in.write_text(drop_in.read_text() + "NoSuchKey=1\n")
    done = run(["systemd-analyze", "verify", f"--root={root}", "krb5-kdc.service"])
    assert "NoSuchKey" in done.stderr


def test_mpc_server_exposure(unit_root):
    unit = unit_root / "lib/systemd/system/mpc-server.service"
    done = run(["systemd-analyze", "security", "--offline=true", "--no-pager", unit])
    if "--offline" in done.stderr and "unrecognized" in done.stderr:
        pytest.skip("systemd-analyze security has no --offline here")
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout + done.stderr)
    assert match, done.stdout + done.stderr
    exposure = float(match.group(1))
    report = BUILD_DIR / "rollout" / "mpc-server-security.txt"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(done.stdout)
    print(f"mpc-server.service exposure {exposure} (report: {report})")
    assert exposure <= MAX_EXPOSURE, done.stdout


def test_ansible_lint():
    lint = ANSIBLE_VENV / "bin" / "ansible-lint"
    if not lint.is_file():
        pytest.skip(f"no ansible-lint in {ANSIBLE_VENV}: `make lint-ansible` installs it from PyPI")
    env = {**os.environ, "PATH": f"{lint.parent}:{os.environ['PATH']}", "ANSIBLE_HOME": str(BUILD_DIR / "ansible-home")}
    done = run([lint, "--offline", "--nocolor", "-q"], cwd=REPO / "ansible", env=env)
    assert done.returncode == 0, done.stdout + done.stderr


GPU_DROP_IN = REPO / "config" / "mpc-server.service.d" / "gpu.conf"
OPERATIONS = REPO / "docs" / "operations.md"


def test_gpu_drop_in_verifies(unit_root, tmp_path):
    """The GPU drop-in where docs/operations.md puts it: systemd loads the unit with it
    without a warning (no GPU host has run it; the rollout test starts it without a GPU)."""
    root = tmp_path / "root"
    shutil.copytree(unit_root, root, symlinks=True)
    drop_in = root / "etc/systemd/system/mpc-server.service.d/gpu.conf"
    drop_in.parent.mkdir(parents=True)
    shutil.copy2(GPU_DROP_IN, drop_in)
    done = run(["systemd-analyze", "verify", f"--root={root}", "mpc-server.service"])
    assert done.returncode == 0 and done.stderr == "" and done.stdout == "", done.stderr + done.stdout
    # verify read the drop-in: a bad key in it is reported.
    drop_in.write_text(drop_in.read_text() + "NoSuchKey=1\n")
    done = run(["systemd-analyze", "verify", f"--root={root}", "mpc-server.service"])
    assert "NoSuchKey" in done.stderr, done.stderr


def test_gpu_drop_in_is_the_documented_one():
    settings = [line for line in GPU_DROP_IN.read_text().splitlines() if line and not line.startswith("#")]
    blocks = re.findall(r"```\n(.*?)```", OPERATIONS.read_text(), re.S)
    assert any(block.splitlines() == settings for block in blocks), settings


def rollout_module():
    """The rollout test's module of the commands and files docs/operations.md gives."""
    return commands


def test_rollout_runs_the_documented_commands():
    """Each command the rollout test runs for a procedure of docs/operations.md (the parts of
    its && chains) appears in the document word for word, with the document's realm and its
    VERSION placeholder: what the test proves is what an operator copies."""
    module = rollout_module()
    doc = OPERATIONS.read_text()
    names = ["STATUS_COMMAND", "ROTATE_COMMAND", "RETIRE_COMMAND", "BACKUP_COMMAND", "MDB_COPY_BACKUP_COMMAND",
             "RESTORE_COMMAND", "RESTORE_NEW_HOST_COMMAND", "SERVER_KEY_MOVE_COMMAND", "CLIENT_KEYS_MOVE_COMMAND",
             "OLD_KEYS_DELETE_COMMAND", "HANDLE_KEY_COMMAND", "GPU_DROP_IN_COMMAND", "UPGRADE_SERVER_COMMAND",
             "UPGRADE_KDC_COMMAND", "KDC_RESTART_COMMAND", "REINSTALL_COMMAND", "KDC_BACKUP_COMMAND",
             "KDC_PACKAGES_COMMAND", "KDC_RESTORE_COMMAND", "SERVER_KEYGEN_COMMAND", "SERVER_KEY_OWNER_COMMAND",
             "SERVER_ENABLE_COMMAND", "SERVER_RESTART_COMMAND", "KDC_KEYGEN_COMMAND", "ADMIN_CLUSTER_COMMAND",
             "HANDLE_KEY_NEW_COMMAND", "DATABASE_CREATE_COMMAND", "PROTECT_COMMAND", "HAND_ROTATE_COMMAND",
             "KPROP_COMMAND"]
    for name in names:
        command = getattr(module, name).replace(module.REALM, "EXAMPLE.ORG").replace("{version}", "VERSION")
        for part in command.split(" && "):
            assert part in doc, f"{name}: {part!r} is not in docs/operations.md"


def code_blocks(text: str) -> list[str]:
    """The fenced blocks of a Markdown text, each without the indentation of its list item."""
    return [textwrap.dedent(block) for block in re.findall(r"^[ ]*```\n(.*?)^[ ]*```$", text, re.S | re.M)]


def test_rollout_writes_the_documented_files():
    """The files the rollout test writes for "Install by hand" are blocks of the guide, whole."""
    module = rollout_module()
    blocks = code_blocks(OPERATIONS.read_text())
    files = {"server.toml (party 1)": module.hand_server_toml(1), "krb5.conf": module.HAND_KRB5_CONF,
             "kdc.conf": module.HAND_KDC_CONF, "cluster.toml": module.HAND_CLUSTER_TOML,
             "router.conf": module.HAND_ROUTER_CONF}
    for name, text in files.items():
        assert text in blocks, f"{name} as the rollout test writes it is not a block of docs/operations.md:\n{text}"
    # The other parties' configurations differ from party 1's only where the guide says.
    for party in (2, 3):
        text = module.hand_server_toml(party)
        assert f"party = {party}\n" in text and text.count("[[peers]]") == 2
        assert f"server{party}.pub" not in text and f"mpc{party}.example.org" not in text


def test_documented_kdc_conf_is_the_roles():
    """The guide's kdc.conf by hand is what the mpc_kdc role writes with its defaults."""
    module = rollout_module()
    role = REPO / "ansible" / "roles" / "mpc_kdc"
    defaults = (role / "defaults" / "main.yml").read_text()
    values = {"mpc_kdc_realm": "EXAMPLE.ORG"}
    for key in ("mpc_kdc_max_life", "mpc_kdc_max_renewable_life", "mpc_kdc_supported_enctypes",
                "mpc_kdc_handle_key_file", "mpc_kdc_database_name"):
        values[key] = re.search(rf"^{key}: (.*)$", defaults, re.M).group(1)
    template = (role / "templates" / "kdc.conf.j2").read_text()
    lines = [line for line in template.splitlines() if not line.startswith("#")]
    rendered = re.sub(r"\{\{ (\w+) \}\}", lambda found: values[found.group(1)], "\n".join(lines))
    assert rendered.strip() + "\n" == module.HAND_KDC_CONF
