package daemonapi

import (
	"strconv"
	"time"

	"github.com/indexd/indexd/internal/cliflag"
)

// Exit codes of indexctl and of its engine (docs/product.md, "The command
// line: indexctl").
const (
	ExitFound   = 0 // the tool answered with results; a command succeeded
	ExitNothing = 1 // the tool answered, and found nothing
	ExitError   = 2 // the tool failed or the answer is incomplete, or the command line was wrong
)

// DaemonFlags are the daemon's flags: "indexctl daemon" takes them and
// passes them on to the engine ("indexd"), which runs it; both define
// them here.
type DaemonFlags struct {
	StateDir    string
	IdleExit    time.Duration
	MaxMemoryMB int64
}

// Define adds the flags to fs.
func (f *DaemonFlags) Define(fs *cliflag.FlagSet) {
	fs.StringVar(&f.StateDir, "state-dir", "", "", "keep the indexes and the log in `DIR` (default: $XDG_STATE_HOME/indexd, else ~/.local/state/indexd)")
	fs.DurationVar(&f.IdleExit, "idle-exit", "", 0, "stop after `DURATION` without requests, such as 30m (default 0: never)")
	fs.Int64Var(&f.MaxMemoryMB, "max-memory", "", DefaultMaxMemory>>20, "index no new root while the heap holds more than `MB` megabytes")
}

// Args returns the flags as a command line that sets them.
func (f *DaemonFlags) Args() []string {
	return []string{"--state-dir", f.StateDir, "--idle-exit", f.IdleExit.String(), "--max-memory", strconv.FormatInt(f.MaxMemoryMB, 10)}
}
