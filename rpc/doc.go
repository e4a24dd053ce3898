// Package rpc is the daemon's transport: JSON-RPC 2.0 over a Unix stream
// socket, one JSON object per line. It provides the protocol's types (the
// Handler the daemon implements, Error, the params), the client (Dial,
// Client.Call), the socket's path and lock file (DefaultSocketPath,
// LockPath) and auto-start (EnsureDaemon); package rpc/server provides
// the server (Serve), the socket's permissions and single-instance lock
// (Listen) and peer checks. This comment is the protocol's specification.
//
// The client side links no network stack: Dial makes its Unix socket with
// golang.org/x/sys/unix and reads it through an *os.File, so a program
// that only queries the daemon (indexctl) does not import net, which
// with cgo enabled would bring runtime/cgo and make it dynamically linked.
//
// # Try it
//
//	echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | socat - UNIX-CONNECT:$XDG_RUNTIME_DIR/indexd/indexd.sock
//	{"jsonrpc":"2.0","id":1,"result":"pong"}
//
// (socat waits only 0.5 s for answers after its input ends; give a slow
// query more with socat -t 30.)
//
// # Framing
//
// Each request is one line: a JSON object followed by "\n" (a final line
// without a newline is accepted at end of input; blank lines are
// skipped). Each response is one line too. A request line may be at most
// 1 MiB, not counting its newline; a longer one is skipped unread (the
// server never holds more than 1 MiB of it) and answered with an
// invalid-request error whose id is null, and the connection carries on
// with the next line. Batches (JSON arrays) are not supported.
//
// # Requests and responses
//
// A request is {"jsonrpc":"2.0","id":ID,"method":NAME,"params":PARAMS}.
// ID is a string, a number or null and is echoed in the response; params
// may be omitted when a method takes none. Responses are always valid
// JSON text, so UTF-8: a string id that is not valid UTF-8 is an invalid
// request (answered with id null), and invalid UTF-8 elsewhere in a
// request that a result echoes (a tool's params_input) is answered as
// U+FFFD. A request without an id member
// is a notification: it is carried out, but never answered, not even with
// an error.
//
// Requests on one connection are handled concurrently (up to 64 at a time
// by default, after which the server stops reading until one finishes),
// so a client may pipeline them and must match answers by id: a quick
// answer overtakes a slow one.
//
//	{"jsonrpc":"2.0","id":ID,"result":RESULT}
//	{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":TEXT,"data":ANY}}
//
// # Methods
//
//	glob, grep, ls, changes
//	    params {"root": ABS, "cwd": PATH, "args": {...}}
//	      root: the workspace root, an absolute path (required);
//	      cwd:  the caller's working directory, relative to the root or
//	            absolute inside it (optional, default the root);
//	      args: the tool's arguments exactly as an agent gives them to
//	            Glob, Grep, LS or Changes (optional, default {});
//	      unlimited: true lets "limit": 0 in args ask for every result,
//	            with Glob's entry and time breakers lifted, and any limit
//	            beyond the agent tools' maximum (optional; indexctl's
//	            --all and --limit; agents' front-ends never send it). Such
//	            an answer beyond the agent tools' maximum that is not
//	            streamed is built whole in the daemon under the reply
//	            budget (see Memory): one that outgrows it is cut short,
//	            status "partial" with data.aborted_reason "memory_limit"
//	            and a note in its text (an EXECUTION_ERROR if nothing was
//	            taken), never complete-looking;
//	      stream: true, with unlimited, sends glob's and grep's results,
//	            when the limit is beyond the agent tools' maximum (0
//	            included), ahead of the response as notifications
//	            {"jsonrpc":"2.0","method":"partial","params":{"id":ID,
//	            "data":{"cwd":PATH,"paths"|"matches"|"files"|"counts":[...]}}}
//	            (1024 results each, at most, but for a file's matches,
//	            which are never split; in the answer's order); the
//	            response's envelope then holds none of them, its text and
//	            stats count them all (optional). A stream waits for its
//	            reader: it is never cut by the reply budget;
//	      batch_text: true, with stream, adds "text" to each
//	            notification's data: the lines its results add to the
//	            envelope's text, each led by "\n". The whole envelope is
//	            then the response's with its data's list ("paths",
//	            "matches", "files" or "counts", empty in the response)
//	            holding the notifications' lists in order, and its text
//	            followed, when any result came, by "\n" and the
//	            notifications' texts in order: what the daemon would have
//	            built whole (optional; a daemon that predates it ignores
//	            it, and a client that does not send it gets notifications
//	            as before);
//	      root_from: "git" or "cwd" when the user named no root and the
//	            client took the nearest ancestor holding .git, or the
//	            current directory: the daemon then answers from the
//	            deepest root it already has holding the current directory
//	            (deeper than a "git" root; any, for "cwd"), so a
//	            subdirectory adds no root of its own (optional).
//	    result: the tool's envelope (status, data, text, stats, context
//	            and, on error, error). A bad argument, a path outside the
//	            root, a timeout and every other tool fault is an envelope
//	            with status "error", not a JSON-RPC error.
//	ping
//	    params: none, or {"build": ID}. result: "pong". Answered even
//	    while roots are indexing; clients use it to see that a daemon is
//	    there. With a build (the Go build ID of the client's engine, the
//	    executable it starts as the daemon), a daemon of another build
//	    answers the error -32005 instead; indexctl then asks it to shut
//	    down and starts its own engine.
//	status
//	    params: none, or {"root": ABS} for one root. result: an object
//	    describing the daemon and its roots (defined by the daemon).
//	index
//	    params {"root": ABS, "wait": BOOL}. Adds the root (if new) and
//	    starts indexing it; with wait, answers once its index is ready.
//	    result: the root's status object.
//	forget
//	    params {"root": ABS}. Stops watching the root and drops its index.
//	shutdown
//	    params: none. The daemon answers, stops accepting connections,
//	    lets requests in flight finish and exits.
//
// ToolParams, RootParams, DecodeToolParams and DecodeParams implement the
// params checks.
//
// # Errors
//
// Protocol faults are JSON-RPC errors with the standard codes:
//
//	-32700 parse error       the line is not valid JSON (id null)
//	-32600 invalid request   not an object; a batch ("batch requests are not
//	                         supported"); jsonrpc not "2.0"; method missing or
//	                         not a string; id not a string, number or null;
//	                         params not an object or array; a line over
//	                         1 MiB ("request too large", id null)
//	-32601 method not found  an unknown method
//	-32602 invalid params    params missing or ill-typed: no params object,
//	                         root missing, not a string or not absolute,
//	                         cwd not a string
//	-32603 internal error    the daemon failed (a handler panic, an invalid
//	                         result)
//
// The id of an error response is the request's when it could be read,
// else null.
//
// # Connections
//
// Only processes of the daemon's own user may connect: the server checks
// each connection's SO_PEERCRED uid and closes any other without a word
// (and Dial checks the server the same way). The socket is 0600 in a 0700
// directory owned by the user: Listen (package rpc/server) refuses a directory that is a
// symbolic link, belongs to another user or that others may write to,
// and, when it lies under TMPDIR (the fallback path
// $TMPDIR/indexd-UID/indexd.sock), every directory on the way there
// below TMPDIR too (ErrInsecureDir, naming the directory and what to do).
//
// A connection is dropped when it has been quiet (nothing received,
// nothing answered) for 5 minutes while none of its requests is in
// flight, or when it sends nothing for that long in the middle of a
// request line; a client waiting for a slow answer is never dropped. A
// client that stops reading its answers is dropped once one response has
// waited a minute (Server.WriteTimeout) to be written; its requests in
// flight are cancelled.
//
// # Memory: the reply budget
//
// Responses are written by one writer per connection, in the order they
// are ready; until written they wait in the connection's queue. One
// budget covers, over all connections (Server.MaxReplyBytes, default
// 128 MiB) and for each connection (Server.MaxConnReplyBytes, default
// 16 MiB), the bytes of the responses and notifications waiting to be
// written and the bytes the requests' handlers have reserved for the
// answers they are building (Reserve in package rpc/server: the daemon
// reserves, as it collects them, the results of an unlimited answer that
// is not streamed):
//
//   - A line is queued if it fits in both budgets. A connection holding
//     nothing always gets a short line in (4 KiB at most: a ping's
//     answer, an error), whatever others hold, and a longer one if the
//     server's budget has room for it (one larger than the server's
//     whole budget once the server holds nothing else), so one answer of
//     any size goes through to a client that reads. A response replaced
//     by an error (below) goes in whatever the budget.
//   - Otherwise it waits for room while the connection's writer makes
//     progress. Once the writer has been stuck in one write for a second
//     (the client is not reading), a response is replaced by an error
//     with code -32050 (CodeRepliesUnread, "response dropped: N bytes of
//     earlier responses on this connection are still unread ..."), and
//     the handler's memory is released: a client that does not read
//     never makes the server hold more than its budget. A notification
//     (a stream's part) waits on: its handler waits with it.
//   - A line that has waited a second for room in the server's budget,
//     on a connection whose writer is not stuck, gets it by the dropping
//     of a connection whose writer has been stuck in one write for ten
//     seconds while its client sent nothing (the one holding most,
//     logged; its requests are cancelled): a client that reads is never
//     held up for long by clients that have gone silent, and one that
//     reads slowly, or a Client's caller busy writing to a paused pager
//     (it sends keep-alives), is not taken for one of them.
//   - A reservation that does not fit is refused at once (the answer is
//     cut short and says so); a request's reservations are released when
//     its handler returns, before its response is queued.
//   - Back-pressure: a connection is not read (its further requests wait
//     in the socket) while it holds half its budget, or while it holds
//     anything and half the server's budget is used.
//   - A connection's answers of no set size (the daemon's unlimited Glob
//     and Grep, streamed or not) are made one at a time, in turn
//     (TakeTurn in package rpc/server): a client that pipelines many and
//     reads none makes the server work on, and hold, one of them.
//
// So the server holds at most MaxReplyBytes of lines and reservations,
// but for the short lines above; with the per-connection limit of 64
// requests in flight, a connection also holds what its running handlers
// use outside the budget (a search's own working set: Grep's window of
// files read ahead, Glob's sorted list before it is handed out; Grep's
// file buffers are shared by the whole process, see package query).
// Server.Stats reports the bytes queued and reserved, their peaks, and
// how many responses were replaced, reservations refused and
// connections dropped.
//
// A client may shut down its writing side (as socat does at the end of
// its input) and still receive the answers to the requests it sent. When
// it closes the connection entirely, the requests it has in flight are
// cancelled (also while the server drains, see Shutdown). Handlers return
// promptly once cancelled: Grep, for one, stops scanning within about
// 100 ms however large the file (see package query).
//
// # Client timeouts
//
// A Client never waits forever for a server that accepted its
// connection and then hung (Dialer): connecting is bounded (5 s), and a
// call fails with a *NoAnswerError (ErrNoAnswer) once nothing at all has
// come from the server for the answer timeout (10 s; writing a request
// too). Halfway through such a silence the Client pipelines a ping,
// which a live server answers at once while the call is still being
// worked on, so a slow answer is waited for as long as the server is
// alive; the call's own deadline is its context's (indexctl gives a tool
// call the tool's time limit plus 30 s). The error says how long it
// waited and for which socket: "indexd did not answer within 10s
// (socket PATH)".
//
// # Shutdown
//
// When the server stops (Serve's context is cancelled: on SIGTERM, or the
// shutdown method) it stops accepting connections and stops reading
// requests; requests already read finish and are answered, for up to 10
// seconds, after which they are cancelled (and their answers get one
// more second to be written); then every connection is closed. The
// requests of a client that hangs up during the drain are cancelled at
// once. Requests sent but not yet read when the server stopped are not
// answered: the client sees the connection close.
//
// # Goroutines
//
// Serve owns one goroutine per connection and returns only after all of
// them have ended. A connection's goroutine reads its requests and owns
// one goroutine per request (the Handler call and the queueing of its
// response) and the connection's writer, which writes the queued
// responses in order. It waits for the request goroutines, then tells the
// writer no more responses will come; the writer ends once the queue is
// written (or at the first failed write, dropping the rest), and the
// connection is closed after it. A
// Client owns one goroutine, which reads responses and hands each to the
// call waiting for its id; Close stops it and waits for it.
//
// # Caveats
//
//   - Cancelling a Client.Call's context abandons the call but does not
//     cancel it in the daemon; closing the Client does.
//   - The Client's liveness pings count as requests: a connection whose
//     MaxInFlight requests are all running leaves them unread, and a
//     daemon draining for shutdown reads no more, so a call can fail
//     with ErrNoAnswer then although the daemon is alive.
//   - The protocol has no authentication beyond the peer uid: every
//     process of the user may query every root.
package rpc
