package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// clientVersion is this executable's version (module version and VCS
// revision) and Go build ID. (The daemon is the engine's: version
// compares it with the engine indexctl runs.)
func clientVersion() string {
	v := daemonapi.BinaryVersion()
	if id := buildid.Self(); id != "" {
		v += " (build " + id + ")"
	}
	return v
}

// versionCmd is "indexctl version": the client's build and the running
// daemon's.
var versionCmd = &command{
	name:    "version",
	summary: "show indexctl's version and build, and the running daemon's",
	about: `Show this indexctl's version (module version, VCS revision) and Go build
ID, and those of the daemon running on the socket, if one is, saying
whether it is the build of the engine indexctl runs (a daemon of another
build is replaced at the next query). Version never starts a
daemon. --version prints the first line only.`,
	exit: "Exit status: 0 the daemon runs, 1 it does not, 2 error.",
	define: func(fs *cliflag.FlagSet) runFunc {
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			fmt.Fprintf(c.stdout, "indexctl %s\n", clientVersion())
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			cl, ok, err := c.dialRunning(ctx, g.socketPath())
			switch {
			case err != nil:
				fmt.Fprintf(c.stderr, "indexctl version: %v\n", err)
				return daemonapi.ExitError, nil
			case !ok:
				fmt.Fprintf(c.stdout, "indexd   not running (%s)\n", g.socketPath())
				return daemonapi.ExitNothing, nil
			}
			defer cl.Close()
			var res json.RawMessage
			if err := cl.Call(ctx, rpc.MethodStatus, nil, &res); err != nil {
				fmt.Fprintf(c.stderr, "indexctl version: %v\n", err)
				return daemonapi.ExitError, nil
			}
			var st rpc.Status
			if err := json.Unmarshal(res, &st); err != nil {
				fmt.Fprintf(c.stderr, "indexctl version: malformed status: %v\n", err)
				return daemonapi.ExitError, nil
			}
			same := ""
			if st.Build != "" && st.Build == c.engine().Build() {
				same = ", the same build" // as the engine this indexctl runs
			}
			fmt.Fprintf(c.stdout, "indexd   %s (build %s), pid %d%s\n", st.Version, st.Build, st.PID, same)
			return daemonapi.ExitFound, nil
		}
	},
}
