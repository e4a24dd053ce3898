// Package mcp is indexd's Model Context Protocol front-end (`indexctl
// mcp`; docs/product.md, "Agents: the MCP server"): an MCP server, built
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk), that
// offers the agent tools Glob, Grep, LS and Changes, and optionally the
// compatibility tools find_files_by_name and search_in_files (docs/tools.md,
// "The compatibility tools").
//
// The server does not search by itself: every call goes to Config.Query,
// which indexctl wires to the same runner its queries use (the shared
// daemon, started when none answers, or the walk in process with --direct
// or when no daemon can be reached).
//
// # Results
//
// Glob, Grep and LS return the tool's envelope (docs/product.md, "The
// envelope") unchanged: one TextContent with the envelope's text,
// structuredContent the envelope itself, and isError exactly when its status
// is "error". The arguments reach the tool exactly as the client sent them, so
// the envelope's context.params_input shows them; the input schemas document
// the parameters, they are not enforced before the tool's own checks (whose
// messages are the ones an agent should read).
//
// The compatibility tools keep the shapes of the MCP server their clients
// were written against: find_files_by_name answers {"files": [...],
// "total_found": N} and search_in_files {"matches": [{"file_path",
// "line_number", "line_content"}], "total_matches": N, "files_searched": M,
// "timed_out": B}, as structuredContent and, as JSON, as the text. Their
// errors are isError results whose text is the error message. Their file
// names are the envelope's, in its printed form (internal/quote: a name
// holding a control character, a byte that is not UTF-8, a backslash or a
// double quote is a double-quoted C-style string), and name_pattern,
// file_pattern and path take that form back as the envelope tools do;
// line_content is the line as it is (the answer is JSON).
//
// # Input
//
// Server.Run reads its input line by line (one JSON-RPC message a line,
// as MCP's stdio transport has it) through its own transport rather than
// the SDK's, which ends the session at the first line it cannot decode.
// A line that is not a message is answered with a JSON-RPC error, id
// null unless the line's id could be read, and the session goes on:
//
//	-32700 parse error       not UTF-8; arrays and objects nested deeper
//	                         than MaxDepth (512); not valid JSON; longer
//	                         than MaxLineLength (4 MiB), which is skipped
//	                         without being held in memory
//	-32600 invalid request   a batch (a JSON array: MCP dropped batches in
//	                         2025-06-18), not an object, or an object that
//	                         is not a JSON-RPC 2.0 message
//
// Blank lines are skipped; only the end of the input (or ctx) ends the
// session.
//
// # The workspace root
//
// Each session searches one root: Config.Root (indexctl's --root) if set;
// else the client's first file:// root that is a directory, when the
// client offers roots (asked once per session, again after
// notifications/roots/list_changed); else Config.DefaultRoot (the current
// directory, or its nearest ancestor holding .git). Clients on protocol
// 2026-07-28 and later, where a server may not send requests of its own,
// are asked for their roots through the call's input requests (SEP-2322),
// which the SDK's client answers on its own. Paths in arguments are
// relative to the root (or absolute inside it); the tools deny any path
// outside it.
//
// Since the root is the sandbox, a client cannot widen it past what the
// user running the server owns: a client root that is / (symbolic links
// resolved) or a directory owned by another user is refused, and so is a
// default root of / (a server started in the root directory). The next
// root the client offers is used instead; when none is usable, every call
// of the session is an ACCESS_DENIED envelope (for the compatibility
// tools, an isError result) whose message names the root, says why, and
// says to start the server with --root DIR. Config.Root is the user's own
// choice and is never refused.
package mcp
