// Package engine is the command line of the engine binary, cmd/indexd:
// everything indexd does that the query client (cmd/indexctl) does not
// link. Run with no command it is the daemon; its commands are what
// indexctl hands to it:
//
//	indexd [flags]                 the daemon (under systemd, say; queries start it detached)
//	indexd daemon [flags]          the same, unless a daemon already serves the socket (indexctl daemon)
//	indexd mcp [flags]             the MCP server on stdin/stdout (indexctl mcp, by exec)
//	indexd direct [flags] TOOL     one tool call answered in this process by walking (indexctl --direct,
//	                               and indexctl's fallback when no daemon can be reached): the tool's
//	                               arguments as JSON on stdin, the envelope as JSON on stdout
//	indexd forget ROOT             delete ROOT's saved index when no daemon runs (indexctl forget)
//
// The commands indexctl hands over name themselves as indexctl's
// ("indexctl mcp: ..."), which is what its users ran; the daemon run
// with no command is "indexd".
package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/indexd/indexd/daemon"
	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/mcp"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
)

// Commands of the engine (see the package documentation).
const (
	CmdDaemon = "daemon"
	CmdMCP    = "mcp"
	CmdDirect = "direct"
	CmdForget = "forget"
)

// Main runs the engine's command line args (args[0] is the program's name)
// and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(args, stdin, stdout, stderr, rpc.Dialer{})
}

// run is Main, connecting to the daemon with dialer (the rpc package's
// default timeouts; this package's tests shorten them).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, dialer rpc.Dialer) int {
	if len(args) > 0 {
		args = args[1:]
	}
	if len(args) > 0 {
		switch args[0] {
		case CmdDaemon:
			return runDaemon("indexctl "+CmdDaemon, args[1:], stdout, stderr, true)
		case CmdMCP:
			return runMCP("indexctl "+CmdMCP, args[1:], stdin, stdout, stderr, dialer)
		case CmdDirect:
			return runDirect("indexd "+CmdDirect, args[1:], stdin, stdout, stderr)
		case CmdForget:
			return runForget("indexd "+CmdForget, args[1:], stdout, stderr)
		}
	}
	return runDaemon("indexd", args, stdout, stderr, false)
}

func newFlagSet(name string) *cliflag.FlagSet { return cliflag.New(name) }

// socketPath is the socket flag's value made absolute, else the default.
func socketPath(flag string) string {
	if flag == "" {
		return rpc.DefaultSocketPath()
	}
	if abs, err := filepath.Abs(flag); err == nil {
		return abs
	}
	return flag
}

// usage reports a bad command line.
func usage(name string, stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s: %v\nRun '%s -h' for usage.\n", name, err, name)
	return daemonapi.ExitError
}

// runDaemon runs the daemon in the foreground. With check (the daemon
// command), a daemon already serving the socket is said and not an error.
func runDaemon(name string, args []string, stdout, stderr io.Writer, check bool) int {
	var (
		cfg    daemon.Config
		df     daemonapi.DaemonFlags
		socket string
	)
	fs := newFlagSet(name)
	fs.StringVar(&socket, "socket", "", "", "listen on the socket `PATH` (default: $INDEXD_SOCKET, else $XDG_RUNTIME_DIR/indexd/indexd.sock, else ~/.cache/indexd/indexd.sock)")
	df.Define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, cliflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: %s [flags]\n\nRun the indexd daemon until SIGINT or SIGTERM (or the shutdown method:\n'indexctl stop').\n\nFlags:\n%s", name, fs.Usages())
			fmt.Fprint(stdout, "\nThe engine's other commands, which indexctl runs: mcp (the MCP server), direct\n(one tool call answered by walking), forget (a saved index, with no daemon).\n")
			return daemonapi.ExitFound
		}
		return usage(name, stderr, err)
	}
	if len(fs.Args()) > 0 {
		return usage(name, stderr, fmt.Errorf("unexpected argument %q", fs.Args()[0]))
	}
	cfg.SocketPath = socketPath(socket)
	cfg.StateDir, cfg.IdleExit = df.StateDir, df.IdleExit
	if check && running(cfg.SocketPath) {
		fmt.Fprintf(stderr, "%s: a daemon already serves %s\n", name, cfg.SocketPath)
		return daemonapi.ExitFound
	}
	cfg.Version = daemonapi.BinaryVersion()
	cfg.MaxMemory = df.MaxMemoryMB << 20
	if err := daemon.Foreground(cfg); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return daemonapi.ExitError
	}
	return daemonapi.ExitFound
}

// running reports whether a daemon answers on socket.
func running(socket string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := rpc.Dial(ctx, socket)
	if err != nil {
		return false
	}
	defer cl.Close()
	return cl.Ping(ctx) == nil
}

// Direct answers a tool call in this process from the live tree, with no
// daemon and no index. With a reason, the answer is marked as a fallback
// for it (the daemon could not be reached); --direct has none: walking is
// then the user's choice. An error means there is no envelope (the
// workspace could not be opened).
func Direct(ctx context.Context, req client.Request, reason envelope.FallbackReason) (json.RawMessage, error) {
	ws, err := query.NewWorkspace(req.Root)
	if err != nil {
		return nil, err
	}
	tools := query.NewDirect(ws)
	tools.Unlimited = req.Unlimited
	if req.Voice == rpc.VoiceCLI {
		tools.Voice = query.CLIVoice
	}
	if req.OnBatch != nil {
		tools.Sink = func(b query.Batch) { req.OnBatch(b.AppendJSON(nil)) }
	}
	if reason != "" {
		tools.Searcher = daemon.FallbackWalk{Reason: reason}
	}
	return tools.Run(ctx, req.Tool, req.Cwd, req.Args).MarshalJSON() // json.Marshal would re-escape "<" as \u003c
}

// directGCPercent is the collector's GOGC for "direct", a process that
// answers one query and exits: a walk of GOROOT/src allocates about 10
// MB, of which 9 stay live, and with the default of 100 the collector
// ran 5 times from a 4 MB heap: 70–73 ms for a full scan
// (grep xyzzy), 65.5–67 ms with 400, its peak RSS 24 → 29 MB (on a
// 200,000-file tree 60 → 90 MB).
const directGCPercent = 400

// oneShotGC sets the collector for a one-shot process, unless GOGC in the
// environment says otherwise.
func oneShotGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(directGCPercent)
	}
}

// BatchPrefix starts each line of results "direct --stream" writes ahead
// of the envelope: {"batch":BATCH}, BATCH a query.Batch.
const BatchPrefix = `{"batch":`

// runDirect runs "direct --root ROOT [--cwd CWD] [--reason REASON]
// [--unlimited [--stream]] TOOL", the tool's arguments on stdin: the
// envelope goes to stdout and the exit code is 0; an error (no envelope)
// goes to stderr, alone on its line, with exit code 2. With --unlimited
// the limit is the command line's (0: every result); with --stream too,
// Glob's and Grep's results come first, a line {"batch":BATCH} each, and
// the envelope, last, holds none of them.
func runDirect(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var (
		root, cwd, reason      string
		unlimited, stream, cli bool
	)
	fs := newFlagSet(name)
	fs.StringVar(&root, "root", "", "", "the workspace root `DIR`, absolute")
	fs.StringVar(&cwd, "cwd", "", ".", "the working directory relative to the root")
	fs.StringVar(&reason, "reason", "", "", "mark the answer as a fallback for `REASON`")
	fs.BoolVar(&unlimited, "unlimited", "", false, "the command line's rules: no default limit or time limit")
	fs.BoolVar(&stream, "stream", "", false, "with --unlimited: write the results as they are found, ahead of the envelope")
	fs.BoolVar(&cli, "cli", "", false, "word the answer's hints and messages for the command line (the flag to give)")
	if err := fs.Parse(args); err != nil {
		return usage(name, stderr, err)
	}
	if len(fs.Args()) != 1 || root == "" {
		return usage(name, stderr, errors.New("want --root DIR and one TOOL"))
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "reading the arguments: %v\n", err)
		return daemonapi.ExitError
	}
	oneShotGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	req := client.Request{Tool: fs.Args()[0], Root: root, Cwd: cwd, Args: raw, Unlimited: unlimited}
	if cli {
		req.Voice = rpc.VoiceCLI
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if stream && unlimited {
		req.OnBatch = func(b json.RawMessage) {
			out.WriteString(BatchPrefix)
			out.Write(b)
			out.WriteString("}\n")
		}
	}
	env, err := Direct(ctx, req, envelope.FallbackReason(reason))
	if err != nil {
		fmt.Fprintf(stderr, "%s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return daemonapi.ExitError
	}
	fmt.Fprintf(out, "%s\n", env)
	return daemonapi.ExitFound
}

// runForget runs "forget ROOT": it deletes ROOT's saved index (the state
// directory's DB of the root, symlinks resolved when it still exists)
// while no daemon runs. Exit 0: deleted; 1: there was none; 2: error.
func runForget(name string, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		return usage(name, stderr, errors.New("want one absolute ROOT"))
	}
	root := args[0]
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	err := os.Remove(filepath.Join(daemonapi.DefaultStateDir(), daemon.DBName(root)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return daemonapi.ExitNothing
	case err != nil:
		fmt.Fprintf(stderr, "%v\n", err)
		return daemonapi.ExitError
	}
	return daemonapi.ExitFound
}

// envDirect reports whether INDEXCTL_DIRECT asks for --direct.
func envDirect() bool {
	v, err := strconv.ParseBool(os.Getenv("INDEXCTL_DIRECT"))
	return err == nil && v
}

// runMCP runs the MCP server (indexctl mcp; see its help there).
func runMCP(name string, args []string, stdin io.Reader, stdout, stderr io.Writer, dialer rpc.Dialer) int {
	var (
		toolList, rootFlag, socketFlag string
		direct                         bool
	)
	fs := newFlagSet(name)
	fs.StringVar(&toolList, "tools", "", strings.Join(mcp.DefaultTools, ","), "comma-separated `LIST` of the tools to offer: Glob, Grep, LS, Changes, find_files_by_name, search_in_files, or compat for all six")
	fs.StringVar(&rootFlag, "root", "", "", "workspace root `DIR`")
	fs.BoolVar(&direct, "direct", "", false, "answer in this process by walking the tree, with no daemon")
	fs.StringVar(&socketFlag, "socket", "", "", "reach the daemon on the socket `PATH`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, cliflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: %s [flags]\n\nServe Glob, Grep, LS and Changes as an MCP server on stdin/stdout ('indexctl\nmcp -h' tells more).\n\nFlags:\n%s", name, fs.Usages())
			return daemonapi.ExitFound
		}
		return usage(name, stderr, err)
	}
	if len(fs.Args()) > 0 {
		return usage(name, stderr, fmt.Errorf("unexpected argument %q", fs.Args()[0]))
	}
	names, err := mcp.ParseTools(toolList)
	if err != nil {
		return usage(name, stderr, err)
	}
	cfg := mcp.Config{
		Tools:   names,
		Version: daemonapi.BinaryVersion(),
		Logger:  slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		DefaultRoot: func() (string, error) {
			where, err := client.Locate("")
			return where.Root, err
		},
	}
	if rootFlag != "" {
		where, err := client.Locate(rootFlag)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return daemonapi.ExitError
		}
		cfg.Root = where.Root
	}
	query := func(ctx context.Context, req client.Request) (json.RawMessage, error) {
		return Direct(ctx, req, "")
	}
	if !direct && !envDirect() {
		d := &client.Daemon{Socket: socketPath(socketFlag), Stderr: stderr, Engine: client.SelfEngine(), Fallback: Direct, Dialer: dialer}
		query = d.Query
	}
	cfg.Query = func(ctx context.Context, tool, root string, args json.RawMessage) (json.RawMessage, error) {
		env, err := query(ctx, client.Request{Tool: tool, Root: root, Cwd: ".", Args: args})
		if errors.Is(err, rpc.ErrNoAnswer) {
			// A hung daemon: the agent gets a TIMEOUT envelope
			// saying so, as the CLI exits 2.
			return envelope.Fail(envelope.Context{Cwd: ".", ParamsInput: args}, envelope.Errorf(envelope.CodeTimeout, "%v", err), 0).MarshalJSON()
		}
		return env, err
	}
	srv, err := mcp.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return daemonapi.ExitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: session ended: %v\n", name, err)
		return daemonapi.ExitError
	}
	return daemonapi.ExitFound
}
