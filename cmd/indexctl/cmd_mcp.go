package main

import (
	"fmt"
	"strings"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/tool"
)

// mcpCmd is "indexctl mcp": the MCP server an agent runs on stdio (the
// engine's "indexd mcp", which this process becomes).
var mcpCmd = &command{
	name:    "mcp",
	summary: "serve Glob, Grep, LS and Changes to an agent: an MCP server on stdin/stdout",
	about: `Serve the tools to an agent as a Model Context Protocol server on standard
input and output (its MCP client starts this command): Glob, Grep, LS and
Changes, with input schemas and descriptions written for a model; each call answers
with the envelope's text as content, the envelope as structuredContent and
isError when its status is "error". --tools compat adds the compatibility
tools find_files_by_name and search_in_files (the input and output
shapes of the MCP server their clients were written against).

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
	define: func(fs *cliflag.FlagSet) runFunc {
		tools := new(string)
		fs.StringVar(tools, "tools", "", strings.Join(tool.Names(), ","), "comma-separated `LIST` of the tools to offer: Glob, Grep, LS, Changes, find_files_by_name, search_in_files, or compat for all six")
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			// The server is the engine's: this process becomes it, so
			// the client's stdin and stdout reach it as they are.
			eargs := []string{"mcp", "--tools", *tools}
			if g.root != "" {
				eargs = append(eargs, "--root", g.root)
			}
			if g.socket != "" {
				eargs = append(eargs, "--socket", g.socketPath())
			}
			if g.direct {
				eargs = append(eargs, "--direct")
			}
			err := c.execEngine(eargs...)
			fmt.Fprintf(c.stderr, "indexctl mcp: %v\n", err)
			return daemonapi.ExitError, nil
		}
	},
}
