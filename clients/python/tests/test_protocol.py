"""The client's side of the protocol against a fake daemon whose faults
are scripted: a daemon that hangs, one that answers only pings, one that
drops connections, a stream broken after a batch, a stream's keep-alive
while its consumer holds a batch, an error response, and a daemon of
another user."""

import json
import os
import queue
import shutil
import socket
import sys
import tempfile
import threading
import unittest

import indexd
from indexd.tools import GrepTool

ENVELOPE = {"status": "success", "data": {"paths": [], "truncated": False}, "text": "No files found", "stats": {"time_ms": 0}, "context": {"cwd": ".", "params_input": {}}}

# How long a test waits for an event of the fake's or the client's.
DEADLINE = 30


class FakeDaemon:
    """A Unix socket server answering each connection with script(n, conn),
    run on a goroutine-like thread of its own (n counts connections from
    0). Every request line read goes to self.requests as (n, message).
    close() stops accepting and waits for its threads; a script's thread
    ends when its client hangs up."""

    def __init__(self, path, script):
        self.path = path
        self.script = script
        self.requests = queue.Queue()
        self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lsock.bind(path)
        self.lsock.listen(8)
        self.threads = []
        self.acceptor = threading.Thread(target=self._accept)
        self.acceptor.start()

    def _accept(self):
        n = 0
        while True:
            try:
                s, _ = self.lsock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(n, s))
            self.threads.append(t)
            t.start()
            n += 1

    def _serve(self, n, s):
        conn = FakeConn(self, n, s)
        try:
            self.script(n, conn)
        except OSError:
            pass
        finally:
            s.close()

    def close(self):
        try:
            self.lsock.shutdown(socket.SHUT_RDWR)  # wakes accept
        except OSError:
            pass
        self.lsock.close()
        self.acceptor.join(DEADLINE)
        for t in self.threads:
            t.join(DEADLINE)


class FakeConn:
    def __init__(self, fake, n, s):
        self.fake, self.n, self.s = fake, n, s
        self.f = s.makefile("rb")

    def read(self):
        """The next request, or None at the end of the connection."""
        line = self.f.readline()
        if not line:
            return None
        msg = json.loads(line)
        self.fake.requests.put((self.n, msg))
        return msg

    def send(self, msg):
        self.s.sendall((json.dumps(msg, separators=(",", ":")) + "\n").encode())

    def drain(self):
        """Read until the client hangs up."""
        while self.read() is not None:
            pass


def result(rid, res):
    return {"jsonrpc": "2.0", "id": rid, "result": res}


def partial(rid, data):
    return {"jsonrpc": "2.0", "method": "partial", "params": {"id": rid, "data": data}}


class FakeTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fake-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "s.sock")

    def fake(self, script):
        f = FakeDaemon(self.path, script)
        self.addCleanup(f.close)
        return f

    def client(self, **kw):
        # indexctl is never run: a start would be a failure of the test.
        c = indexd.Client(self.tmp, socket=self.path, indexctl=os.path.join(self.tmp, "no-indexctl"), **kw)
        self.addCleanup(c.close)
        return c

    def methods(self, fake):
        out = []
        while not fake.requests.empty():
            n, m = fake.requests.get_nowait()
            out.append((n, m.get("method"), "id" in m))
        return out


class TestProtocol(FakeTestCase):
    def test_hung_daemon(self):
        fake = self.fake(lambda n, conn: conn.drain())
        c = self.client(answer_timeout=0.3)
        with self.assertRaises(indexd.NoAnswer) as cm:
            c.glob(pattern="*")
        e = cm.exception
        self.assertTrue(e.silent)
        self.assertIsInstance(e, TimeoutError)
        self.assertEqual(str(e), "indexd did not answer within 300ms (socket %s)" % self.path)
        c.close()  # the fake's script ends when the client hangs up
        fake.close()
        # The call, then one liveness ping halfway through the silence.
        self.assertEqual(self.methods(fake), [(0, "glob", True), (0, "ping", True)])

    def test_hung_daemon_through_a_tool(self):
        # run() answers with an envelope all the same: TIMEOUT, as the MCP
        # server's tools do.
        self.fake(lambda n, conn: conn.drain())
        tool = GrepTool(client=self.client(answer_timeout=0.3))
        got = json.loads(tool.run({"pattern": "x"}))
        self.assertEqual(got, {
            "status": "error",
            "data": {},
            "text": "Error: indexd did not answer within 300ms (socket %s); try 'indexctl stop'" % self.path,
            "stats": {"time_ms": 0},
            "context": {"cwd": ".", "params_input": {"pattern": "x"}},
            "error": {"code": "TIMEOUT", "message": "indexd did not answer within 300ms (socket %s); try 'indexctl stop'" % self.path},
        })

    def test_slow_answer_of_a_live_daemon(self):
        # The daemon answers the call only after the client's third
        # liveness ping, well past the answer timeout of silence: a live
        # daemon's slow answer is waited for.
        def script(n, conn):
            call, pings = None, 0
            while True:
                m = conn.read()
                if m is None:
                    return
                if m["method"] != "ping":
                    call = m
                    continue
                conn.send(result(m["id"], "pong"))
                pings += 1
                if pings == 3:
                    conn.send(result(call["id"], ENVELOPE))

        self.fake(script)
        self.assertEqual(self.client(answer_timeout=1.0).glob(pattern="*"), ENVELOPE)

    def test_alive_daemon_past_the_deadline(self):
        def script(n, conn):
            while True:
                m = conn.read()
                if m is None:
                    return
                if m["method"] == "ping":
                    conn.send(result(m["id"], "pong"))

        self.fake(script)
        c = self.client(answer_timeout=60)
        with self.assertRaises(indexd.NoAnswer) as cm:
            c.grep({"pattern": "x"}, timeout=0.2)
        self.assertFalse(cm.exception.silent)
        self.assertEqual(cm.exception.method, "grep")

    def test_connection_closed_before_the_answer_is_asked_again(self):
        def script(n, conn):
            m = conn.read()
            if n == 0:
                return  # hang up without answering
            conn.send(result(m["id"], ENVELOPE))
            conn.drain()

        fake = self.fake(script)
        c = self.client()
        self.assertEqual(c.glob(pattern="*"), ENVELOPE)
        c.close()
        fake.close()
        self.assertEqual(self.methods(fake), [(0, "glob", True), (1, "glob", True)])

    def test_connection_closed_twice(self):
        self.fake(lambda n, conn: conn.read())
        c = self.client()
        with self.assertRaisesRegex(indexd.ConnectionLost, "connection to the daemon on %s was lost" % self.path):
            c.glob(pattern="*")

    def test_stream_broken_after_a_batch(self):
        def script(n, conn):
            m = conn.read()
            conn.send(partial(m["id"], {"cwd": ".", "paths": ["a"]}))
            # then hang up: the batch was handed out, so no retry.

        fake = self.fake(script)
        s = self.client().stream("Glob", pattern="*")
        self.assertEqual(next(s), {"cwd": ".", "paths": ["a"]})
        with self.assertRaises(indexd.ConnectionLost):
            next(s)
        fake.close()
        self.assertEqual([x[:2] for x in self.methods(fake)], [(0, "glob")])

    def test_stream_keepalive_while_the_consumer_holds_a_batch(self):
        heard = threading.Event()

        def script(n, conn):
            m = conn.read()
            self.assertEqual((m["params"]["unlimited"], m["params"]["stream"]), (True, True))
            conn.send(partial(m["id"], {"cwd": ".", "paths": ["a"]}))
            while True:
                k = conn.read()
                if k is None:
                    return
                if k["method"] == "ping" and "id" not in k:
                    break  # the keep-alive: a notification
            heard.set()
            conn.send(result(m["id"], ENVELOPE))
            conn.drain()

        self.fake(script)
        c = self.client(answer_timeout=1.0)
        with c.stream("Glob", pattern="*") as s:
            batches = []
            for b in s:
                batches.append(b)
                # The consumer's own work, longer than the answer
                # timeout: the daemon hears from the client meanwhile, and
                # the client does not count the time as the daemon's.
                self.assertTrue(heard.wait(DEADLINE), "no keep-alive came")
        self.assertEqual(batches, [{"cwd": ".", "paths": ["a"]}])
        self.assertEqual(s.envelope, ENVELOPE)

    def test_error_response(self):
        def script(n, conn):
            m = conn.read()
            conn.send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32602, "message": "invalid params: missing root"}})
            m = conn.read()
            conn.send(result(m["id"], ENVELOPE))
            conn.drain()

        fake = self.fake(script)
        c = self.client()
        with self.assertRaises(indexd.RPCError) as cm:
            c.ls()
        self.assertEqual((cm.exception.code, cm.exception.message), (-32602, "invalid params: missing root"))
        # The connection is kept.
        self.assertEqual(c.ls(), ENVELOPE)
        c.close()
        fake.close()
        self.assertEqual([x[0] for x in self.methods(fake)], [0, 0])

    def test_stale_answers_are_dropped(self):
        # Answers to other ids (a ping's, a call given up on) come first.
        def script(n, conn):
            m = conn.read()
            conn.send(result(m["id"] + 100, "pong"))
            conn.send(partial(m["id"] + 100, {"cwd": ".", "paths": ["x"]}))
            conn.send(result(m["id"], ENVELOPE))
            conn.drain()

        self.fake(script)
        self.assertEqual(self.client().glob(pattern="*", unlimited=True), ENVELOPE)

    def test_requests_the_daemon_would_refuse(self):
        # Refused before they are sent: the daemon's answer to them would
        # name no call.
        fake = self.fake(lambda n, conn: conn.drain())
        c = self.client()
        with self.assertRaisesRegex(ValueError, r"request too large \(\d+ bytes of params, limit 1048576 for the whole request\)"):
            c.grep(pattern="x" * (1 << 20))
        with self.assertRaises(ValueError):
            c.grep(pattern="x", limit=float("nan"))
        with self.assertRaises(TypeError):
            c.grep(pattern=object())
        c.close()
        fake.close()
        self.assertEqual(self.methods(fake), [])

    def test_no_daemon_and_no_indexctl(self):
        c = self.client()
        with self.assertRaisesRegex(indexd.DaemonUnavailable, "no daemon answers on %s, and .*no-indexctl, which starts it, was not found" % self.path):
            c.glob(pattern="*")

    @unittest.skipUnless(os.getuid() == 0 and sys.platform.startswith("linux"), "needs root to run a daemon as another user")
    def test_daemon_of_another_user(self):
        # The socket is bound here; the child becomes user nobody before it
        # listens, and the kernel records the listener's credentials then.
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(self.path)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: a daemon of user nobody
            code = 1
            try:
                os.close(r)
                os.setgid(65534)
                os.setuid(65534)
                ls.listen(1)
                ls.settimeout(DEADLINE)
                os.write(w, b"ready")
                c, _ = ls.accept()
                c.recv(1)  # until the client hangs up
                code = 0
            finally:
                os._exit(code)
        ls.close()
        os.close(w)
        self.addCleanup(os.waitpid, pid, 0)
        with os.fdopen(r, "rb") as f:
            self.assertEqual(f.read(5), b"ready")
        c = indexd.Client(self.tmp, socket=self.path, indexctl=os.path.join(self.tmp, "no-indexctl"))
        with self.assertRaisesRegex(indexd.DaemonUnavailable, "the daemon runs as uid 65534, not 0"):
            c.status()


if __name__ == "__main__":
    unittest.main()
