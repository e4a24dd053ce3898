"""A client outlives its daemon: a killed daemon is restarted by the next
call, and a client left idle keeps working after the daemon was replaced
by another build or exited idle. Nothing is left running (finish)."""

import os
import shutil
import subprocess
import unittest

import indexd
from indexd._conn import dial

from . import support


def setUpModule():
    support.setup()


def tearDownModule():
    support.finish()


def answers(path):
    """Whether a daemon answers on the socket at path."""
    try:
        dial(path, 1.0).close()
        return True
    except OSError:
        return False


class TestRestart(support.DaemonTestCase):
    def matches(self, env):
        return [(m["file"], m["line"]) for m in env["data"]["matches"]]

    def test_killed_daemon_is_restarted_by_the_next_call(self):
        c = self.client()
        self.ready(c)
        before = c.grep(pattern="alpha|beta")
        self.assertEqual(self.matches(before), [("src/b.py", 1), ("src/b.py", 2), ("a.go", 3), ("a.go", 5)])
        pid = support.track(c)
        support.kill(pid)
        self.assertFalse(answers(support.socket_path()))
        after = c.grep(pattern="alpha|beta")
        self.assertEqual(self.matches(after), self.matches(before))
        self.assertNotEqual(support.track(c), pid)

    def test_idle_client_after_another_build_replaced_the_daemon(self):
        c = self.client()
        self.ready(c)
        before = c.grep(pattern="gamma")
        st = c.status()
        support.track(c)
        # Another build: copies of indexctl and its engine whose Go build
        # ID (the one string build checks compare) differs.
        other = os.path.join(self.tmp, "other")
        os.mkdir(other)
        for name in ("indexctl", "indexd"):
            shutil.copy2(shutil.which(name), os.path.join(other, name))
        engine = os.path.join(other, "indexd")
        with open(engine, "rb") as f:
            data = f.read()
        old = st["build"].encode()
        self.assertEqual(data.count(old), 1, "the engine's build ID %s" % st["build"])
        new = old[:-1] + (b"A" if old[-1:] != b"A" else b"B")
        with open(engine, "wb") as f:
            f.write(data.replace(old, new))
        # Its first query replaces the daemon (indexctl's build rule)...
        p = subprocess.run([os.path.join(other, "indexctl"), "ls", "--json", "--args", '{"limit":1}'], cwd=self.root,
                           env=dict(os.environ, PWD=self.root), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        # ... and the idle client, whose connection that closed, is
        # answered by the new one.
        now = c.status()
        support.track(c)
        self.assertEqual(now["build"], new.decode())
        self.assertNotEqual(now["pid"], st["pid"])
        self.assertEqual(self.matches(c.grep(pattern="gamma")), self.matches(before))

    def test_idle_client_after_the_daemon_exited_idle(self):
        c = self.client()
        self.ready(c)
        before = c.grep(pattern="docs")
        support.track(c)
        support.indexctl("stop", check=True)
        # A daemon of our own that stops after a second without requests.
        with open(os.path.join(self.tmp, "daemon.out"), "w") as out:
            proc = subprocess.Popen([support.INDEXCTL, "daemon", "--idle-exit", "1s"], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        self.addCleanup(_end, proc)
        support.wait_until(lambda: answers(support.socket_path()) or proc.poll() is not None, "the daemon to answer")
        self.assertIsNone(proc.poll(), "the daemon exited")
        self.assertEqual(self.matches(c.grep(pattern="docs")), self.matches(before))
        self.assertEqual(c.index(wait=True)["state"], "ready")  # nothing building: it may go idle
        self.assertEqual(c.status()["pid"], proc.pid)
        self.assertEqual(proc.wait(timeout=60), 0)
        after = c.grep(pattern="docs")
        self.assertEqual(self.matches(after), self.matches(before))
        self.assertNotEqual(support.track(c), proc.pid)

    def test_status_never_starts_a_daemon(self):
        c = self.client()
        support.indexctl("stop", check=True)
        with self.assertRaisesRegex(indexd.DaemonUnavailable, "indexd is not running"):
            c.status()
        self.assertFalse(answers(support.socket_path()))


def _end(proc):
    """End our own daemon process if a failed test left it running."""
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    unittest.main()
