"""One connection to the daemon: the socket, its line framing, and the
reading of one call's answer (the protocol is specified in
docs/protocol.md).

A request is one line of JSON; the daemon answers each with one line,
{"jsonrpc":"2.0","id":ID,"result":RESULT} or {..."error":{...}}, and may
send "partial" notifications ahead of a streamed call's response. Lines
whose id is not the call's (the answers to its liveness pings, or to a
call given up on) are dropped.
"""

import errno
import json
import os
import select
import socket
import struct
import sys
import threading
import time

from .errors import NoAnswer, RPCError

# The longest response line read (rpc's maxResponseSize): a longer one
# breaks the connection.
MAX_LINE = 256 << 20

# Every success response and partial notification the daemon writes
# starts so, the id following (rpc/server's appendResult and
# queuePartial): such lines are taken apart without decoding them whole.
_RESULT_PREFIX = b'{"jsonrpc":"2.0","id":'
_PARTIAL_PREFIX = b'{"jsonrpc":"2.0","method":"partial","params":{"id":'

# A ping sent as a notification (no id): never answered, it only shows
# the daemon that this client is alive while it reads nothing.
KEEPALIVE = b'{"jsonrpc":"2.0","method":"ping"}\n'


class Broken(Exception):
    """The connection failed: the daemon closed it, or a read or write
    failed. received tells whether any line of the call's answer had
    come (then resending the call could repeat what was handed out)."""

    def __init__(self, cause, received=False):
        super().__init__(cause)
        self.received = received


def dial(path, timeout):
    """Connect to the daemon's socket at path within timeout seconds and
    check that the daemon runs as this user. Raises OSError (ENOENT,
    ECONNREFUSED: nobody listens) or PermissionError (another user)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.0001
        while True:
            try:
                s.setblocking(False)
                s.connect(path)
                break
            except BlockingIOError:
                # The daemon's backlog is full: a blocking connect would
                # wait for room, so wait too (as rpc's dialUnix does).
                if time.monotonic() >= deadline:
                    raise OSError(errno.ETIMEDOUT, "connecting to %s took over %gs" % (path, timeout)) from None
                time.sleep(delay)
                delay = min(2 * delay, 0.01)
        s.setblocking(True)
        _check_peer(s)
        return s
    except BaseException:
        s.close()
        raise


def _check_peer(s):
    """Refuse a daemon of another user (SO_PEERCRED, where the platform
    has it: Linux)."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None or not sys.platform.startswith("linux"):
        return
    _, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
    if uid != os.getuid():
        raise PermissionError("indexd: the daemon runs as uid %d, not %d" % (uid, os.getuid()))


class Conn:
    """A connection to the daemon. Calls on it are made one at a time (the
    Client's lock); the write lock lets a stream's keep-alive thread write
    beside the reader."""

    def __init__(self, sock, path):
        self.sock = sock
        self.path = path
        self.buf = bytearray()
        self.scanned = 0  # bytes of buf known to hold no newline
        self.last_read = time.monotonic()  # when bytes last came
        self.wlock = threading.Lock()  # guards writes and pending
        self.pending = b""  # the rest of a keep-alive that did not fit
        self.next_id = 0
        self.pid = os.getpid()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def gone(self):
        """Whether the daemon has closed the connection (or this process
        is a fork of the one that made it). Lines waiting unread (answers
        to calls given up on) are dropped."""
        if os.getpid() != self.pid:
            return True
        while True:
            try:
                r, _, _ = select.select([self.sock], [], [], 0)
            except (OSError, ValueError):
                return True
            if not r:
                return False
            try:
                data = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not data:
                return True
            self.buf += data
            self.last_read = time.monotonic()
            i = self.buf.rfind(b"\n")
            if i >= 0:
                del self.buf[: i + 1]
            self.scanned = 0

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def send(self, line, timeout):
        """Write one request line within timeout seconds (None: no bound).
        A failed or partial write leaves the connection unusable. Only
        the thread reading the connection calls it (the socket's timeout
        is the reader's)."""
        with self.wlock:
            try:
                self.sock.settimeout(timeout)
                if self.pending:
                    self.sock.sendall(self.pending)
                    self.pending = b""
                self.sock.sendall(line)
            except OSError as e:
                raise Broken(e) from e

    def send_nowait(self, line):
        """Write a line without waiting and without touching the socket's
        timeout (a stream's keep-alive thread, beside the reader): what
        does not fit now is written before the next line. Errors are left
        to the reader, which sees the connection end."""
        with self.wlock:
            data = self.pending + line
            try:
                n = self.sock.send(data, socket.MSG_DONTWAIT)
            except BlockingIOError:
                n = 0
            except OSError:
                return
            self.pending = data[n:]

    def read_line(self, timeout):
        """The next line, without its newline, or None when none came
        within timeout seconds. Raises Broken when the connection ends."""
        while True:
            i = self.buf.find(b"\n", self.scanned)
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 1]
                self.scanned = 0
                return line
            self.scanned = len(self.buf)
            if len(self.buf) > MAX_LINE:
                raise Broken("a response line over %d bytes" % MAX_LINE)
            try:
                self.sock.settimeout(max(timeout, 0.0) if timeout is not None else None)
                data = self.sock.recv(1 << 20 if len(self.buf) > 1 << 16 else 1 << 16)
            except socket.timeout:
                return None
            except OSError as e:
                raise Broken(e) from e
            if not data:
                raise Broken("the daemon closed the connection")
            self.buf += data
            self.last_read = time.monotonic()


# The longest request line the daemon reads (rpc.DefaultMaxRequestSize,
# its newline aside): it answers a longer one with an error whose id is
# null, which no call could be told of, so it is refused here.
MAX_REQUEST = 1 << 20


def encode_params(params):
    """params as the JSON text of a request (None for none). ValueError for
    values that are not JSON (NaN, infinities) and for a request that
    would be over MAX_REQUEST; TypeError for values JSON has no form of."""
    if params is None:
        return None
    text = json.dumps(params, separators=(",", ":"), allow_nan=False)
    if len(text) > MAX_REQUEST - 64:  # the rest of a request line is shorter
        raise ValueError("indexd: request too large (%d bytes of params, limit %d for the whole request)" % (len(text), MAX_REQUEST))
    return text


def request_line(rid, method, params_json):
    """A request line, its params given as JSON text (encode_params); rid
    None makes a notification."""
    req = '{"jsonrpc":"2.0",'
    if rid is not None:
        req += '"id":%d,' % rid
    req += '"method":' + json.dumps(method)
    if params_json is not None:
        req += ',"params":' + params_json
    return (req + "}\n").encode()


class Exchange:
    """Sends one call (its params already encode_params's JSON text) and
    reads its answer: its partial notifications, then its result, within
    the silence rule of rpc's Client (see docs/protocol.md, "What indexctl
    does as a client"): when nothing at all has come for half the answer
    timeout, a ping is sent, which a live daemon answers at once; when
    nothing has come for the whole answer timeout, NoAnswer. deadline
    (time.monotonic(), or None) bounds the whole call."""

    def __init__(self, conn, method, params_json, answer_timeout, deadline):
        self.conn = conn
        self.method = method
        self.answer_timeout = answer_timeout
        self.deadline = deadline
        self.rid = conn.new_id()
        self.received = False
        self.sent = time.monotonic()
        conn.send(request_line(self.rid, method, params_json), answer_timeout or None)
        self.probed = None  # when the last liveness ping was sent

    def next(self):
        """("partial", data bytes) or ("result", result bytes): the next
        part of the answer. Raises NoAnswer, RPCError or Broken."""
        conn = self.conn
        try:
            while True:
                wait = self._wait()
                line = conn.read_line(wait)
                if line is None:
                    continue
                kind, payload = self._take(line)
                if kind is not None:
                    self.received = True
                    return kind, payload
        except Broken as e:
            e.received = self.received
            raise

    def resumed(self):
        """The caller is back from handling a part: the silence counts
        from now (its own time is not the daemon's)."""
        self.conn.last_read = time.monotonic()

    def _wait(self):
        """How long to read before looking again; raises NoAnswer when
        the time is up, and sends the liveness ping when due."""
        now = time.monotonic()
        wait = None
        if self.deadline is not None:
            if now >= self.deadline:
                raise NoAnswer(self.conn.path, self.method, self.deadline - self.sent, False)
            wait = self.deadline - now
        if self.answer_timeout:
            quiet = now - max(self.conn.last_read, self.sent)
            if quiet >= self.answer_timeout:
                raise NoAnswer(self.conn.path, self.method, self.answer_timeout, True)
            half = self.answer_timeout / 2
            if quiet >= half:
                if self.probed is None or self.conn.last_read > self.probed:
                    self.probed = now
                    self.conn.send(request_line(self.conn.new_id(), "ping", None), self.answer_timeout)
                nxt = self.answer_timeout - quiet
            else:
                nxt = half - quiet
            wait = nxt if wait is None else min(wait, nxt)
        return wait

    def _take(self, line):
        """The part of the answer a line is, or (None, None) for a line
        of no concern to this call."""
        rid = self.rid
        if line.startswith(_RESULT_PREFIX):
            rest = line[len(_RESULT_PREFIX):]
            head = b"%d," % rid
            if rest.startswith(head + b'"result":') and line.endswith(b"}"):
                return "result", rest[len(head) + 9 : -1]
        elif line.startswith(_PARTIAL_PREFIX):
            rest = line[len(_PARTIAL_PREFIX):]
            head = b"%d," % rid
            if rest.startswith(head + b'"data":') and line.endswith(b"}}"):
                return "partial", rest[len(head) + 7 : -2]
            if rest[:1].isdigit():
                return None, None  # another call's part
        try:
            msg = json.loads(line)
        except ValueError:
            raise Broken("malformed response: %.100r" % line) from None
        if not isinstance(msg, dict):
            raise Broken("malformed response: %.100r" % line)
        if msg.get("method") == "partial" and "id" not in msg:
            params = msg.get("params") or {}
            if params.get("id") == rid:
                return "partial", json.dumps(params.get("data")).encode()
            return None, None
        if msg.get("id") != rid:
            return None, None  # a ping's answer, or a call given up on
        err = msg.get("error")
        if err is not None:
            raise RPCError(err.get("code", 0), err.get("message", ""), err.get("data"))
        return "result", json.dumps(msg.get("result")).encode()
