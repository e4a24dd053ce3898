package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/indexd/indexd/daemon"
	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/mcp"
	"github.com/indexd/indexd/rpc"
)

// mcpCmd is "indexctl mcp": the MCP server an agent runs on stdio.
var mcpCmd = &command{
	name:    "mcp",
	summary: "serve Glob, Grep and LS to an agent: an MCP server on stdin/stdout",
	about: `Serve the tools to an agent as a Model Context Protocol server on standard
input and output (its MCP client starts this command): Glob, Grep, LS and
Changes, with input schemas and descriptions written for a model; each call answers
with the envelope's text as content, the envelope as structuredContent and
isError when its status is "error". --tools compat adds the compatibility
tools find_files_by_name and search_in_files (their seed's input and
output shapes).

Calls go to the shared daemon, started when none answers, as queries do;
with --direct (or INDEXCTL_DIRECT=1), or when no daemon can be reached,
they are answered in this process by walking the tree.

The workspace root is --root; without it, the first file:// root the
client offers (MCP roots); without any, the nearest ancestor of the
current directory holding .git, else the current directory. Nothing
outside the root can be searched. A client root of / or one owned by
another user, and a default root of /, are refused (the calls answer
ACCESS_DENIED): only --root can choose such a root. Warnings go to
standard error.`,
	exit: "Exit status: 0 once the client disconnects (or on SIGINT or SIGTERM), 2 error.",
	examples: []string{
		"indexctl mcp --root ~/src/myrepo",
		"indexctl mcp --tools compat",
		"indexctl mcp --direct --tools Grep,search_in_files",
	},
	define: func(fs *pflag.FlagSet) runFunc {
		tools := fs.String("tools", strings.Join(mcp.DefaultTools, ","), "comma-separated `LIST` of the tools to offer: Glob, Grep, LS, Changes, find_files_by_name, search_in_files, or compat for all six")
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			names, err := mcp.ParseTools(*tools)
			if err != nil {
				return 0, err
			}
			cfg := mcp.Config{
				Tools:   names,
				Version: daemon.BinaryVersion(),
				Logger:  slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
				DefaultRoot: func() (string, error) {
					where, err := locate("")
					return where.root, err
				},
			}
			if g.root != "" {
				where, err := locate(g.root)
				if err != nil {
					fmt.Fprintf(c.stderr, "indexctl mcp: %v\n", err)
					return exitError, nil
				}
				cfg.Root = where.root
			}
			r := c.runner(g)
			cfg.Query = func(ctx context.Context, tool, root string, args json.RawMessage) (json.RawMessage, error) {
				env, err := r.query(ctx, request{Tool: tool, Root: root, Cwd: ".", Args: args})
				if errors.Is(err, rpc.ErrNoAnswer) {
					// A hung daemon: the agent gets a TIMEOUT envelope
					// saying so, as the CLI exits 2.
					return envelope.Fail(envelope.Context{Cwd: ".", ParamsInput: args}, envelope.Errorf(envelope.CodeTimeout, "%v", err), 0).MarshalJSON()
				}
				return env, err
			}
			srv, err := mcp.New(cfg)
			if err != nil {
				fmt.Fprintf(c.stderr, "indexctl mcp: %v\n", err)
				return exitError, nil
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := srv.Run(ctx, c.stdin, c.stdout); err != nil {
				fmt.Fprintf(c.stderr, "indexctl mcp: session ended: %v\n", err)
				return exitError, nil
			}
			return exitFound, nil
		}
	},
}
