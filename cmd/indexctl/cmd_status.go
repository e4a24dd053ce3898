package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/indexd/indexd/internal/cliflag"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/rpc"
)

// statusCmd is "indexctl status": what the daemon is doing.
var statusCmd = &command{
	name:    "status",
	summary: "show the daemon and the roots it indexes",
	about: `Show whether the daemon runs, and if so its process id, uptime, the
queries it has answered and, for each root it indexes, its state (building,
ready or error), files, index size on disk and queries. With --json, the
daemon's status object as one line of JSON. Status never starts a daemon.`,
	exit: "Exit status: 0 the daemon runs, 1 it does not, 2 error.",
	define: func(fs *cliflag.FlagSet) runFunc {
		return func(c *cli, g *globals, args []string) (int, error) {
			if len(args) > 0 {
				return 0, fmt.Errorf("unexpected argument %q", args[0])
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			socket := g.socketPath()
			cl, ok, err := c.dialRunning(ctx, socket)
			switch {
			case err != nil:
				fmt.Fprintf(c.stderr, "indexctl status: %v\n", err)
				return daemonapi.ExitError, nil
			case !ok:
				out := c.stdout
				if g.json {
					out = c.stderr
				}
				fmt.Fprintf(out, "indexd is not running (%s)\n", socket)
				return daemonapi.ExitNothing, nil
			}
			defer cl.Close()
			var res json.RawMessage
			if err := cl.Call(ctx, rpc.MethodStatus, nil, &res); err != nil {
				fmt.Fprintf(c.stderr, "indexctl status: %v\n", err)
				return daemonapi.ExitError, nil
			}
			if g.json {
				fmt.Fprintf(c.stdout, "%s\n", res)
				return daemonapi.ExitFound, nil
			}
			var st rpc.Status
			if err := json.Unmarshal(res, &st); err != nil {
				fmt.Fprintf(c.stderr, "indexctl status: malformed status: %v\n", err)
				return daemonapi.ExitError, nil
			}
			fmt.Fprint(c.stdout, formatStatus(&st))
			return daemonapi.ExitFound, nil
		}
	},
}

// formatStatus renders the daemon's status for people.
func formatStatus(st *rpc.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "indexd is running: pid %d, up %s, %d queries answered, version %s\n",
		st.PID, (time.Duration(st.UptimeMS) * time.Millisecond).Round(time.Second), st.Queries, st.Version)
	fmt.Fprintf(&b, "socket %s\nstate  %s\nbuild  %s\n", st.Socket, st.StateDir, st.Build)
	if m := st.Memory; m != nil {
		fmt.Fprintf(&b, "memory %s resident, %s heap; answers %s (at most %s) of %s",
			formatBytes(m.RSSBytes), formatBytes(m.HeapBytes), formatBytes(m.AnswerBytes), formatBytes(m.AnswerPeakBytes), formatBytes(m.AnswerBudgetBytes))
		if m.AnswersCut > 0 || m.ClientsDropped > 0 {
			fmt.Fprintf(&b, ", %d cut short, %d clients dropped", m.AnswersCut, m.ClientsDropped)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(st.Roots) == 0 {
		b.WriteString("No roots indexed yet: the first query in a root, or 'indexctl index', adds it.\n")
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tFILES\tINDEX\tHEAP\tMERGE\tQUERIES\tROOT")
	for _, r := range st.Roots {
		merge := fmt.Sprintf("%d changed", r.DeltaFiles)
		if r.DeltaBytes > 0 {
			merge += ", " + formatBytes(r.DeltaBytes)
		}
		if r.Merging {
			merge = "running, " + merge
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\n", r.State, r.Files, formatBytes(r.IndexBytes+r.BaseBytes), formatBytes(r.HeapBytes), merge, r.Queries, r.Root)
	}
	tw.Flush()
	for _, r := range st.Roots {
		switch {
		case r.State == rpc.StateBuilding:
			fmt.Fprintf(&b, "%s: %s\n", r.Root, progressText(&r))
		case r.State == rpc.StateUnwatched:
			fmt.Fprintf(&b, "%s: %s\n", r.Root, unwatchedText)
		case r.LastError != "":
			fmt.Fprintf(&b, "%s: %s\n", r.Root, r.LastError)
		}
	}
	return b.String()
}

// unwatchedText describes a root the daemon keeps no index of.
const unwatchedText = "not indexed: the daemon has no file watcher on this system to keep an index current, so every query walks the tree (fallback no_watcher; docs/platforms.md)"

// progressText describes a build's advance.
func progressText(r *rpc.RootStatus) string {
	p := r.Progress
	switch r.Phase {
	case rpc.PhaseReopen:
		return "reopening the saved index"
	case rpc.PhaseSave:
		return "saving"
	case rpc.PhaseCatchUp:
		return "catching up with changes"
	case rpc.PhaseBuild:
		if p == nil || p.TotalFiles == 0 {
			return "listing files"
		}
		s := fmt.Sprintf("%d%%, %d/%d files, %s/%s", percent(p), p.Files, p.TotalFiles, formatBytes(p.Bytes), formatBytes(p.TotalBytes))
		if p.ETAMS > 0 {
			s += ", eta " + (time.Duration(p.ETAMS) * time.Millisecond).Round(time.Second).String()
		}
		return s
	}
	return "starting"
}

// percent is a build's advance, by bytes read (files when all are empty).
func percent(p *rpc.BuildProgress) int {
	switch {
	case p.TotalBytes > 0:
		return int(100 * p.Bytes / p.TotalBytes)
	case p.TotalFiles > 0:
		return 100 * p.Files / p.TotalFiles
	}
	return 0
}

// plural is "N noun", with an s unless N is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatBytes writes a size in B, KB, MB or GB (powers of 1024).
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KB"
	for _, s := range []string{"MB", "GB", "TB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
