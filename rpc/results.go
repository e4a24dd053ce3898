package rpc

// The daemon's own error codes, and the results of its methods other than
// the tools' (docs/protocol.md, "Methods"): what the daemon (package
// daemon) answers and its clients (indexctl, the Python client) read.

// JSON-RPC error codes of the daemon's own faults (the range -32000 to
// -32099 is the implementation's).
const (
	// CodeTooManyRoots: index was asked for a new root while MaxRoots
	// roots are served.
	CodeTooManyRoots = -32001
	// CodeMemoryLimit: index was asked for a new root while the heap is
	// over MaxMemory.
	CodeMemoryLimit = -32003
	// CodeStopped: index was waiting when the root was forgotten or the
	// daemon began to stop.
	CodeStopped = -32002
	// CodeFailed: forget could not delete the root's index.
	CodeFailed = -32004
)

// CodeOtherBuild is the JSON-RPC error code of a ping from a client of
// another build (see PingParams); the client replaces the daemon.
const CodeOtherBuild = -32005

// States of a root (RootStatus.State).
const (
	StateBuilding = "building" // its index is being built or reopened; queries walk
	StateReady    = "ready"    // queries use the index
	StateError    = "error"    // the build failed (last_error); queries walk, `index` retries
	// StateUnwatched: no file watcher can keep an index of the root
	// current (none on this system, or the daemon runs without one), so
	// none is kept: every query walks (fallback_reason no_watcher).
	StateUnwatched = "unwatched"
)

// Phases of a root while it is building (RootStatus.Phase).
const (
	PhaseReopen  = "reopening"   // loading and checking the saved index (the default Freshener then checks the tree by stat)
	PhaseBuild   = "building"    // reading every file (progress is reported)
	PhaseSave    = "saving"      // writing the new index to its DB
	PhaseCatchUp = "catching_up" // waiting for the Freshener to trust the index (after a restart: its walk of the tree)
)

// Status is the result of status.
type Status struct {
	PID      int          `json:"pid"`
	UptimeMS int64        `json:"uptime_ms"`
	Version  string       `json:"version"`
	Build    string       `json:"build"` // the daemon binary's Go build ID
	Socket   string       `json:"socket"`
	StateDir string       `json:"state_dir"`
	Queries  int64        `json:"queries"` // tool queries answered since the start
	Roots    []RootStatus `json:"roots"`   // by root
	// Memory is the daemon's memory now (absent from a daemon that
	// predates it).
	Memory *MemoryStatus `json:"memory,omitempty"`
}

// MemoryStatus is the daemon's memory, in status.
type MemoryStatus struct {
	// RSSBytes is the resident set (VmRSS in /proc/self/status; 0 where
	// it cannot be read); HeapBytes the heap's spans in use.
	RSSBytes  int64 `json:"rss_bytes"`
	HeapBytes int64 `json:"heap_bytes"`
	// The reply budget (docs/protocol.md): the bytes of answers
	// waiting to be written or being built now, the most they have been
	// since the start, and the budget over all connections.
	AnswerBytes       int64 `json:"answer_bytes"`
	AnswerPeakBytes   int64 `json:"answer_peak_bytes"`
	AnswerBudgetBytes int64 `json:"answer_budget_bytes"`
	// AnswersCut counts the answers cut short by the budget
	// (aborted_reason "memory_limit"), ClientsDropped the connections
	// that read nothing and were dropped to make room for others'
	// answers.
	AnswersCut     int64 `json:"answers_cut"`
	ClientsDropped int64 `json:"clients_dropped"`
	// HeapReturns counts the times the daemon, quiet after a burst,
	// handed the heap it no longer used back to the system.
	HeapReturns int64 `json:"heap_returns"`
}

// RootStatus is one root's part of status, and the result of index.
type RootStatus struct {
	Root  string `json:"root"`            // the real root path
	State string `json:"state"`           // StateBuilding, StateReady, StateError or StateUnwatched
	Phase string `json:"phase,omitempty"` // while building: PhaseReopen, PhaseBuild, PhaseSave or PhaseCatchUp
	// Files is the number of files in the index (while building: read so
	// far).
	Files      int    `json:"files"`
	IndexBytes int64  `json:"index_bytes"` // size of the DB file, 0 before it is written
	DB         string `json:"db"`          // the DB file
	// Once ready: BaseBytes is the size of the base postings (a file
	// beside the DB, mapped: page cache, not heap); HeapBytes estimates the
	// heap the index holds (path table, delta); DeltaFiles counts the files
	// changed since the base was built, which the next merge (compaction)
	// folds in, and DeltaBytes the heap their trigram sets hold until then
	// (part of HeapBytes; a merge starts past 64 MiB); Merging says one
	// is running.
	BaseBytes  int64 `json:"base_bytes,omitempty"`
	HeapBytes  int64 `json:"heap_bytes,omitempty"`
	DeltaFiles int   `json:"delta_files"`
	DeltaBytes int64 `json:"delta_bytes"`
	Merging    bool  `json:"merging"`
	// Progress is set while building.
	Progress *BuildProgress `json:"progress,omitempty"`
	// Reopened: the saved index was reopened and reconciled by stat, not
	// rebuilt (set once ready).
	Reopened bool  `json:"reopened"`
	ReadyMS  int64 `json:"ready_ms,omitempty"` // how long the root took to become ready
	Queries  int64 `json:"queries"`            // tool queries answered for this root
	// LastError says why the build failed (state error), or a later fault
	// (a failed compaction).
	LastError string `json:"last_error,omitempty"`
}

// BuildProgress is a build's advance. The totals are known once the tree
// has been listed (before that, and while reopening, they are 0).
type BuildProgress struct {
	Files      int   `json:"files"`
	TotalFiles int   `json:"total_files"`
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"total_bytes"`
	ETAMS      int64 `json:"eta_ms"`
	ElapsedMS  int64 `json:"elapsed_ms"`
}

// ForgetResult is the result of forget.
type ForgetResult struct {
	Root string `json:"root"`
	// Forgotten: the root was served or had a saved index; false means
	// there was nothing to forget.
	Forgotten bool `json:"forgotten"`
}

// ShutdownResult is the result of shutdown.
type ShutdownResult struct {
	Stopping bool `json:"stopping"`
}
