package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/indexd/indexd/internal/client"
	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/filetype"
	"github.com/indexd/indexd/internal/jsonenc"
	"github.com/indexd/indexd/internal/suggest"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// command is a subcommand: a query (one tool, its parameters as flags)
// or, with define set, one of the commands that manage the daemon.
type command struct {
	name    string // subcommand name
	tool    string // tool.Glob, Grep or LS; "" for the others
	arg     string // the positional argument in usage lines: "PATTERN", "[PATH]"
	summary string // one line, for the command list
	about   string // the help's description paragraph
	// positional is the parameter the first positional argument sets.
	positional string
	params     []param
	examples   []string

	// define, for a command that is not a query, adds the command's own
	// flags to fs and returns the function that runs it with their
	// values and the positional arguments.
	define func(fs *cliflag.FlagSet) runFunc
	// exit is the help's exit-status paragraph ("" for a query's).
	exit string
}

// runFunc runs a command that is not a query and returns its exit code;
// an error is a usage error (a bad command line), reported with the
// command's usage.
type runFunc func(c *cli, g *globals, args []string) (int, error)

// commands are the subcommands, in the order help lists them.
var commands = []*command{globCmd, grepCmd, lsCmd, changesCmd, indexCmd, statusCmd, forgetCmd, stopCmd, versionCmd, completionCmd, mcpCmd, daemonCmd}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// globals are the flags every command accepts, before or after its name.
type globals struct {
	root    string
	json    bool
	direct  bool
	socket  string
	color   string
	voice   string
	stats   bool
	version bool
	help    bool
}

// define adds the global flags to fs. Their defaults are g's current
// values, so flags given before the command's name survive the command's
// own parse.
func (g *globals) define(fs *cliflag.FlagSet) {
	fs.StringVar(&g.root, "root", "", g.root, "workspace root `DIR`, the boundary no query leaves (default: the nearest ancestor of the current directory holding .git, else the current directory; a deeper root the daemon already has that holds the current directory wins, so a subdirectory adds no root)")
	fs.BoolVar(&g.json, "json", "", g.json, "print the answer as one line of JSON instead of text: for a query, the whole response envelope")
	fs.BoolVar(&g.direct, "direct", "", g.direct, "answer in this process by walking the tree, with no daemon (also when INDEXCTL_DIRECT=1)")
	fs.StringVar(&g.socket, "socket", "", g.socket, "reach the daemon on the socket `PATH` (default: $INDEXD_SOCKET, else $XDG_RUNTIME_DIR/indexd/indexd.sock, else ~/.cache/indexd/indexd.sock)")
	fs.StringVar(&g.color, "color", "", g.color, "colour paths, line numbers and matches: `WHEN` is auto (on a terminal, unless NO_COLOR is set; the default), always or never (--colour too)")
	fs.StringVar(&g.voice, "voice", "", g.voice, "whom a query's hints and messages address: `WHO` is cli (they name flags: --limit; the default) or agent (the tools' parameters: limit, as the MCP server words them: for a program calling on an agent's behalf)")
	fs.BoolVar(&g.stats, "stats", "", g.stats, "when standard output is not a terminal, write the summary lines (counts, timing) to standard error too")
	fs.BoolVar(&g.version, "version", "", g.version, "print indexctl's version and build")
	fs.BoolVar(&g.help, "help", "h", g.help, "show help")
}

// voiceOf is the rpc.ToolParams.Voice of a --voice value.
func voiceOf(who string) (string, error) {
	switch who {
	case "", "cli":
		return rpc.VoiceCLI, nil
	case "agent":
		return "", nil
	}
	return "", fmt.Errorf("invalid value %q for --voice: want cli or agent", who)
}

func newFlagSet(name string) *cliflag.FlagSet {
	fs := cliflag.New(name)
	fs.Alias("colour", "color") // rg's spelling too
	return fs
}

// cli is one invocation's standard streams.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	sys            system
	eng            *client.Engine // found by engine, once
}

// system is what indexctl takes from the process it runs in: the
// process's own (processSystem), or in this package's tests, which run
// indexctl in their process, theirs.
type system struct {
	// dialer connects to the daemon (the rpc package's default timeouts).
	dialer rpc.Dialer
	// isTerminal reports whether w is a terminal.
	isTerminal func(w io.Writer) bool
	// execve replaces the process (syscall.Exec).
	execve func(path string, argv, env []string) error
	// findEngine finds the engine binary (client.FindEngine), telling
	// note what it does meanwhile; cli.engine calls it once.
	findEngine func(note func(msg string)) *client.Engine
}

// processSystem is the system of indexctl's own process.
func processSystem() system {
	return system{isTerminal: isTerminal, execve: syscall.Exec, findEngine: client.FindEngine}
}

// run is indexctl's entry point: it runs the command line args (without
// the program name) in this process and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&cli{stdin: stdin, stdout: stdout, stderr: stderr, sys: processSystem()}).run(args)
}

// run runs the command line args (without the program name) and returns
// the exit code.
func (c *cli) run(args []string) int {
	var g globals
	fs := newFlagSet("indexctl")
	fs.StopAtArgument() // global flags, up to the command's name
	g.define(fs)
	if err := fs.Parse(args); err != nil {
		return c.parseError(nil, fs, err)
	}
	if g.help {
		fmt.Fprint(c.stdout, mainHelp())
		return daemonapi.ExitFound
	}
	if g.version {
		fmt.Fprintf(c.stdout, "indexctl %s\n", clientVersion())
		return daemonapi.ExitFound
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(c.stderr, "indexctl: no command given\n\n"+mainHelp())
		return daemonapi.ExitError
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return c.help(rest)
	}
	cmd := lookup(name)
	if cmd == nil {
		return c.unknownCommand(name)
	}
	if cmd.define != nil {
		return c.manage(cmd, &g, rest)
	}
	return c.query(cmd, &g, rest)
}

// help runs "indexctl help [COMMAND]".
func (c *cli) help(args []string) int {
	switch {
	case len(args) == 0 || len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprint(c.stdout, mainHelp())
		return daemonapi.ExitFound
	case len(args) > 1:
		return c.usageError(nil, fmt.Errorf("help takes one command name, got %d arguments", len(args)))
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return c.unknownCommand(args[0])
	}
	fmt.Fprint(c.stdout, cmd.help())
	return daemonapi.ExitFound
}

// flagSets returns the command's own flags (a query's are its tool's
// parameters and --args) and the global flags.
func (cmd *command) flagSets(g *globals, q *queryFlags) (own, global *cliflag.FlagSet) {
	own = newFlagSet("indexctl " + cmd.name)
	global = newFlagSet("indexctl")
	g.define(global)
	if cmd.define != nil {
		cmd.define(own)
		return own, global
	}
	q.order.at = map[string]int{}
	for _, p := range cmd.params {
		p.define(own, &q.order)
	}
	if cmd.tool == tool.Grep {
		own.StringsVar(&q.patterns, "regexp", "e", "search for `PATTERN` (repeatable: lines matching any of them); every positional argument is then a PATH")
		own.BoolVar(&q.word, "word-regexp", "w", false, "match whole words only, as rg -w: a match has a non-word character or the line's start before it, and one or the line's end after it")
		own.BoolVar(&q.only, "only-matching", "o", false, "print only the matching parts of lines, one a line")
		own.IntVar(&q.maxCount, "max-count", "m", 0, "show at most `N` matching lines of each file")
		own.BoolVar(&q.files, "files", "", false, "list the files that would be searched, without searching them (no PATTERN: every positional argument is a PATH)")
		own.BoolVar(&q.lineNum, "line-number", "n", false, "accepted for rg's sake: line numbers are always shown")
		own.BoolVar(&q.noop, "with-filename", "H", false, "accepted for rg's sake: file names are always shown")
		own.BoolVar(&q.noop, "no-heading", "", false, "accepted for rg's sake: each line names its file")
	}
	if cmd.tool != tool.LS && cmd.tool != tool.Changes {
		short := "u"
		usage := "search what ignore rules leave out too (-u, as --no-ignore), and hidden names (-uu)"
		if cmd.tool == tool.Glob {
			usage = "match hidden names and what ignore rules leave out too (as fd -u: --hidden --no-ignore)"
		}
		own.CountVar(&q.unrestricted, "unrestricted", short, usage)
	}
	if cmd.tool == tool.Glob || cmd.tool == tool.Grep {
		own.BoolVar(&q.null, "null", "0", false, "end each file name with a NUL byte instead of a newline (or ':' before a line), for xargs -0")
	}
	if cmd.tool != tool.LS {
		own.BoolVar(&q.typeList, "type-list", "", false, "list the file types -t and -T know, with their globs, and exit")
	}
	own.BoolVar(&q.all, "all", "", false, "show every result (the default; with --args, lifts the agent tool's limit)")
	own.StringVar(&q.args, "args", "", "", "the tool's arguments as one `JSON` object, as an agent sends them (\"-\": read it from standard input); flags given too override its keys")
	return own, global
}

// query runs one query subcommand: once, or once per PATH argument, each
// PATH searched as --path would be.
func (c *cli) query(cmd *command, g *globals, args []string) int {
	var q queryFlags
	fs, global := cmd.flagSets(g, &q)
	fs.Include(global)
	if err := fs.Parse(args); err != nil {
		return c.parseError(cmd, fs, err)
	}
	if g.help {
		fmt.Fprint(c.stdout, cmd.help())
		return daemonapi.ExitFound
	}
	if q.typeList {
		return c.typeList()
	}
	positional := fs.Args()
	var paths []string
	if len(q.patterns) > 0 || q.files {
		// -e gives the patterns (--files needs none): every argument
		// is a PATH.
		positional, paths = nil, positional
		if len(paths) > 0 && fs.Changed("path") {
			return c.usageError(cmd, fmt.Errorf("the path is given both as an argument and with --path"))
		}
	}
	if cmd.positional == "pattern" && len(positional) == 0 && len(q.patterns) == 0 && !q.files && !fs.Changed("args") {
		return c.usageError(cmd, errors.New("missing PATTERN"))
	}
	if q.only && cmd.tool == tool.Grep {
		if fs.On("multiline") {
			return c.usageError(cmd, errors.New("-o cannot be combined with --multiline"))
		}
		if fs.On("invert-match") {
			return c.usageError(cmd, errors.New("-o cannot be combined with -v: inverted lines have no matching part"))
		}
	}
	if q.maxCount < 0 {
		return c.usageError(cmd, fmt.Errorf("invalid value %d for --max-count: want a positive integer", q.maxCount))
	}
	switch {
	case cmd.positional == "path" && len(positional) > 1:
		return c.usageError(cmd, fmt.Errorf("unexpected argument %q (only one PATH is taken; quote it if it holds spaces)", positional[1]))
	case len(positional) == 1 && cmd.positional == "path" && fs.Changed("path"):
		return c.usageError(cmd, fmt.Errorf("the path is given both as an argument and with --path"))
	case len(positional) > 1:
		if fs.Changed("path") {
			return c.usageError(cmd, fmt.Errorf("the path is given both as an argument and with --path"))
		}
		positional, paths = positional[:1], positional[1:]
	}
	if err := checkColor(g.color); err != nil {
		return c.usageError(cmd, err)
	}
	voice, err := voiceOf(g.voice)
	if err != nil {
		return c.usageError(cmd, err)
	}
	raw, bound, err := toolArgs(cmd, fs, &q, positional, c.stdin)
	if err != nil {
		return c.usageError(cmd, err)
	}
	if q.files {
		// rg --files: the files a search would read, which Glob lists.
		if raw, err = filesArgs(raw); err != nil {
			return c.usageError(cmd, err)
		}
		cmd = globCmd
	}
	where, err := locate(g.root)
	if err != nil {
		fmt.Fprintf(c.stderr, "indexctl: %v\n", err)
		return daemonapi.ExitError
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := c.newOutput(g, where.cwd)
	out.gone = cancel // a reader gone mid-stream ends the query
	out.bound, out.only, out.maxCount, out.null, out.word = bound, q.only, q.maxCount, q.null, q.word
	out.firstBatch = func() {
		// Results printed as they come can take long: an interrupt then
		// ends the query and what was printed is flushed. A short answer
		// keeps the default disposition (it dies by the signal, as rg
		// does): catching it starts the runtime's signal-receiving
		// thread, 0.15-0.2 ms of every call.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		go func() {
			select {
			case <-sig:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	reqs := []json.RawMessage{raw}
	if len(paths) > 0 {
		reqs = reqs[:0]
		for _, p := range paths {
			r, err := withPath(cmd, raw, p)
			if err != nil {
				return c.usageError(cmd, err)
			}
			reqs = append(reqs, r)
		}
	}
	code := -1
	r := c.runner(g)
	for _, args := range reqs {
		req := request{Tool: cmd.tool, Root: where.root, Cwd: where.cwd, Args: args, Unlimited: bound != agentBound, RootFrom: where.from, Voice: voice}
		if bound == noBound && !g.json && (cmd.tool == tool.Glob || cmd.tool == tool.Grep) {
			req.OnBatch = out.batch // every result, printed as it comes
		}
		out.begin(args)
		answer, err := r.query(ctx, req)
		if out.closed() {
			return daemonapi.ExitFound // the reader has gone (| head): rg ends quietly too
		}
		if err != nil {
			out.flush()
			fmt.Fprintf(c.stderr, "indexctl: %v\n", err)
			return daemonapi.ExitError
		}
		code = combine(code, out.answer(cmd.tool, args, answer))
		if out.closed() {
			return daemonapi.ExitFound // the reader has gone (| head): rg ends quietly too
		}
	}
	return out.finish(code)
}

// withPath returns the tool arguments raw with "path" set to p.
//
// A PATH naming a file (for grep, as rg takes one) searches that file: its
// directory, with a glob anchored on its name replacing any -g, -t, -T
// and --include (rg searches a file it is given whatever its filters).
func withPath(cmd *command, raw json.RawMessage, p string) (json.RawMessage, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && cmd.tool == tool.Grep {
		dir, base := filepath.Split(p)
		if dir == "" {
			dir = "."
		}
		g, err := jsonenc.Marshal([]string{sendable(cmd, "include", "/"+globEscape(base))})
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"type", "type_not", "include"} {
			delete(obj.vals, k)
			obj.keys = slices.DeleteFunc(obj.keys, func(s string) bool { return s == k })
		}
		obj.set("glob", g)
		p = filepath.Clean(dir)
	}
	v, err := jsonenc.Marshal(sendable(cmd, "path", p))
	if err != nil {
		return nil, err
	}
	obj.set("path", v)
	return obj.MarshalJSON()
}

// globEscape quotes the glob metacharacters of a file name.
func globEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// combine is the exit code of several answers, as rg's: an error wins,
// then found, then nothing found. prev is -1 before the first.
func combine(prev, code int) int {
	switch {
	case prev < 0:
		return code
	case prev == daemonapi.ExitError || code == daemonapi.ExitError:
		return daemonapi.ExitError
	case prev == daemonapi.ExitFound || code == daemonapi.ExitFound:
		return daemonapi.ExitFound
	}
	return daemonapi.ExitNothing
}

// typeList prints the file types of -t and -T as rg --type-list does.
func (c *cli) typeList() int {
	var b strings.Builder
	for _, t := range filetype.All() {
		b.WriteString(t.Name + ": " + strings.Join(t.Globs, ", ") + "\n")
	}
	fmt.Fprint(c.stdout, b.String())
	return daemonapi.ExitFound
}

// manage runs a command that is not a query.
func (c *cli) manage(cmd *command, g *globals, args []string) int {
	fs := newFlagSet("indexctl " + cmd.name)
	runCmd := cmd.define(fs)
	global := newFlagSet("indexctl")
	g.define(global)
	fs.Include(global)
	if err := fs.Parse(args); err != nil {
		return c.parseError(cmd, fs, err)
	}
	if g.help {
		fmt.Fprint(c.stdout, cmd.help())
		return daemonapi.ExitFound
	}
	code, err := runCmd(c, g, fs.Args())
	if err != nil {
		return c.usageError(cmd, err)
	}
	return code
}

// unknownCommand reports a command name that is none, in one line, with
// the nearest one.
func (c *cli) unknownCommand(name string) int {
	names := []string{"help"}
	for _, cmd := range commands {
		names = append(names, cmd.name)
	}
	hint := "'indexctl -h' lists the commands"
	if s := suggest.Closest(name, names); s != "" {
		hint = "did you mean '" + s + "'? " + hint
	}
	fmt.Fprintf(c.stderr, "indexctl: unknown command %q (%s)\n", name, hint)
	return daemonapi.ExitError
}

// parseError reports a command line fs could not parse: an unknown flag
// in one line, with the nearest flag there is; anything else as a usage
// error.
func (c *cli) parseError(cmd *command, fs *cliflag.FlagSet, err error) int {
	if errors.Is(err, cliflag.ErrHelp) {
		err = errors.New("unknown flag") // -h and --help are defined: not reached
	}
	var ue *cliflag.UnknownError
	if !errors.As(err, &ue) {
		return c.usageError(cmd, err)
	}
	prog, help := "indexctl", "indexctl -h"
	if cmd != nil {
		prog, help = "indexctl "+cmd.name, "indexctl "+cmd.name+" -h"
	}
	given, hint := "-"+ue.Name, ""
	if !ue.Short {
		given = "-" + given
		var names []string
		for _, f := range fs.Flags() {
			names = append(names, f.Name)
		}
		if s := suggest.Closest(ue.Name, names); s != "" {
			hint = "did you mean --" + s + "? "
		}
	}
	fmt.Fprintf(c.stderr, "%s: unknown flag %s (%s'%s' lists the flags)\n", prog, given, hint, help)
	return daemonapi.ExitError
}

func (c *cli) usageError(cmd *command, err error) int {
	if cmd == nil {
		fmt.Fprintf(c.stderr, "indexctl: %v\nRun 'indexctl -h' for usage.\n", err)
		return daemonapi.ExitError
	}
	fmt.Fprintf(c.stderr, "indexctl %s: %v\nUsage: %s\nRun 'indexctl %s -h' for its flags.\n", cmd.name, err, cmd.usageLine(), cmd.name)
	return daemonapi.ExitError
}

func (cmd *command) usageLine() string {
	return strings.TrimSuffix(fmt.Sprintf("indexctl %s [flags] %s", cmd.name, cmd.arg), " ")
}

// mainHelp is the text of "indexctl -h".
func mainHelp() string {
	var g globals
	global := newFlagSet("indexctl")
	g.define(global)
	rows := make([][2]string, 0, len(commands)+1)
	for _, cmd := range commands {
		rows = append(rows, [2]string{strings.TrimSpace(cmd.name + " " + cmd.arg), cmd.summary})
	}
	rows = append(rows, [2]string{"help [COMMAND]", "show help for indexctl or for one command"})

	var b strings.Builder
	b.WriteString(`indexctl answers the file-search tools of coding agents from the command
line: Glob (find files by name), Grep (search file contents, newest files
first), LS (list a directory) and Changes (what changed since a clock),
inside one workspace root.

Queries go to the indexd daemon, which the first query starts (the
engine, indexd, beside indexctl or on $PATH) and which keeps an index of
each root it is asked about. A query on a root whose index is being built
waits for it briefly (a small tree's first answer comes from the index);
if it is still not ready, and with --direct, the tree is walked instead.
If no daemon can be reached or
started, indexctl warns and walks the tree itself.

Usage:
  indexctl [global flags] COMMAND [flags] [ARG...]

Commands:
`)
	writeTable(&b, rows)
	b.WriteString("\nGlobal flags (before or after COMMAND):\n")
	writeTable(&b, flagRows(global))
	b.WriteString(`
Query flags are the tool's parameter names in kebab case (include_hidden is
--include-hidden), and rg's and fd's where they mean the same (-i, -l, -e,
-o, -m, -S, -0, --files, --hidden, --no-ignore, -u, ...). Complete, or it
says so: as rg and fd, the command line has no default cap and no time
limit (--limit and --timeout-ms set them), and an answer cut short by
anything but a --limit given (a time limit, an unreadable file) prints
what was found, then "indexctl: incomplete: ..." on standard error, and
exits 2. --args JSON passes the tool's arguments as one JSON object,
exactly as an agent sends them, under the agent tools' limits; flags and
the positional argument given too override its keys.

Output: on a terminal, the answer's text as an agent reads it (a summary,
notes, then the results), coloured (--color). When standard output is not
a terminal it carries the results only, one per line, and the summary goes
to standard error with --stats; notes ([Truncated: ...], [Info: ...]) and
errors always go to standard error, prefixed "indexctl:". Paths are
relative to the current directory when it lies inside the root, as git
grep prints them; with --json, the whole response envelope (status, data,
text, stats, context and, on error, error) as one line of JSON, its paths
relative to the root as the agent tools give them. A reader that goes
away (| head) ends indexctl quietly with status 0.

Exit status: 0 found something, 1 found nothing, 2 error or incomplete.
(For index, status, forget and stop, see their help.)

Run 'indexctl help COMMAND' for a command's flags.
`)
	return b.String()
}

// help is the text of "indexctl COMMAND -h".
func (cmd *command) help() string {
	var (
		g globals
		q queryFlags
	)
	own, global := cmd.flagSets(&g, &q)
	ownRows, globalRows := flagRows(own), flagRows(global)
	width := max(tableWidth(ownRows), tableWidth(globalRows))

	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n\n", cmd.usageLine(), cmd.about)
	if len(ownRows) > 0 {
		b.WriteString("Flags:\n")
		writeTableWidth(&b, ownRows, width)
		b.WriteString("\n")
	}
	b.WriteString("Global flags:\n")
	writeTableWidth(&b, globalRows, width)
	if cmd.exit != "" {
		b.WriteString("\n" + cmd.exit + "\n")
	} else {
		b.WriteString("\nExit status: 0 found something, 1 found nothing, 2 error or incomplete.\n")
	}
	if len(cmd.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range cmd.examples {
			b.WriteString("  " + e + "\n")
		}
	}
	return b.String()
}

// flagRows returns a help row (flag names, description) per flag, in
// definition order.
func flagRows(fs *cliflag.FlagSet) [][2]string {
	var rows [][2]string
	for _, f := range fs.Flags() {
		name, usage := cliflag.ValueName(f)
		left := "    --" + f.Name
		if f.Short != "" {
			left = "-" + f.Short + ", --" + f.Name
		}
		if name != "" {
			left += " " + name
		}
		rows = append(rows, [2]string{left, usage})
	}
	return rows
}

func tableWidth(rows [][2]string) int {
	w := 0
	for _, r := range rows {
		w = max(w, len(r[0]))
	}
	return w
}

func writeTable(b *strings.Builder, rows [][2]string) {
	writeTableWidth(b, rows, tableWidth(rows))
}

// helpColumns is the width help text is wrapped to.
const helpColumns = 80

// writeTableWidth writes two-column rows, the first column width wide and
// the second wrapped to helpColumns.
func writeTableWidth(b *strings.Builder, rows [][2]string, width int) {
	indent := 2 + width + 2
	for _, r := range rows {
		fmt.Fprintf(b, "  %-*s  ", width, r[0])
		for i, line := range wrap(r[1], max(helpColumns-indent, 30)) {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", indent))
			}
			b.WriteString(line + "\n")
		}
	}
}

// wrap splits text into lines of at most width bytes, breaking at spaces
// (a longer word gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
