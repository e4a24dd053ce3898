package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// stopCmd is "indexctl stop": stop the daemon.
var stopCmd = &command{
	name:    "stop",
	summary: "stop the daemon",
	about: `Stop the daemon: it finishes the requests in flight (for up to 10 seconds),
saves and closes its indexes and removes its socket; stop returns once it
has exited. The next query starts a new one. Stopping when no daemon runs
is not an error.`,
	exit: "Exit status: 0 stopped, or none was running; 2 error.",
	define: func(fs *cliflag.FlagSet) runFunc {
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, stopTimeout)
			defer cancel()
			socket := g.socketPath()
			stopped, err := c.stopDaemon(ctx, socket)
			switch {
			case errors.Is(err, rpc.ErrNoAnswer):
				// Hung: shutdown cannot reach it. Say who holds its lock.
				fmt.Fprintf(c.stderr, "indexctl stop: %v%s\n", err, lockHolder(socket))
				return daemonapi.ExitError, nil
			case err != nil:
				fmt.Fprintf(c.stderr, "indexctl stop: %v\n", err)
				return daemonapi.ExitError, nil
			case stopped:
				fmt.Fprintf(c.stdout, "indexd stopped (%s)\n", socket)
			default:
				fmt.Fprintf(c.stdout, "indexd is not running (%s)\n", socket)
			}
			return daemonapi.ExitFound, nil
		}
	},
}

// lockHolder names the process holding the instance lock of socket (the
// pid the daemon wrote in it), as advice to end it: "" if unknown.
func lockHolder(socket string) string {
	b, err := os.ReadFile(rpc.LockPath(socket))
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf("; the daemon is pid %d (from %s): end it with 'kill %d'", pid, rpc.LockPath(socket), pid)
}

// stopTimeout bounds stop: the daemon's drain (10 s) and its cleanup.
const stopTimeout = 30 * time.Second
