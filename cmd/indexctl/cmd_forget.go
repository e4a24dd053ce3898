package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// forgetCmd is "indexctl forget": drop a root's index.
var forgetCmd = &command{
	name:    "forget",
	arg:     "[ROOT]",
	summary: "drop a root's index",
	about: `Drop the index of ROOT (default: --root, else the workspace root of the
current directory): the daemon stops serving it from an index and deletes
its file. A later query in the root indexes it again. A root that no longer
exists can be forgotten by the path it had. Without a daemon, the saved
index file is deleted directly.`,
	exit: "Exit status: 0 forgotten, 1 the root had no index, 2 error.",
	define: func(fs *cliflag.FlagSet) runFunc {
		return func(c *cli, g *globals, args []string) (int, error) {
			name, err := rootName(g, args)
			if err != nil {
				return 0, err
			}
			// The root need not exist any more: only the default is looked for.
			var root string
			if name == "" {
				where, err := locate("")
				if err != nil {
					fmt.Fprintf(c.stderr, "indexctl forget: %v\n", err)
					return daemonapi.ExitError, nil
				}
				root = where.root
			} else if root, err = filepath.Abs(name); err != nil {
				fmt.Fprintf(c.stderr, "indexctl forget: %v\n", err)
				return daemonapi.ExitError, nil
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			forgotten, err := c.forget(ctx, g.socketPath(), root)
			switch {
			case err != nil:
				fmt.Fprintf(c.stderr, "indexctl forget: %v\n", err)
				return daemonapi.ExitError, nil
			case !forgotten:
				fmt.Fprintf(c.stdout, "%s has no index\n", root)
				return daemonapi.ExitNothing, nil
			}
			fmt.Fprintf(c.stdout, "forgot %s\n", root)
			return daemonapi.ExitFound, nil
		}
	},
}

// forget drops root's index: through the daemon if one runs, else by
// having the engine delete the saved DB ("indexd forget ROOT").
func (c *cli) forget(ctx context.Context, socket, root string) (bool, error) {
	cl, ok, err := c.dialRunning(ctx, socket)
	if err != nil {
		return false, err
	}
	if !ok {
		path, err := c.engine().Path()
		if err != nil {
			return false, err
		}
		cmd := exec.CommandContext(ctx, path, "forget", root)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &ee) && ee.ExitCode() == daemonapi.ExitNothing:
			return false, nil
		}
		return false, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	defer cl.Close()
	var res json.RawMessage
	if err := cl.Call(ctx, rpc.MethodForget, rpc.RootParams{Root: root}, &res); err != nil {
		return false, err
	}
	var fr rpc.ForgetResult
	if err := json.Unmarshal(res, &fr); err != nil {
		return false, fmt.Errorf("malformed answer: %v", err)
	}
	return fr.Forgotten, nil
}

// rootName returns the root a command names: its one positional
// argument, else --root ("" if neither is given). An error is a usage
// error.
func rootName(g *globals, args []string) (string, error) {
	switch {
	case len(args) > 1:
		return "", fmt.Errorf("unexpected argument %q (only one ROOT is taken)", args[1])
	case len(args) == 1 && g.root != "":
		return "", fmt.Errorf("the root is given both as an argument and with --root")
	case len(args) == 1:
		return args[0], nil
	}
	return g.root, nil
}
