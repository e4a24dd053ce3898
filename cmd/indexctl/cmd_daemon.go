package main

import (
	"fmt"

	"github.com/indexd/indexd/internal/cliflag"

	"github.com/indexd/indexd/internal/daemonapi"
)

// daemonCmd is "indexctl daemon": the daemon itself, in the foreground
// (the engine's "indexd daemon", which this process becomes).
var daemonCmd = &command{
	name:    "daemon",
	summary: "run the daemon in the foreground (queries start it on their own)",
	about: `Run indexd, the daemon that answers queries from an index of each root it
is asked about, until SIGINT or SIGTERM, 'indexctl stop' or --idle-exit.
Queries start it on their own, detached, when none answers on the socket;
this command runs it in the foreground instead. Its log is indexd.log in
the state directory. If a daemon already serves the socket, it says so and
exits.`,
	exit: "Exit status: 0 after a clean stop (or when a daemon already runs), 2 error.",
	examples: []string{
		"indexctl daemon",
		"indexctl daemon --socket /tmp/indexd-test.sock --state-dir /tmp/indexd-state --idle-exit 30m",
	},
	define: func(fs *cliflag.FlagSet) runFunc {
		var df daemonapi.DaemonFlags
		df.Define(fs)
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			// The daemon is the engine's: this process becomes it, so
			// the daemon is a foreground process of its caller (a
			// terminal, systemd) as this command is.
			err := c.execEngine(append([]string{"daemon", "--socket", g.socketPath()}, df.Args()...)...)
			fmt.Fprintf(c.stderr, "indexctl daemon: %v\n", err)
			return daemonapi.ExitError, nil
		}
	},
}
