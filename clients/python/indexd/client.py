"""The client of the indexd daemon: one persistent connection, the tool
calls (Glob, Grep, LS, Changes) answered with the daemon's envelope, and
unlimited answers as an iterator over their streamed batches.

Which daemon answers. A Python client has no build of its own, so it
never judges a daemon's build: it talks to whatever daemon answers on
the socket. When none answers, it starts one through indexctl (see
Client._start), so that which engine runs as the daemon (indexctl's
build rule: a daemon of another build than indexctl's engine is
replaced) and where its state lives stay decided in one place. A daemon
of another build already running keeps serving this client until
indexctl, on its next call, replaces it; the client then reconnects to
the new one on its own.

Reconnection. A call whose connection turns out to be closed (the daemon
was stopped, killed, replaced, exited idle, or dropped the connection
after five quiet minutes) before any of its answer came is made again,
once, on a new connection, starting the daemon first when none answers:
the tool calls only read, so asking twice is harmless. A stream whose
connection breaks after a batch was handed out is not: it raises
ConnectionLost.
"""

import json
import os
import subprocess
import threading
import time
import weakref

from . import _defs
from ._conn import KEEPALIVE, Broken, Conn, Exchange, dial, encode_params
from ._locate import clean, default_socket_path, getwd, locate
from .errors import ConnectionLost, DaemonUnavailable, IndexdError, NoAnswer, RPCError

# The default of a call's timeout: the tool's own time limit plus this
# margin (internal/client's requestMargin), for the daemon's
# read-your-writes barrier, a fallback walk and the answer's way back on
# a busy machine.
REQUEST_MARGIN = 30.0

# The time limit of a tool call without timeout_ms: Grep's default
# timeout_ms, which is also Glob's search bound and what LS is given
# (envelope.GlobMaxDurationMS, tool.GrepDefaultTimeoutMS).
_GREP_TIMEOUT = _defs.lookup("Grep")["input_schema"]["properties"]["timeout_ms"]
DEFAULT_TOOL_LIMIT = _GREP_TIMEOUT["default"] / 1000.0

_DEFAULT = object()  # a call's timeout when none is given


def request_timeout(tool, args, unlimited):
    """How long a tool call waits for its answer by default, as indexctl
    does (internal/client.RequestTimeout): the tool's time limit (Grep's
    timeout_ms, unreadable counted as its largest) plus REQUEST_MARGIN;
    None (no bound) for an unlimited call without a timeout_ms. A daemon
    that is hung is caught long before by the answer timeout."""
    ms = 0 if unlimited else _GREP_TIMEOUT["default"]
    if tool == "Grep" and isinstance(args, dict) and args.get("timeout_ms") is not None:
        v = args["timeout_ms"]
        ms = _GREP_TIMEOUT["maximum"]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 1 <= v < ms:
            ms = int(v)
    if ms == 0:
        return None
    return ms / 1000.0 + REQUEST_MARGIN


class Client:
    """A connection to the indexd daemon, for one workspace root.

    root: the workspace root; default as indexctl finds it: the nearest
    ancestor of the current directory holding .git, else the current
    directory (and then the daemon may answer from a deeper root it
    already serves, as it does for indexctl). cwd: the directory the
    calls are made from (relative paths in arguments are resolved against
    it); default this process's. socket: the daemon's socket; default as
    indexctl finds it ($INDEXD_SOCKET, $XDG_RUNTIME_DIR/indexd/indexd.sock,
    ~/.cache/indexd/indexd.sock). indexctl: the program that starts the
    daemon when none answers (default "indexctl" on PATH).

    answer_timeout: a call fails with NoAnswer once nothing at all has
    come from the daemon for this many seconds (halfway, a ping checks
    that it is alive, so a slow answer from a live daemon is waited for);
    connect_timeout bounds connecting; start_timeout bounds indexctl's
    start of the daemon (a development build of indexctl may compile its
    engine first).

    The client is safe to share between threads: its calls are made one
    at a time on its one connection (a stream has a connection of its
    own). Close it when done, or use it as a context manager.
    """

    def __init__(self, root=None, *, cwd=None, socket=None, indexctl=None, answer_timeout=10.0, connect_timeout=5.0, start_timeout=120.0):
        self._place = locate(root, cwd)
        self._root_named = root is not None
        self.socket = clean(os.path.join(getwd(), os.fspath(socket))) if socket else default_socket_path()
        self.indexctl = indexctl or "indexctl"
        self.answer_timeout = answer_timeout
        self.connect_timeout = connect_timeout
        self.start_timeout = start_timeout
        self._lock = threading.Lock()  # one call at a time on _conn
        self._conn = None  # the connection, made on first use

    @property
    def root(self):
        """The workspace root sent with each call (absolute, symbolic links
        not resolved)."""
        return self._place.root

    @property
    def cwd(self):
        """The calls' directory relative to the root ("." when outside it)."""
        return self._place.cwd

    @property
    def root_from(self):
        """How the root was found: "git" or "cwd"; "" when it was named."""
        return self._place.root_from

    def close(self):
        """Close the connection, once a call in flight on it (in another
        thread) has returned. The client may be used again: it
        reconnects."""
        with self._lock:
            self._drop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # The tools.

    def glob(self, args=None, *, unlimited=False, timeout=_DEFAULT, **params):
        """Glob: find files by pattern. Returns the envelope as a dict.
        Arguments as the agent tool takes them, in args and/or as keywords
        (glob(pattern="**/*.go")); see query for unlimited and timeout."""
        return self.query("Glob", _merge(args, params), unlimited=unlimited, timeout=timeout)

    def grep(self, args=None, *, unlimited=False, timeout=_DEFAULT, **params):
        """Grep: search file contents, newest files first. Returns the
        envelope as a dict; see glob."""
        return self.query("Grep", _merge(args, params), unlimited=unlimited, timeout=timeout)

    def ls(self, args=None, *, unlimited=False, timeout=_DEFAULT, **params):
        """LS: list one directory. Returns the envelope as a dict; see glob."""
        return self.query("LS", _merge(args, params), unlimited=unlimited, timeout=timeout)

    def changes(self, args=None, *, unlimited=False, timeout=_DEFAULT, **params):
        """Changes: the files changed since a clock token. Returns the
        envelope as a dict; see glob."""
        return self.query("Changes", _merge(args, params), unlimited=unlimited, timeout=timeout)

    def query(self, tool, args=None, *, unlimited=False, timeout=_DEFAULT):
        """Call the tool ("Glob", "Grep", "LS" or "Changes") with its
        arguments exactly as an agent gives them, and return the envelope
        as a dict. A tool's fault is an envelope with status "error".

        unlimited: the command line's rules instead of the agents': a
        "limit" of 0 (set when args has none) asks for every result, and a
        larger limit than the agents' maximum is taken, with Glob's
        breakers lifted (indexctl's --all and --limit). The daemon then
        streams Glob's and Grep's results and they are put back together
        here, into the envelope the daemon would have built whole (as
        `indexctl --json --all` prints it); stream() hands them out batch
        by batch instead.

        timeout: the most seconds to wait for the answer (None: no bound);
        default the tool's own time limit plus 30 s, as indexctl waits.

        Raises DaemonUnavailable, ConnectionLost, NoAnswer or RPCError when
        there is no envelope (see indexd.errors)."""
        d = _defs.lookup(tool)
        args = {} if args is None else args
        if unlimited and isinstance(args, dict) and "limit" not in args:
            args = dict(args, limit=0)
        params = self._tool_params(args, unlimited)
        deadline = self._deadline(timeout, tool, args, unlimited)
        if not unlimited:
            return json.loads(self._call(d["method"], params, deadline))
        params["stream"] = params["batch_text"] = True
        whole = _Whole()
        raw = self._call(d["method"], params, deadline, on_partial=whole.add, reset=whole.reset)
        return whole.envelope(json.loads(raw))

    def query_json(self, tool, args=None, *, timeout=_DEFAULT):
        """query's envelope as the JSON text the daemon wrote (str), not
        decoded: what a tool's run() returns."""
        d = _defs.lookup(tool)
        args = {} if args is None else args
        raw = self._call(d["method"], self._tool_params(args, False), self._deadline(timeout, tool, args, False))
        return raw.decode("utf-8")

    def stream(self, tool, args=None, *, text=False, **params):
        """Call Glob or Grep under unlimited's rules (see query) and return
        a Stream: an iterator over the batches of results the daemon sends
        as it finds them (dicts: {"cwd": ..., "paths" | "matches" | "files"
        | "counts": [...]}, with "text", the lines the batch adds to the
        envelope's text, when text is true), in the answer's order. Once
        the iteration ends, Stream.envelope is the answer's envelope: its
        text and stats count every result, its data's list is empty. An
        answer within the agents' limits (a limit up to the tool's
        maximum; LS and Changes always) comes whole in the envelope, with
        no batches. The stream has a connection of its own, so the client
        can be used meanwhile; close the stream (or leave a with block)
        to stop it early: the daemon cancels the rest."""
        d = _defs.lookup(tool)
        args = _merge(args, params)
        if isinstance(args, dict) and "limit" not in args:
            args = dict(args, limit=0)
        p = self._tool_params(args, True)
        p["stream"] = True
        if text:
            p["batch_text"] = True
        return Stream(self, d["method"], p)

    # The daemon.

    def status(self):
        """The daemon's status (a dict: pid, build, socket, roots, ...). It
        never starts a daemon: DaemonUnavailable when none runs."""
        return json.loads(self._call("status", None, None, start=False))

    def index(self, wait=False):
        """Have the daemon index the root now (starting the daemon if none
        runs) and return the root's status; with wait, once its index is
        ready."""
        return json.loads(self._call("index", {"root": self.root, "wait": bool(wait)}, None))

    # Internals.

    def _tool_params(self, args, unlimited):
        """The params of a tool method (rpc.ToolParams)."""
        p = {"root": self.root, "cwd": self.cwd, "args": args}
        if unlimited:
            p["unlimited"] = True
        if self._place.root_from:
            p["root_from"] = self._place.root_from
        return p

    def _deadline(self, timeout, tool, args, unlimited):
        if timeout is _DEFAULT:
            timeout = request_timeout(tool, args, unlimited)
        return None if timeout is None else time.monotonic() + timeout

    def _call(self, method, params, deadline, start=True, on_partial=None, reset=None):
        """Make one call on the client's connection and return its result
        as the JSON bytes the daemon wrote. A connection found broken
        before any of the answer came is replaced and the call made again,
        once (every method called through here may be asked twice)."""
        params = encode_params(params)  # its faults are the caller's, before any connection
        with self._lock:
            for attempt in (0, 1):
                conn = self._connection(start)
                try:
                    ex = Exchange(conn, method, params, self.answer_timeout, deadline)
                    while True:
                        kind, payload = ex.next()
                        if kind == "result":
                            return payload
                        if on_partial is not None:
                            on_partial(payload)
                except Broken as e:
                    self._drop()
                    if attempt == 0:
                        # Nothing was handed out (a whole answer is put
                        # together before it is returned): ask again.
                        if reset is not None:
                            reset()
                        continue
                    raise ConnectionLost("indexd: the connection to the daemon on %s was lost: %s" % (self.socket, e), self.socket) from e
                except NoAnswer:
                    # The answer may still come: the connection is no
                    # longer in step with the calls. Closing it makes the
                    # daemon cancel the call.
                    self._drop()
                    raise
                except BaseException as e:
                    if not _keeps_connection(e):
                        self._drop()
                    raise

    def _drop(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self, start):
        """The client's connection: the one it has while the daemon keeps
        it open, else a new one (see _open)."""
        c = self._conn
        if c is not None and not c.gone():
            return c
        self._drop()
        self._conn = self._open(start)
        return self._conn

    def _open(self, start):
        """A new connection to the daemon; when none answers, start one
        first if start is true. Raises DaemonUnavailable."""
        c = self._dial()
        if c is not None:
            return c
        if not start:
            raise DaemonUnavailable("indexd is not running (%s)" % self.socket, self.socket)
        why = self._start()
        c = self._dial()
        if c is None:
            raise DaemonUnavailable("indexd: no daemon answers on %s after indexctl was run to start one: %s" % (self.socket, why), self.socket)
        return c

    def _dial(self):
        """A connection, or None when nobody listens on the socket."""
        try:
            return Conn(dial(self.socket, self.connect_timeout), self.socket)
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        except OSError as e:
            raise DaemonUnavailable("indexd: cannot connect to %s: %s" % (self.socket, e), self.socket) from e

    def _start(self):
        """Start the daemon through indexctl, and return what indexctl said
        on its standard error (for the message of a start that failed).

        The command is a tool call that needs no index, `indexctl ls
        --json --args '{"limit":1}'` in the client's directory (with
        --root when the client's root was named): indexctl's first call
        starts the engine of its build as the daemon, detached, when none
        answers, and returns once the daemon answers. It is a query rather
        than `indexctl index` because a query finds its root as this
        client's calls do (root_from): indexing the root found here could
        add a root that the daemon, already serving a deeper one, would
        never answer this client from."""
        cmd = self._indexctl_cmd("ls", {"limit": 1})
        try:
            p = subprocess.run(cmd, cwd=self._place.wd, env=self._indexctl_env(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=self.start_timeout)
        except FileNotFoundError:
            raise DaemonUnavailable("indexd: no daemon answers on %s, and %s, which starts it, was not found" % (self.socket, self.indexctl), self.socket) from None
        except subprocess.TimeoutExpired:
            raise DaemonUnavailable("indexd: no daemon answers on %s, and %s did not start one within %gs" % (self.socket, self.indexctl, self.start_timeout), self.socket) from None
        return p.stderr.decode("utf-8", "replace").strip() or "%s exited with status %d" % (self.indexctl, p.returncode)

    def _indexctl_cmd(self, sub, args, voice=None):
        """indexctl's command line for the tool call sub (a method name)
        with args, as this client makes it: --json, its socket, its root
        when named, and with voice, the words of its hints (--voice:
        "agent" names parameters, as the daemon's answers to the client
        do). Run it with cwd=self._place.wd, env=_indexctl_env()."""
        cmd = [self.indexctl, sub, "--json", "--socket", self.socket]
        if voice:
            cmd += ["--voice", voice]
        if self._root_named:
            cmd += ["--root", self.root]
        return cmd + ["--args", json.dumps(args, separators=(",", ":"), allow_nan=False)]

    def _indexctl_env(self):
        """The environment of indexctl: this process's, with PWD naming the
        client's directory, so that indexctl's current directory is the
        path this client took (Go's os.Getwd reads PWD)."""
        env = dict(os.environ)
        env["PWD"] = self._place.wd
        return env


def _keeps_connection(e):
    """Whether the connection is still in step after the exception e left
    a call: only after an error response that ended the call."""
    return isinstance(e, RPCError)


def _merge(args, params):
    """args with the keyword arguments params added (they win)."""
    if not params:
        return args
    if args is None:
        return dict(params)
    if not isinstance(args, dict):
        raise TypeError("arguments given both as %s and as keywords" % type(args).__name__)
    out = dict(args)
    out.update(params)
    return out


class _Whole:
    """The parts of a streamed answer, put back together into the envelope
    the daemon would have built whole (internal/client/whole.go): the
    response's envelope, whose data holds an empty list, with the parts'
    lists in order in that list, and its text followed by "\\n" and the
    parts' texts (when any came)."""

    _KEYS = ("paths", "matches", "files", "counts")

    def __init__(self):
        self.reset()

    def reset(self):
        self.key = None
        self.items = []
        self.text = []

    def add(self, data):
        part = json.loads(data)
        for k in self._KEYS:
            if k in part:
                if self.key is not None and self.key != k:
                    raise Broken("malformed response: a part of the answer holds %s, an earlier one %s" % (k, self.key))
                self.key = k
                self.items.extend(part[k])
        self.text.append(part.get("text", ""))

    def envelope(self, env):
        if self.key is None:
            return env
        data = env.get("data")
        if not isinstance(data, dict) or data.get(self.key) != []:
            raise IndexdError("indexd: malformed response: the envelope of a streamed answer has no empty data.%s" % self.key)
        data[self.key] = self.items
        text = "".join(self.text)
        if text:
            env["text"] = env.get("text", "") + "\n" + text
        return env


class _KeepAlive:
    """A stream's keep-alive: while the stream's consumer holds a batch
    (its own work, not the daemon's), a thread sends a ping notification
    every interval, so that the daemon, whose writer waits for this
    client to read, sees it alive and keeps the connection (docs/protocol.md,
    "Memory: the reply budget"; indexctl's paused pager does the same). The Stream that
    starts the thread stops it and waits for it (stop), when it ends or
    is closed, or when it is collected unclosed."""

    def __init__(self, conn, interval):
        self.conn = conn
        self.interval = interval
        self.busy = False
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._run, name="indexd-keepalive", daemon=True)
        self.thread.start()

    def _run(self):
        while not self.halt.wait(self.interval):
            if self.busy:
                self.conn.send_nowait(KEEPALIVE)

    def stop(self):
        self.halt.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


class Stream:
    """The batches of an unlimited Glob or Grep answer, as they come: see
    Client.stream. envelope is the answer's envelope once the iteration
    has ended (None before)."""

    def __init__(self, client, method, params):
        self.envelope = None
        self._client = client
        self._method = method
        self._params = encode_params(params)
        # The keep-alive, once started, is held apart from the stream so
        # that a stream dropped unclosed is collected and its finalizer
        # stops the thread.
        self._ka = [None]
        self._finalizer = weakref.finalize(self, _stop_keepalive, self._ka)
        self._gen = self._run()

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._gen)

    def close(self):
        """Stop the stream: its connection is closed, and the daemon
        cancels the rest of the answer."""
        self._gen.close()
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _run(self):
        client = self._client
        for attempt in (0, 1):
            conn = client._open(True)
            handed = False
            try:
                ex = Exchange(conn, self._method, self._params, client.answer_timeout, None)
                while True:
                    kind, payload = ex.next()
                    if kind == "result":
                        self.envelope = json.loads(payload)
                        return
                    batch = json.loads(payload)
                    ka = self._ka[0]
                    if ka is None:
                        ka = self._ka[0] = _KeepAlive(conn, (client.answer_timeout or 10.0) / 2)
                    handed = True
                    ka.busy = True
                    try:
                        yield batch
                    finally:
                        ka.busy = False
                        ex.resumed()
            except Broken as e:
                if attempt == 0 and not handed:
                    continue
                raise ConnectionLost("indexd: the connection to the daemon on %s was lost in the middle of a stream: %s" % (client.socket, e), client.socket) from e
            finally:
                _stop_keepalive(self._ka)
                conn.close()


def _stop_keepalive(holder):
    """Stop the keep-alive in holder (a one-element list), if any."""
    ka, holder[0] = holder[0], None
    if ka is not None:
        ka.stop()
