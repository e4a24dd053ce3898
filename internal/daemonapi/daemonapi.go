// Package daemonapi owns what the daemon's clients share with it without
// linking it: the results of its status, index and forget methods (the
// shapes docs/protocol.md describes), the ping error that asks a client of
// another build to replace it, its state directory and its log. The
// daemon (package daemon) re-exports all of it; the query client
// (cmd/indexctl) reads it here.
package daemonapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/indexd/indexd/internal/privdir"
)

// DefaultMaxMemory is the daemon's default heap bound (daemon.Config's
// MaxMemory): 4 GiB.
const DefaultMaxMemory = 4 << 30

// CodeOtherBuild is the JSON-RPC error code of a ping from a client of
// another build (see rpc.PingParams); the client replaces the daemon.
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

// LogName is the daemon's log file in the state directory.
const LogName = "indexd.log"

// maxLogSize: OpenLog starts a new log once the old one is this big,
// keeping one previous log (indexd.log.1).
const maxLogSize = 8 << 20

// DefaultStateDir returns $XDG_STATE_HOME/indexd, else
// ~/.local/state/indexd.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "indexd")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "indexd")
	}
	return filepath.Join(os.TempDir(), "indexd-"+strconv.Itoa(os.Getuid()), "state")
}

// BinaryVersion describes the running binary for status: its module
// version and, when the build recorded it, its VCS revision.
func BinaryVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}

// EnsureStateDir makes stateDir the daemon's private directory, or says
// why it cannot be: it is created 0700 if missing and must be a real
// directory (not a symbolic link) owned by the current user that nobody
// else can write to, and so must every directory on the way to it below
// the system's temporary directory when it lies there (indexd-UID in the
// fallback $TMPDIR/indexd-UID/state). See privdir.Ensure. The error
// names the directory and what to do.
func EnsureStateDir(stateDir string) error {
	err := privdir.Ensure(stateDir)
	switch {
	case errors.Is(err, privdir.ErrInsecure):
		return fmt.Errorf("daemon: unsafe state directory: %w (--state-dir or XDG_STATE_HOME chooses another)", err)
	case err != nil:
		return fmt.Errorf("daemon: state directory: %w", err)
	}
	return nil
}

// OpenLog opens the log in stateDir for appending, first making sure the
// directory is the user's alone (EnsureStateDir) and creating the file
// (0600) as needed; a log over 8 MiB is first renamed to indexd.log.1.
// A symbolic link at the log's path is an error, never followed. The
// daemon writes its log there, and the command that starts a daemon sends
// the daemon's standard error there too.
func OpenLog(stateDir string) (*os.File, error) {
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, LogName)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > maxLogSize {
		os.Rename(path, path+".1")
	}
	f, err := privdir.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("daemon: log %s is a symbolic link, which indexd does not follow: remove it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("daemon: log: %w", err)
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("daemon: log %s is not a regular file: remove it", path)
	}
	return f, nil
}
