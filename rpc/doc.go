// Package rpc is the daemon's transport: JSON-RPC 2.0 over a Unix stream
// socket, one JSON object per line. It provides the protocol's types (the
// Handler the daemon implements, Error, the params), the client (Dial,
// Client.Call), the socket's path and lock file (DefaultSocketPath,
// LockPath) and auto-start (EnsureDaemon); package rpc/server provides
// the server (Serve), the socket's permissions and single-instance lock
// (Listen) and peer checks.
//
// The protocol (framing, methods and their params and results, error
// codes, connections, the reply budget, shutdown) is specified in
// docs/protocol.md, whose example sessions TestProtocolDoc (package
// daemon) runs against a daemon. In the code: ToolParams, RootParams,
// PingParams, DecodeToolParams and DecodeParams are the params and their
// checks; Status, RootStatus, ForgetResult, ShutdownResult and Pong are
// the results of the methods other than the tools' (whose names and
// methods are package tool's table, tool.Specs); the Code constants are
// the error codes, the daemon's own among them; MethodPartial is a
// stream's notification; the DefaultXxx constants are the server's
// limits (request size, requests in flight, timeouts, the reply budget
// of Server.MaxReplyBytes and Server.MaxConnReplyBytes, which
// server.Reserve, server.TakeTurn and the server's Notify draw on).
//
// The client side links no network stack: Dial makes its Unix socket with
// golang.org/x/sys/unix and reads it through an *os.File, so a program
// that only queries the daemon (indexctl) does not import net, which
// with cgo enabled would bring runtime/cgo and make it dynamically linked.
//
// A Client never waits forever for a server that accepted its connection
// and then hung (Dialer): connecting is bounded (5 s), and a call fails
// with a *NoAnswerError (ErrNoAnswer) once nothing at all has come from
// the server for the answer timeout (10 s; writing a request too).
// Halfway through such a silence the Client pipelines a ping, which a
// live server answers at once while the call is still being worked on,
// so a slow answer is waited for as long as the server is alive; the
// call's own deadline is its context's. The error says how long it
// waited and for which socket: "indexd did not answer within 10s
// (socket PATH)".
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
// connection is closed after it. A Client owns one goroutine, which reads
// responses and hands each to the call waiting for its id; Close stops it
// and waits for it.
//
// # Caveats
//
//   - Cancelling a Client.Call's context abandons the call but does not
//     cancel it in the daemon; closing the Client does.
//   - The Client's liveness pings count as requests: a connection whose
//     MaxInFlight requests are all running leaves them unread, and a
//     daemon draining for shutdown reads no more, so a call can fail
//     with ErrNoAnswer then although the daemon is alive.
package rpc
