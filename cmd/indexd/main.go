// Command indexd is the indexd engine (docs/product.md, "Two programs"): the
// daemon that serves the Glob, Grep and LS tools over a Unix socket from an
// index of each root it is asked about, and everything else the query client
// indexctl does not link: its MCP server (indexctl mcp), its in-process walk
// (indexctl --direct) and its daemon command (indexctl daemon), which
// indexctl runs from this binary, found beside indexctl or on $PATH. Queries
// made with indexctl start the daemon on their own; run this to manage it
// yourself (under systemd, say). The command line is internal/engine's.
package main

import (
	"os"

	"github.com/indexd/indexd/internal/engine"
)

func main() {
	os.Exit(engine.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
