package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// indexCmd is "indexctl index": add a root to the daemon, and wait for it.
var indexCmd = &command{
	name:    "index",
	arg:     "[ROOT]",
	summary: "index a root now (with --wait, show progress until it is ready)",
	about: `Have the daemon index ROOT (default: --root, else the workspace root of the
current directory), starting the daemon if none runs. Queries add their
root on their own; this does it ahead of them. With --wait, show the
build's progress (a bar on a terminal, a line every second otherwise, on
stderr) and return once the index is ready, printing a summary; with
--json, print the root's status object instead. An index saved by an
earlier daemon is reopened and checked against the tree, not rebuilt.`,
	exit: "Exit status: 0 indexing (with --wait: ready), 2 error.",
	examples: []string{
		"indexctl index --wait",
		"indexctl index ~/src/linux --wait --json",
	},
	define: func(fs *cliflag.FlagSet) runFunc {
		wait := new(bool)
		fs.BoolVar(wait, "wait", "", false, "wait until the index is ready, showing progress")
		return func(c *cli, g *globals, args []string) (int, error) {
			name, err := rootName(g, args)
			if err != nil {
				return 0, err
			}
			where, err := locate(name)
			if err != nil {
				fmt.Fprintf(c.stderr, "indexctl index: %v\n", err)
				return daemonapi.ExitError, nil
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			return c.index(ctx, g, where.root, *wait), nil
		}
	},
}

func (c *cli) index(ctx context.Context, g *globals, root string, wait bool) int {
	fail := func(err error) int {
		fmt.Fprintf(c.stderr, "indexctl index: %v\n", err)
		return daemonapi.ExitError
	}
	cl, err := c.connect(ctx, g.socketPath())
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	call := func(method string, params any) (json.RawMessage, *rpc.RootStatus, error) {
		var res json.RawMessage
		if err := cl.Call(ctx, method, params, &res); err != nil {
			return nil, nil, err
		}
		var rs rpc.RootStatus
		if err := json.Unmarshal(res, &rs); err != nil {
			return nil, nil, fmt.Errorf("malformed answer: %v", err)
		}
		return res, &rs, nil
	}
	res, rs, err := call(rpc.MethodIndex, rpc.RootParams{Root: root})
	if err != nil {
		return fail(err)
	}
	if wait && rs.State != rpc.StateError {
		// Also when ready: the call with wait passes the sync barrier, so
		// the answer counts the changes made before it.
		type answer struct {
			res json.RawMessage
			rs  *rpc.RootStatus
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, rs, err := call(rpc.MethodIndex, rpc.RootParams{Root: root, Wait: true})
			done <- answer{res, rs, err}
		}()
		bar := newProgress(c.stderr)
		t := time.NewTicker(bar.every)
		defer t.Stop()
	loop:
		for {
			select {
			case a := <-done:
				bar.end()
				if a.err != nil {
					return fail(a.err)
				}
				res, rs = a.res, a.rs
				break loop
			case <-ctx.Done():
				bar.end()
				return fail(fmt.Errorf("%v (the daemon goes on indexing %s)", ctx.Err(), root))
			case <-t.C:
				var sres json.RawMessage
				if err := cl.Call(ctx, rpc.MethodStatus, rpc.RootParams{Root: root}, &sres); err != nil {
					continue // the wait's answer says what went wrong
				}
				var st rpc.Status
				if json.Unmarshal(sres, &st) == nil && len(st.Roots) == 1 {
					bar.show(&st.Roots[0])
				}
			}
		}
	}
	if g.json {
		fmt.Fprintf(c.stdout, "%s\n", res)
	} else {
		fmt.Fprintln(c.stdout, summary(rs))
	}
	if rs.State == rpc.StateError {
		return daemonapi.ExitError
	}
	return daemonapi.ExitFound
}

// summary describes a root's state after index.
func summary(rs *rpc.RootStatus) string {
	switch rs.State {
	case rpc.StateReady:
		how := "built"
		if rs.Reopened {
			how = "reopened"
		}
		// The index's size is the DB and the base file beside it, as
		// status gives it.
		return fmt.Sprintf("%s: ready, %s, index %s (%s in %s)", rs.Root, plural(rs.Files, "file"), formatBytes(rs.IndexBytes+rs.BaseBytes), how,
			(time.Duration(rs.ReadyMS) * time.Millisecond).Round(time.Millisecond))
	case rpc.StateError:
		return fmt.Sprintf("%s: indexing failed: %s", rs.Root, rs.LastError)
	case rpc.StateUnwatched:
		return fmt.Sprintf("%s: %s", rs.Root, unwatchedText)
	}
	return fmt.Sprintf("%s: %s (queries walk the tree until the index is ready)", rs.Root, rs.State+": "+progressText(rs))
}

// progress shows a build's advance on w: a bar redrawn in place on a
// terminal, else a line whenever the text changes (at most one a second).
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  string // the last text shown
	// shown is when the last line was written (not on a terminal), now
	// the clock: a line follows the last by a second at least, however
	// the ticks bunch up behind a slow status call.
	shown time.Time
	now   func() time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: time.Second, now: time.Now}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.every = true, 100*time.Millisecond
	}
	return p
}

// barWidth is the number of cells of the bar.
const barWidth = 30

func (p *progress) show(r *rpc.RootStatus) {
	text := progressText(r)
	if !p.tty {
		now := p.now()
		if text != p.last && (p.shown.IsZero() || now.Sub(p.shown) >= time.Second) {
			fmt.Fprintf(p.w, "indexing %s: %s\n", r.Root, text)
			p.last, p.shown = text, now
		}
		return
	}
	bar := strings.Repeat(" ", barWidth)
	if r.Phase == rpc.PhaseBuild && r.Progress != nil && r.Progress.TotalFiles > 0 {
		n := percent(r.Progress) * barWidth / 100
		bar = strings.Repeat("#", n) + strings.Repeat(".", barWidth-n)
	}
	// \r returns to the start of the line, \x1b[K clears what a longer
	// previous text left.
	fmt.Fprintf(p.w, "\r[%s] %s\x1b[K", bar, text)
	p.last = text
}

// end finishes the display: the bar's line is cleared.
func (p *progress) end() {
	if p.tty && p.last != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
