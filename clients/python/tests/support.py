"""What the tests share: a private daemon, a fixture tree, indexctl.

The tests run against the real daemon, built from the checkout: indexctl
and indexd must be on PATH (.ci/run builds them there; by hand:
`go build -o /tmp/indexd-bin ./cmd/... && PATH=/tmp/indexd-bin:$PATH
python3 -m unittest` in clients/python). They never touch the user's
daemon: setup() points INDEXD_SOCKET, XDG_RUNTIME_DIR and XDG_STATE_HOME
(and HOME, for git's global excludes) at a private directory for the
whole test process, and every module's tearDownModule calls finish(),
which stops the daemon and checks that no process of that directory is
left running.
"""

import atexit
import copy
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

INDEXCTL = shutil.which("indexctl")
if INDEXCTL is None or shutil.which("indexd") is None:
    raise RuntimeError(
        "indexctl and indexd must be on PATH: build them from the checkout with "
        "'go build -o DIR ./cmd/...' and put DIR first on PATH"
    )

# The private directory of this test process (see setup).
BASE = None
# The pids of every daemon a test saw (Client.status), checked gone by finish.
SEEN = set()


def setup():
    """Point the daemon's socket, runtime and state directories (and HOME)
    at a private directory, once per test process."""
    global BASE
    if BASE is not None:
        return
    BASE = tempfile.mkdtemp(prefix="indexd-py-")
    atexit.register(shutil.rmtree, BASE, True)
    home = os.path.join(BASE, "home")
    os.makedirs(home)
    os.environ.update(
        {
            "INDEXD_SOCKET": os.path.join(BASE, "run", "indexd.sock"),
            "XDG_RUNTIME_DIR": os.path.join(BASE, "run"),
            "XDG_STATE_HOME": os.path.join(BASE, "state"),
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "HOME": home,
        }
    )
    os.makedirs(os.path.join(BASE, "run"), mode=0o700)


def socket_path():
    return os.environ["INDEXD_SOCKET"]


def indexctl(*args, cwd=None, env=None, check=False, timeout=120):
    """Run indexctl; returns the CompletedProcess (text)."""
    e = dict(os.environ)
    if cwd is not None:
        e["PWD"] = cwd  # indexctl's current directory is the path taken
    if env:
        e.update(env)
    p = subprocess.run((INDEXCTL,) + args, cwd=cwd, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("indexctl %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def indexctl_json(tool, args, cwd, *extra):
    """The envelope `indexctl --json --voice agent TOOL --args ARGS`
    prints, run in cwd: worded for an agent (parameter names, not
    flags), as the client's answers are."""
    p = indexctl(tool, "--json", "--voice", "agent", *extra, "--args", json.dumps(args), cwd=cwd)
    if not p.stdout.startswith("{"):
        raise AssertionError("indexctl %s --json --args %s printed no envelope (exit %d): %s" % (tool, json.dumps(args), p.returncode, p.stderr))
    return json.loads(p.stdout)


_TIMING = re.compile(r"\b(Took|in) \d+ms\b")


def mask(env):
    """The envelope with its timing aside: stats.time_ms and the "Took
    Nms" / "in Nms" of its text."""
    env = copy.deepcopy(env)
    if isinstance(env.get("stats"), dict) and "time_ms" in env["stats"]:
        env["stats"]["time_ms"] = 0
    if isinstance(env.get("text"), str):
        env["text"] = _TIMING.sub(r"\1 Nms", env["text"])
    return env


def track(client):
    """Note the pid of the daemon answering client, and return it."""
    pid = client.status()["pid"]
    SEEN.add(pid)
    return pid


def wait_exit(pid, timeout=30):
    """Wait until the process pid (not a child of ours) has exited, on its
    pidfd: it becomes readable when the process ends."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            raise AssertionError("process %d did not exit within %ss" % (pid, timeout))
    finally:
        os.close(fd)


def alive(pid):
    """Whether pid is a live process (not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def ours():
    """The live processes whose command line names the private directory
    (a daemon's socket or state)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if BASE in cmd and alive(int(d)):
            found.append("%s: %s" % (d, cmd.strip()))
    return found


def finish():
    """Stop the daemon, and fail if any daemon seen, or any process of the
    private directory, is still running."""
    indexctl("stop", check=True)
    for pid in sorted(SEEN):
        wait_exit(pid)
    left = ours()
    if left:
        raise AssertionError("left running: %s" % "; ".join(left))


def kill(pid):
    """SIGKILL the daemon pid and wait until it is gone."""
    os.kill(pid, signal.SIGKILL)
    wait_exit(pid)


def wait_until(cond, what, timeout=30):
    """Wait for cond() to hold, checking with a growing interval, or fail
    after timeout seconds (for a state of another process that sends no
    event: a socket that starts answering)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while not cond():
        if time.monotonic() >= deadline:
            raise AssertionError("timed out waiting for %s" % what)
        time.sleep(delay)
        delay = min(2 * delay, 0.05)


# The fixture tree.

FILES = [
    # (path, contents), oldest first: Grep lists the last one first.
    ("a.go", "package a\n\nfunc Alpha() {}\n\n// TODO: alpha\n"),
    ("src/b.py", "def beta():\n    return 'TODO beta'\n"),
    ("src/lib/c.ts", "export const gamma = 1 // TODO gamma\nexport const Gamma = 2\n"),
    ("docs/readme.md", "# Readme\nTODO docs\nnothing else\n"),
    (".hidden/h.txt", "TODO hidden\n"),
    ("node_modules/m/index.js", "// TODO module\n"),
    ("ignored.log", "TODO ignored\n"),
    (".gitignore", "*.log\n"),
    ("sp ace.txt", "TODO space\n"),
    ("quo\"te.txt", "TODO quote\n"),
    ("bin.dat", "TODO\0binary\n"),
]

# gen/ holds GEN files with one "needle N" line each: more results than a
# stream's batch (1024) and than the agents' maximum (1000).
GEN = 2500


def make_tree(root):
    """Write the fixture tree under root (a git work tree), each file with
    its own mtime, in FILES' order, then gen/."""
    os.makedirs(root, exist_ok=True)
    subprocess.run(["git", "init", "-q", root], check=True)
    base = 1700000000
    for i, (path, text) in enumerate(FILES):
        p = os.path.join(root, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        os.utime(p, (base + i * 3600, base + i * 3600))
    gen = os.path.join(root, "gen")
    os.makedirs(gen)
    for i in range(GEN):
        p = os.path.join(gen, "f%04d.txt" % i)
        with open(p, "w") as f:
            f.write("line one\nneedle %d\n" % i)
        os.utime(p, (base - i, base - i))


class DaemonTestCase(unittest.TestCase):
    """A test case with the fixture tree in self.root (made once per
    class) and its index ready."""

    @classmethod
    def setUpClass(cls):
        setup()
        cls.tmp = tempfile.mkdtemp(prefix="tree-", dir=BASE)
        cls.root = os.path.join(cls.tmp, "repo")
        make_tree(cls.root)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def client(self, **kw):
        import indexd

        kw.setdefault("cwd", self.root)
        c = indexd.Client(**kw)
        self.addCleanup(c.close)
        return c

    def ready(self, client):
        """Index the client's root and wait until its index is ready."""
        st = client.index(wait=True)
        self.assertEqual(st["state"], "ready", st)
        track(client)
