"""The embedded server: shared across processes, stopped by the last user, robust to kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from hindsight_tools.settings import ROOT_DATA_DIR, default_data_dir
from hindsight_tools.store.embedded import pgdata_for, prune_dead_handles
from hindsight_tools.store.tuning import auto_shared_buffers, desired_settings

# A child process that joins the server, prints its pid and waits for a line on stdin.
CHILD = """
import json, sys
from pathlib import Path
from hindsight_tools.store.embedded import acquire_server
server = acquire_server(Path(sys.argv[1]), json.loads(sys.argv[2]))
print(server.uri, flush=True)
sys.stdin.readline()
server.release()
"""


def postmaster_pid(data_dir: Path) -> int | None:
    pid_file = pgdata_for(data_dir) / "postmaster.pid"
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text().splitlines()[0])
    return pid if psutil.pid_exists(pid) else None


def spawn(data_dir: Path, server_settings: dict[str, str] | None = None) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data_dir), json.dumps(server_settings or {})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    child.uri = child.stdout.readline().strip()  # type: ignore[attr-defined]
    assert child.uri.startswith("postgresql://")  # type: ignore[attr-defined]
    return child


def show(child: subprocess.Popen[str], *names: str) -> list[str]:
    with psycopg.connect(child.uri, autocommit=True) as conn:  # type: ignore[attr-defined]
        return [str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in names]  # type: ignore[index]


def finish(child: subprocess.Popen[str]) -> None:
    child.communicate("\n", timeout=60)
    assert child.returncode == 0


@pytest.fixture
def own_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Under /tmp with a short name, like the default would be.
    return Path(tmp_path_factory.mktemp("srv", numbered=True))


def test_server_is_shared_and_stopped_by_the_last_process(own_data_dir: Path) -> None:
    first = spawn(own_data_dir)
    server_pid = postmaster_pid(own_data_dir)
    assert server_pid is not None
    second = spawn(own_data_dir)
    assert postmaster_pid(own_data_dir) == server_pid  # joined, not restarted
    finish(first)
    assert postmaster_pid(own_data_dir) == server_pid  # still in use by the second
    finish(second)
    assert _gone(server_pid)


def test_a_killed_process_does_not_keep_the_server_alive(own_data_dir: Path) -> None:
    victim = spawn(own_data_dir)
    server_pid = postmaster_pid(own_data_dir)
    assert server_pid is not None
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    handles = json.loads((pgdata_for(own_data_dir) / ".handle_pids.json").read_text())
    assert victim.pid in handles  # the package's list still names the dead process
    survivor = spawn(own_data_dir)
    assert postmaster_pid(own_data_dir) == server_pid
    finish(survivor)
    assert _gone(server_pid)


def test_a_terminated_command_leaves_the_server_and_the_last_user_stops_it(
    own_data_dir: Path,
) -> None:
    holder = spawn(own_data_dir)  # starts (and tunes) the server
    server_pid = postmaster_pid(own_data_dir)
    assert server_pid is not None
    env = {**os.environ, "HINDSIGHT_API_DATA_DIR": str(own_data_dir)}
    # the MCP server runs until its client goes away: the command most often stopped by a
    # signal rather than by its own exit
    child = subprocess.Popen(
        [sys.executable, "-m", "hindsight_tools.cli.commands", "mcp", "--bank", "sigterm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        # it answers only once its engine is open on the server
        child.stdin.write(json.dumps(MCP_INITIALIZE) + "\n")
        child.stdin.flush()
        assert json.loads(child.stdout.readline())["id"] == 1
        finish(holder)
        assert postmaster_pid(own_data_dir) == server_pid  # the MCP server still uses it
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()  # closes the pipes
    assert child.returncode == 128 + signal.SIGTERM
    assert _gone(server_pid)


MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def test_a_new_server_runs_with_the_tuned_settings(own_data_dir: Path) -> None:
    child = spawn(own_data_dir, {"work_mem": "24MB"})
    try:
        server_pid = postmaster_pid(own_data_dir)
        assert show(child, "shared_buffers", "jit", "work_mem", "random_page_cost") == [
            auto_shared_buffers().replace("1024MB", "1GB"),
            "off",
            "24MB",
            "1.1",
        ]
    finally:
        finish(child)
    # Restarted for shared_buffers, the server is still the one the package stops.
    assert server_pid is not None and _gone(server_pid)


def test_settings_needing_a_restart_wait_while_others_use_the_server(
    own_data_dir: Path,
) -> None:
    first = spawn(own_data_dir)
    server_pid = postmaster_pid(own_data_dir)
    second = spawn(own_data_dir, {"shared_buffers": "160MB", "work_mem": "20MB"})
    try:
        assert postmaster_pid(own_data_dir) == server_pid  # not restarted under `first`
        # A reload applies work_mem at once; shared_buffers waits for the next start.
        assert show(second, "work_mem") == ["20MB"]
        assert show(second, "shared_buffers") != ["160MB"]
    finally:
        finish(second)
        finish(first)
    third = spawn(own_data_dir, {"shared_buffers": "160MB"})
    try:
        assert show(third, "shared_buffers") == ["160MB"]
    finally:
        finish(third)


def test_overrides_win_over_the_defaults() -> None:
    wanted = desired_settings({"jit": "on", "max_parallel_workers_per_gather": "0"})
    assert wanted["jit"] == "on"
    assert wanted["max_parallel_workers_per_gather"] == "0"
    assert wanted["shared_buffers"] == auto_shared_buffers()


def test_data_survives_a_restart(own_data_dir: Path) -> None:
    script = """
import sys, psycopg
from pathlib import Path
from hindsight_tools.store.embedded import acquire_server
server = acquire_server(Path(sys.argv[1]))
with psycopg.connect(server.uri, autocommit=True) as c:
    c.execute("CREATE TABLE IF NOT EXISTS t (v int)")
    if sys.argv[2] == "write":
        c.execute("INSERT INTO t VALUES (42)")
    else:
        print(c.execute("SELECT v FROM t").fetchall())
server.release()
"""
    subprocess.run([sys.executable, "-c", script, str(own_data_dir), "write"], check=True)
    assert postmaster_pid(own_data_dir) is None  # stopped in between
    out = subprocess.run(
        [sys.executable, "-c", script, str(own_data_dir), "read"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "[(42,)]"


def test_long_data_dir_paths_get_a_short_socket(own_data_dir: Path) -> None:
    deep = own_data_dir / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    child = spawn(deep)
    try:
        assert postmaster_pid(deep) is not None
    finally:
        finish(child)


def test_prune_dead_handles(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    handles = tmp_path / ".handle_pids.json"
    handles.write_text(json.dumps([os.getpid(), dead.pid]))
    assert prune_dead_handles(tmp_path) == [os.getpid()]
    assert json.loads(handles.read_text()) == [os.getpid()]


def test_default_data_dir_is_short_and_outside_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert default_data_dir() == ROOT_DATA_DIR == Path("/var/lib/hindsight-tools")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_data_dir() == Path("/home/someone/.local/share/hindsight-tools")


def _gone(pid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False
