// Package daemon is indexd's long-running server: one per user, serving the
// rpc protocol (docs/protocol.md) on a Unix socket, with one index per
// workspace root, added on first use and kept in a bbolt DB under the state
// directory (with its base postings in DBName.base-<gen> beside it) so that a
// restart reopens it (checking the tree by stat) instead of rebuilding it.
//
// Run is the whole daemon; the engine binary `indexd` (which `indexctl
// daemon` becomes) calls it through Foreground, which turns SIGINT and SIGTERM into a graceful stop.
//
// # Roots
//
// A root is identified by its real path (symlinks resolved). The first
// query or `index` for it adds it and starts its workspace goroutine,
// which reopens the saved index (DBName in the state directory) or builds
// one (index.OpenOrBuild: a saved DB that fails its checks is moved aside
// as DBName.corrupt-<ns>, logged, and rebuilt), then starts the root's
// Freshener. A root is in one of four states:
//
//	building  the index is being reopened or built (status shows the phase
//	          and, while files are read, progress with an ETA)
//	ready     the index answers
//	error     the build failed; status shows last_error, and `index` for the
//	          root starts a new attempt
//	unwatched the daemon has no watcher (Config.NoWatcher), so it keeps no
//	          index: no workspace goroutine runs and every query walks
//
// Glob and Grep are answered by a query.Searcher that looks at the root's
// state at the moment of each query. A building root is first waited for
// (first contact, workspace.awaitBuild: FirstContactWait, longer when the
// build's ETA is within FirstContactMaxETA), and the query's time budget
// starts after the wait. Then a ready index is used after the
// Freshener's sync barrier (Freshener.Sync) and only if the Freshener
// vouches for the query's directory; otherwise the walk answers and the
// envelope says so in data.fallback_used and data.fallback_reason (which
// makes Grep partial). The reasons: index_building, index_error,
// index_stale (the sync barrier failed), daemon_stopping, no_watcher
// (below), whatever the
// Freshener's Stale returns, and the index's own ignored_paths. LS always
// reads the live directory.
//
// A root deleted and made again, or swapped for another directory, is
// served afresh: the ready index describes the directory that was there,
// so it is retired (the root is building again, and queries wait for or
// walk past the new attempt: index_building) as soon as anything notices
// the replacement: the Freshener stopping (its root went), a query's
// barrier failing with watch.ErrRootGone, or status and index finding a
// directory of another identity at the root's path (device, inode and
// birth time, rooted.ID: a directory made again may reuse the inode
// number). index --wait passes the barrier first, so a root replaced
// before the call is waited for afresh; status never says ready of an
// index of a directory no longer there (workspace.noticeReplaced).
//
// A tool call whose client chose the root itself (rpc.ToolParams.RootFrom)
// is answered from the deepest root served that holds the caller's
// directory (knownRoot), so a subdirectory adds no root of its own.
//
// An unlimited call (rpc.ToolParams.Unlimited: indexctl's --all and
// --limit) first takes its connection's turn (server.TakeTurn): a
// connection's such answers are made one at a time. A Glob or Grep of one
// whose limit is beyond the agent tools' maximum then goes through the reply
// budget (docs/protocol.md, "Memory: the reply budget"): with
// rpc.ToolParams.Stream it sends its results ahead of the envelope as rpc
// "partial" notifications (query.Batch; with their text for BatchText), each
// waiting for room, so the answer comes at its reader's pace; without, its
// results are collected under server.Reserve (query.Tools.Budget) and the
// answer is cut short, with aborted_reason "memory_limit", once the budget
// refuses them. Config.MaxAnswerBytes and MaxConnAnswerBytes size the
// budget.
//
// The Freshener is the watcher (WatchFreshener): each indexed query first
// passes its read-your-writes barrier (SyncTimeout; sync=false skips it),
// and subtrees it could not watch are walked and merged with the index's
// answer (query.Indexed.Live, fallback watch_limit).
//
// # Without a watcher
//
// An index is trusted only while a watcher keeps it current and vouches
// for it (the sync barrier). Where package watch has no backend
// (watch.Supported is false: macOS, FreeBSD; docs/platforms.md) no index
// is built at all, rather than one nothing could keep current: every
// root is unwatched from the moment it is added, Glob and Grep walk and
// say so (fallback_reason no_watcher, Grep partial), LS reads the live
// directory as always, answers carry no clock, and Changes and
// changed_since answer fresh_instance with that reason. Config.NoWatcher
// selects the mode on Linux too (the test that compares its answers with
// the index's).
//
// # Clocks and Changes
//
// The watcher also keeps the root's change journal (package journal,
// Journaled): every Glob, Grep and LS answer from a ready root carries
// the root's clock token in context.clock, taken after the call's
// barrier (LS: without one), and Changes and changed_since answer from
// the journal (clock.go). A call passes the barrier once, whether for the
// clock or for the index. A token names the daemon instance (random at
// start), the root, the journal (one per index served: a root rebuilt or
// replaced starts a new one) and a position; one that does not match, or
// lies before the journal's start, answers fresh_instance. The journal is
// in memory only: after a restart, every earlier token does.
//
// The roots served are listed in RootsName in the state directory; a
// restarted daemon reopens each that still exists in the background (its
// index re-validated by stat), without waiting for a query.
//
// At most Config.MaxRoots roots are served; a query for one more is an
// INVALID_PARAM envelope (an index call, an rpc.CodeTooManyRoots error) until
// `forget` drops one. Roots whose directory is gone do not count: such a
// root is dropped as forget drops one (its goroutine stopped, closing its
// index and watcher; removed from RootsName; its DB deleted, since a
// directory made again at that path is indexed afresh) as soon as the
// daemon notices: on status, when a query names a root that does not
// exist, and before a new root is refused for the limit. No root is
// added either while the heap is over Config.MaxMemory (an
// EXECUTION_ERROR envelope, or rpc.CodeMemoryLimit). A bad root is a
// NOT_FOUND, INVALID_PARAM or PERMISSION_DENIED envelope for glob, grep
// and ls, and an invalid-params error for index and status.
//
// Memory. Foreground makes Config.MaxMemory the collector's soft limit
// and, as each root becomes ready, sets GOGC to leave about 64 MB above
// the live heap, between 50 and 100 (collectorPercent; GOGC in the
// environment wins): with the default the resident set settles at twice
// what is live after a while of queries. The answers' memory is bounded
// by the reply budget (above); what a burst of them leaves (the searches'
// working sets, the garbage of the answers written) is handed back to
// the system by the heap returner once the daemon is quiet (no request,
// no root building; collector.go: within returnEvery of the burst's end,
// when the heap holds more than the collector's headroom and 32 MiB
// beyond what is live). The status method reports the resident set, the
// heap and the budget's figures (rpc.Status's Memory).
//
// # The state directory
//
// Config.StateDir (daemonapi.DefaultStateDir: $XDG_STATE_HOME/indexd,
// else ~/.local/state/indexd, else $TMPDIR/indexd-UID/state) holds the
// index DBs, RootsName and daemonapi.LogName. Before anything is written
// there, Run and daemonapi.OpenLog check it (daemonapi.EnsureStateDir):
// it is created 0700 and must be a
// real directory (not a symbolic link, checked with Lstat) owned by the
// daemon's user and writable by no one else, and so must indexd-UID
// when the state lies under TMPDIR, which other users share. Otherwise
// the daemon does not start, and the error names the directory and what
// to do. Files there are opened with O_NOFOLLOW, so a symbolic link
// planted in the directory is never written through: a link at the log's
// path is an error, one at a DB's path is discarded like a corrupt DB
// (and the index rebuilt), and the list of roots is written afresh. The
// socket's directory gets the same checks (server.Listen, package rpc/server).
//
// # Results of the daemon's methods
//
// docs/protocol.md specifies each method's params and result (package
// rpc's Status, RootStatus, ForgetResult and ShutdownResult) and the
// error codes (rpc.CodeTooManyRoots, CodeStopped, CodeMemoryLimit,
// CodeFailed, CodeOtherBuild); TestProtocolDoc runs its sessions against
// a daemon. An index call without wait answers at once (clients poll
// status for progress); with wait, once the build attempt has ended,
// ready or failed (rpc.CodeStopped if the root is forgotten or the daemon
// stops meanwhile). forget stops the root's goroutine, closes its index
// and deletes its DB.
//
// # Goroutines
//
// Run owns everything and returns only when all of it has ended:
//
//   - server.Server.Serve (package rpc/server), called by Run, owns the
//     connection and request goroutines (see package rpc). It returns once the daemon's context
//     is cancelled (Run's ctx, the shutdown method, or the idle exit) and
//     the requests in flight have been answered.
//   - The idle-exit goroutine (only with Config.IdleExit) is started by
//     Run and ends when the daemon's context is cancelled (it cancels it
//     itself when idle); Run waits for it.
//   - The heap returner's goroutine (heapReturner.run) is started by Run,
//     checks the heap every returnEvery and ends when the daemon's
//     context is cancelled; Run waits for it.
//   - Each root's workspace goroutine is started when the root is added
//     (or its failed build is retried, one attempt at a time). It opens
//     or builds the index (index.OpenOrBuild; with the default
//     WatchFreshener a reopened index is caught up with the tree by the
//     watcher's initial reconcile alone, whose walk also adds the watches,
//     each directory's before it is listed; not by OpenOrBuild too, nor by
//     a walk of the watcher's own: one walk of the tree per restart), starts
//     the Freshener, then
//     waits until the workspace's context (a child of the daemon's) is
//     cancelled by forget or by the daemon's stop, serving the root
//     afresh if the Freshener stops because the root was replaced, or
//     when a request found it replaced and retired the index (a request
//     only unpublishes it and wakes the goroutine, which closes it). The
//     Freshener (the watcher's processor) is the index's only writer
//     after the build, compactions included. It owns the index
//     and the Freshener and closes both on its way out. forget waits for
//     it before deleting the DB; Run waits for all of them after Serve
//     returns, before it removes the instance lock.
//
// Queries never wait for a workspace goroutine beyond first contact's
// bounded wait for a building root: they read the root's state under its
// mutex and use the index or walk. A query still in
// flight when its root is forgotten finishes on the index in memory
// (closing an index closes its DB, not its tables).
//
// # Caveats
//
//   - Roots served are remembered across restarts (roots.json in the
//     state directory) and reopened in the background at start; a query
//     meanwhile waits for the reopen (first contact), and only past that
//     wait, until the tree is revalidated by stat, the walk answers
//     (index_building).
//   - A daemon keeps running the binary it was started from; a client of
//     another build (compared by Go build ID, see rpc's ping) replaces it
//     at its first query or index. A status only shows the daemon's build.
package daemon
