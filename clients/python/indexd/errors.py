"""The exceptions of the indexd client.

A tool's fault (a bad argument, a path outside the root, a search that
timed out with nothing found) is not an exception: it is an envelope with
status "error", as the daemon answers it. These exceptions are for calls
that got no envelope at all:

- DaemonUnavailable: no daemon could be reached or started (indexctl is
  missing, or failed to start one: its message is included).
- ConnectionLost: the connection broke while an answer was coming, after
  a part of it had been handed out (a stream), or again on the retry of
  a call whose connection broke before any of its answer came.
- NoAnswer: a daemon accepted the connection but did not answer in time:
  it was silent for the answer timeout (hung), or the call's own deadline
  passed. Also a TimeoutError.
- RPCError: the daemon refused the request with a JSON-RPC error (a
  protocol fault such as invalid params), with its code.

Why exceptions rather than the daemon_unavailable envelopes indexctl
prints: indexctl answers without a daemon by walking the tree in a child
process, once; a long-lived Python process has no walk of its own, and
walking silently on every call would hide a broken installation behind
answers many times slower. The tool classes (indexd.tools), whose callers
need a string whatever happens, do answer with envelopes: see there.
"""


class IndexdError(Exception):
    """The base of the client's exceptions."""


class DaemonUnavailable(IndexdError, ConnectionError):
    """No daemon could be reached or started on the socket."""

    def __init__(self, message, socket=None):
        super().__init__(message)
        self.socket = socket


class ConnectionLost(IndexdError, ConnectionError):
    """The connection to the daemon broke while an answer was coming."""

    def __init__(self, message, socket=None):
        super().__init__(message)
        self.socket = socket


class NoAnswer(IndexdError, TimeoutError):
    """The daemon did not answer in time.

    silent is true when nothing at all came from the daemon for waited
    seconds (the answer timeout: the daemon is hung or gone); false when
    the daemon was alive but the call's deadline passed first.
    """

    def __init__(self, socket, method, waited, silent):
        if silent:
            msg = "indexd did not answer within %s (socket %s)" % (_seconds(waited), socket)
        else:
            msg = "indexd did not answer the %s request within %s (socket %s)" % (method, _seconds(waited), socket)
        super().__init__(msg)
        self.socket = socket
        self.method = method
        self.waited = waited
        self.silent = silent


class RPCError(IndexdError):
    """A JSON-RPC error response: code, message and data as the daemon sent them."""

    def __init__(self, code, message, data=None):
        super().__init__("indexd: %s (%d)" % (message, code))
        self.code = code
        self.message = message
        self.data = data


def _seconds(s):
    """A wait as the Go client prints it: 10s, 2.5s, 250ms."""
    if s >= 10:
        return "%ds" % round(s)
    if s >= 1:
        return ("%.3f" % s).rstrip("0").rstrip(".") + "s"
    return "%dms" % round(s * 1000)
