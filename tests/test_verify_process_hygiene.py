"""Children die with their parent: `check`, `fix` and `verify` killed by SIGTERM, SIGINT
or SIGKILL leave no process behind, and an interrupted verify still writes its report.

Each test records the parent's descendants while it runs (after the parent is gone they
are re-parented and can no longer be told apart), sends the signal, and then waits for
every recorded pid to be gone (a zombie counts as gone: nothing runs in it).
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from compile_lint.children import die_with_parent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "verify")
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGKILL]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _children_of(pid: int) -> set:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


def descendants(pid: int) -> set:
    found, frontier = set(), {pid}
    while frontier:
        children = set().union(*(_children_of(p) for p in frontier)) - found
        found |= children
        frontier = children
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def fork_servers_with_a_worker(pid: int) -> set:
    """verify's fork servers that have forked a worker (not merely a compiler while warming up)."""
    return {p for p in _children_of(pid) if "compile_lint.verify.forkserver" in _cmdline(p)
            and any("compile_lint.verify.forkserver" in _cmdline(c) for c in _children_of(p))}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def start(args, cwd, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.Popen([sys.executable, "-m", "compile_lint", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def assert_all_gone(pids: set, timeout: float = 15) -> None:
    assert wait_until(lambda: not any(alive(p) for p in pids), timeout), \
        f"still running after the parent died: {[p for p in pids if alive(p)]}"


# ---- the mechanism itself ----

def test_die_with_parent_when_the_parent_is_killed(tmp_path):
    """A grandchild armed with die_with_parent() ends when its parent gets SIGKILL."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'from compile_lint.children import die_with_parent; import time; "
        "print(die_with_parent(), flush=True); time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    child = int(parent.stdout.readline())
    assert parent.stdout.readline().strip() in ("pdeathsig", "watcher")
    parent.kill()
    parent.wait()
    assert_all_gone({child}, timeout=5)


def test_die_with_parent_leaves_at_once_when_the_parent_is_already_gone():
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent=-1)  # not our parent: leave
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1


# ---- check and fix: the process pool ----

def _many_files(folder, count=300):
    for i in range(count):
        (folder / f"m{i:03d}.py").write_text(
            "import torch\n\n\ndef build():\n    return Net()\n\n\n" + "x = 1\n" * 200 + "torch.compile(build())\n")


@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_check_and_fix_pool_workers_die_with_the_parent(tmp_path, command, signum):
    _many_files(tmp_path)
    proc = start([command, ".", "--no-cache", "--jobs", "2"], cwd=str(tmp_path))
    workers = set()

    def pool_started():
        workers.update(descendants(proc.pid))
        return len(workers) >= 2 or proc.poll() is not None

    assert wait_until(pool_started, 60, step=0.02)
    if proc.poll() is not None:
        pytest.skip("finished before its pool could be seen (machine too fast)")
    proc.send_signal(signum)
    proc.communicate(timeout=60)
    assert_all_gone(workers)


# ---- verify: the fork server, its children, and the report ----

def _start_verify(tmp_path, report):
    # Targets run in sorted order: the tone curve (a minute of compiling on a busy CPU),
    # then the stalled overlay, which blocks in eager until its 20 s timeout (the
    # fixtures' compile-lint.toml).
    return start(["verify", "--device", "cpu", "--report", "json", "--output-file", str(report),
                  "--target", f"{FIXTURES}/stalled_capture.py:LiveOverlay",
                  "--target", f"{FIXTURES}/clean/tone_curve.py:ToneCurve"], cwd=str(tmp_path),
                 start_new_session=True)  # as under CI: only verify itself gets the signal


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_interrupted_verify_leaves_nothing_running_and_reports_what_finished(tmp_path, signum):
    report = tmp_path / "report.json"
    proc = _start_verify(tmp_path, report)
    seen = set()

    def worker_running():  # verify -> fork server -> forked worker
        seen.update(descendants(proc.pid))
        return bool(fork_servers_with_a_worker(proc.pid)) or proc.poll() is not None

    assert wait_until(worker_running, 300, step=0.2), "no worker started"
    assert proc.poll() is None, proc.communicate()
    time.sleep(1)
    seen.update(descendants(proc.pid))
    signalled = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - signalled
    assert_all_gone(seen)
    if signum == signal.SIGKILL:
        return  # nothing can be written; nothing may be left running
    assert took < 15, f"verify took {took:.0f} s to stop"
    assert proc.returncode == 128 + signum, stderr[-2000:]
    data = json.loads(report.read_text())
    tone, overlay = [t["status"] for t in data["targets"]]
    # the tone curve may have finished before the signal (a warm Inductor cache compiles
    # it in a second): then its result is kept; the stalled overlay never finishes
    assert tone in ("not-run", "pass") and overlay == "not-run"
    assert any("interrupted" in note for note in data["notes"])


@pytest.mark.slow
def test_a_dead_fork_server_is_noticed_and_the_next_target_still_runs(tmp_path):
    """Watchdog: SIGKILL the fork server while its worker hangs. The hung target is
    reported (its worker died with the server), the next one runs in a fresh interpreter,
    and verify finishes instead of waiting forever."""
    report = tmp_path / "report.json"
    proc = _start_verify(tmp_path, report)
    servers = set()
    first_seen: dict[int, float] = {}

    def worker_at_work():
        # a worker seen alive for 2 s is mid-target, not one that has reported and is
        # exiting: killing the server under an exiting worker killed nothing that mattered,
        # and the test failed under CPU load (the tone curve passed, the overlay then ran
        # in a fresh interpreter: no SIGKILL to report)
        now = time.monotonic()
        for server in fork_servers_with_a_worker(proc.pid):
            for pid in _children_of(server):  # its forked workers (a compiler pool lives longer)
                if "compile_lint.verify.forkserver" in _cmdline(pid) and now - first_seen.setdefault(pid, now) >= 2.0:
                    servers.add(server)
        return bool(servers) or proc.poll() is not None

    assert wait_until(worker_at_work, 300, step=0.2), "no worker started"
    worker = set().union(*(descendants(s) for s in servers))
    for server in servers:
        os.kill(server, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=900)
    assert_all_gone(worker)
    data = json.loads(report.read_text())
    by_name = {t["target"].rsplit(":", 1)[1]: t for t in data["targets"]}
    tone, stalled = by_name["ToneCurve"], by_name["LiveOverlay"]
    killed = [t for t in (tone, stalled) if t["status"] == "error"
              and any(c["name"] == "worker" and "SIGKILL" in c["message"] for c in t["checks"])]
    assert len(killed) == 1, data  # the one whose worker died with the server
    if killed[0] is tone:
        # the next target still ran (in a fresh interpreter) and met its own timeout
        (stalled_worker,) = [c for c in stalled["checks"] if c["name"] == "worker"]
        assert stalled["status"] == "could-not-check" and stalled_worker["verdict"] == "timeout", stalled
    else:
        # a warm Inductor cache (an earlier test compiled the tone curve) finished it in
        # a second: the server died under the stalled overlay's worker instead
        assert tone["status"] == "pass", tone
