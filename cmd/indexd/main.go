// Command indexd is the indexd daemon (SPEC §10), the same server as
// `indexctl daemon`: it serves the Glob, Grep and LS tools over a Unix
// socket from an index of each root it is asked about. Queries made with
// indexctl start it on their own; run this to manage it yourself (under
// systemd, say).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/indexd/indexd/daemon"
)

func main() {
	var cfg daemon.Config
	fs := pflag.NewFlagSet("indexd", pflag.ContinueOnError)
	fs.StringVar(&cfg.SocketPath, "socket", "", "listen on the socket `PATH` (default: $INDEXD_SOCKET, else $XDG_RUNTIME_DIR/indexd/indexd.sock, else ~/.cache/indexd/indexd.sock)")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "keep the indexes and the log in `DIR` (default: $XDG_STATE_HOME/indexd, else ~/.local/state/indexd)")
	fs.DurationVar(&cfg.IdleExit, "idle-exit", 0, "stop after `DURATION` without requests, such as 30m (default 0: never)")
	maxMB := fs.Int64("max-memory", daemon.DefaultMaxMemory>>20, "index no new root while the heap holds more than `MB` megabytes")
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Printf("Usage: indexd [flags]\n\nRun the indexd daemon until SIGINT or SIGTERM (or the shutdown method:\n'indexctl stop').\n\nFlags:\n%s", fs.FlagUsages())
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "indexd: %v\nRun 'indexd -h' for usage.\n", err)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "indexd: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	cfg.Version = daemon.BinaryVersion()
	cfg.MaxMemory = *maxMB << 20
	if err := daemon.Foreground(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "indexd: %v\n", err)
		os.Exit(2)
	}
}
