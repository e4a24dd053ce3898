package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
)

// scaleReport is everything the scale run's markdown shows. A figure not
// measured (the run failed before it) is its zero value.
type scaleReport struct {
	cfg          scaleConfig
	started      time.Time
	nproc        int
	loadStart    string
	loadEnd      string
	man          *corpus.Manifest
	indexctlFrom string
	versions     []string
	csMissing    string // why codesearch was skipped, "" if it ran
	indexctl     string // the binary run
	daemonPIDs   []int  // the daemons the run started, all stopped at its end
	corpus       corpusStats
	cindex       cindexStats

	build           phase
	buildCPU        time.Duration // the daemon's user+sys CPU once the build is done
	buildHWM        int64         // KiB, the daemon's VmHWM once the build is done
	rssAnonBuilt    int64         // KiB, right after the build
	rssAnonReopened int64         // KiB, after the last restart
	rssAnonQueried  int64         // KiB, after the queries, writes and burst (before the restarts)
	rssAnonTwo      int64         // KiB, both trees open after a restart
	statusBuilt     string        // the root's status object after the build, JSON
	statusReopened  string        // and after the last restart
	indexBytes      int64         // status index_bytes
	stateBytes      int64         // the state directory, the log excluded
	restarts        []phase
	results         []result
	visible         visibleStats
	churn           churnStats
}

// phase is one `indexctl index --wait`.
type phase struct {
	wall    time.Duration
	readyMS int64 // the daemon's own ready_ms
	files   int
	rebuilt bool // a restart that did not reopen the saved index
}

// Row labels of the scale table, in order (the test checks each has a
// value).
const (
	rowBuild       = "build, wall (`index --wait` from nothing)"
	rowBuildCPU    = "build, daemon CPU user+sys"
	rowPeakRSS     = "daemon peak RSS during build (VmHWM)"
	rowAnonBuilt   = "daemon RssAnon once ready, after the build"
	rowAnonReopen  = "daemon RssAnon once ready, after a restart"
	rowDB          = "DB size on disk"
	rowRestart     = "restart → root ready"
	rowVisible     = "one-file write → visible to a synced query"
	rowStreamQuiet = "query stream, quiet: p99 / max"
	rowStreamBurst = "query stream during the churn burst: p99 / max"
	rowStreamMerge = "query stream while status shows a merge: p99 / max"
	rowAnonQueried = "daemon RssAnon after the queries and the burst"
	rowTwoRoots    = "daemon RssAnon, two roots open"
)

// scaleRow is one line of the table.
type scaleRow struct {
	figure, indexd, cs, notes string
}

// rows returns the table's lines.
func (r *scaleReport) rows() []scaleRow {
	na := "not measured"
	cs := func(f func() string) string {
		switch {
		case r.csMissing != "":
			return "skipped"
		case r.cindex.argv == nil:
			return na
		}
		return f()
	}
	var rows []scaleRow
	add := func(figure, indexd, cs, notes string) {
		rows = append(rows, scaleRow{figure, indexd, cs, notes})
	}

	if r.build.wall > 0 {
		add(rowBuild, fmt.Sprintf("%s (daemon: %s)", dur(r.build.wall), dur(msDur(r.build.readyMS))),
			cs(func() string { return dur(r.cindex.elapsed) }),
			fmt.Sprintf("%d files indexed; cindex: one run after the daemon's build", r.build.files))
		add(rowBuildCPU, dur(r.buildCPU), "—",
			fmt.Sprintf("%.2f cores busy on average over the build's wall time (the daemon's CPU since it started)", float64(r.buildCPU)/float64(r.build.wall)))
		add(rowPeakRSS, kib(r.buildHWM), cs(func() string { return kib(r.cindex.maxRSS) }), "cindex: its peak RSS (rusage)")
		add(rowAnonBuilt, kib(r.rssAnonBuilt), "—", "/proc/PID/status RssAnon right after `index --wait` returned")
		add(rowDB, bytesStr(r.indexBytes), cs(func() string { return bytesStr(r.cindex.size) }),
			fmt.Sprintf("status index_bytes; the whole state directory, log excluded: %s", bytesStr(r.stateBytes)))
	} else {
		for _, l := range []string{rowBuild, rowBuildCPU, rowPeakRSS, rowAnonBuilt, rowDB} {
			add(l, na, "—", "")
		}
	}
	if r.rssAnonReopened > 0 {
		add(rowAnonReopen, kib(r.rssAnonReopened), "—", "right after the last restart's `index --wait` returned")
	} else {
		add(rowAnonReopen, na, "—", "")
	}
	if n := len(r.restarts); n > 0 {
		walls := make([]time.Duration, n)
		ready := make([]time.Duration, n)
		rebuilt := 0
		for i, p := range r.restarts {
			walls[i], ready[i] = p.wall, msDur(p.readyMS)
			if p.rebuilt {
				rebuilt++
			}
		}
		note := fmt.Sprintf("median of %d: `indexctl stop`, then `index --wait` starts a daemon that reopens the root", n)
		if rebuilt > 0 {
			note += fmt.Sprintf("; **%d of them rebuilt instead of reopening**", rebuilt)
		}
		add(rowRestart, fmt.Sprintf("%s (daemon: %s)", dur(median(walls)), dur(median(ready))), "—", note)
	} else {
		add(rowRestart, na, "—", "")
	}

	for _, res := range r.results {
		label := queryLabel(res.q)
		ix := res.stats[toolIndexctl]
		val := na
		var notes []string
		switch {
		case ix.err != nil || ix.n == 0:
			val = "failed"
			if ix.err != nil {
				notes = append(notes, mdEscape(ix.err.Error()))
			}
		default:
			val = fmt.Sprintf("%s (%s)", dur(ix.median), msFloat(ix.innerMedianMS))
			notes = append(notes, fmt.Sprintf("%d results", ix.lines))
			if res.q.expect != "" {
				notes[0] += " (manifest: " + res.q.expect + ")"
			}
			if strings.Contains(ix.header, "[Truncated") {
				notes = append(notes, "stopped at its limit")
			}
			if strings.Contains(ix.header, "could not be trusted") || strings.Contains(ix.header, "[Partial") {
				notes = append(notes, "**not answered by the index**: `"+mdEscape(ix.header)+"`")
			}
		}
		c := "—"
		if res.q.kind == kindGrep {
			c = cs(func() string {
				st, ok := res.stats[toolCsearch]
				if !ok || st.err != nil || st.n == 0 {
					return "failed"
				}
				return dur(st.median)
			})
			if st, ok := res.stats[toolCsearch]; ok && st.n > 0 {
				notes = append(notes, fmt.Sprintf("csearch printed %d lines", st.lines))
			}
		}
		add(label, val, c, strings.Join(notes, "; "))
	}

	if v := r.visible; len(v.walls) > 0 {
		note := fmt.Sprintf("median of %d new files, each with a fresh token; through the socket (no process start)", len(v.walls))
		if v.misses > 0 {
			note += fmt.Sprintf("; **%d synced answers did not list the file yet**", v.misses)
		}
		if v.fallback != "" {
			note += "; fallback: " + v.fallback
		}
		add(rowVisible, fmt.Sprintf("%s (%s)", dur(median(v.walls)), msFloat(medianInt(v.tookMS))), "—", note)
	} else {
		add(rowVisible, na, "—", "")
	}
	c := r.churn
	stream := func(label string, ss []rpcSample, empty, note string) {
		if len(ss) == 0 {
			add(label, empty, "—", note)
			return
		}
		walls := make([]time.Duration, len(ss))
		took := make([]time.Duration, len(ss))
		for i, s := range ss {
			walls[i], took[i] = s.wall, msDur(s.tookMS)
		}
		slices.Sort(walls)
		slices.Sort(took)
		add(label, fmt.Sprintf("%s / %s (daemon: %s / %s)", dur(pct(walls, 99)), dur(walls[len(walls)-1]), dur(pct(took, 99)), dur(took[len(took)-1])),
			"—", fmt.Sprintf("%d queries; %s", len(ss), note))
	}
	streamNote := "Grep of the rare literal, `sync: false`, limit 100, one after another through the socket"
	if c.fallback != "" {
		streamNote += "; fallback: " + c.fallback
	}
	stream(rowStreamQuiet, c.quiet, na, streamNote+fmt.Sprintf(", for %s before the burst", r.cfg.churnTail))
	burst := fmt.Sprintf("from the burst's first write until %s after a synced query saw its last: %d files rewritten in %s, caught up %s after the last write",
		r.cfg.churnTail, c.files, dur(c.writeTime), dur(c.catchUp))
	stream(rowStreamBurst, c.burst, na, burst)
	switch {
	case c.mergeSeen:
		stream(rowStreamMerge, c.duringMerge, "no query overlapped", "status fields: `"+strings.Join(c.mergeFields, " ")+"`")
	case len(c.mergeFields) > 0:
		add(rowStreamMerge, "no merge seen", "—", "status showed `"+strings.Join(c.mergeFields, " ")+"` but never an active merge; see the burst row")
	case len(c.burst) > 0:
		add(rowStreamMerge, "not exposed", "—", "status shows no merge or compaction state; the burst row is the stream during the churn, merge or not")
	default:
		add(rowStreamMerge, na, "—", "")
	}
	if r.rssAnonQueried > 0 {
		add(rowAnonQueried, kib(r.rssAnonQueried), "—", "the daemon that built the index, after the timed queries, the writes, the burst and its query streams: what it keeps once its collector has run at its pace")
	} else {
		add(rowAnonQueried, na, "—", "")
	}
	if r.cfg.tree2 != "" {
		if r.rssAnonTwo > 0 {
			add(rowTwoRoots, kib(r.rssAnonTwo), "—", "after a restart reopening both `-tree` and `-tree2`")
		} else {
			add(rowTwoRoots, na, "—", "")
		}
	}
	return rows
}

// write prints the report as markdown.
func (r *scaleReport) write(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	goVersion := strings.TrimSpace(version("go", "version"))
	p("## Scale run: `%s`\n\n", r.cfg.tree)
	p("- %s, %s/%s, nproc %d, kernel %s, host %s, %s\n", r.started.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, r.nproc, strings.TrimSpace(string(kernel)), host, goVersion)
	p("- load average (1, 5, 15 min) before %s, after %s\n", r.loadStart, dash(r.loadEnd))
	c := r.corpus
	p("- tree: %d files, %d dirs, %s, hidden and ignored included; read once in %v to warm the page cache\n", c.files, c.dirs, bytesStr(c.bytes), c.elapsed.Round(time.Millisecond))
	if m := r.man; m != nil {
		p("- generated by bench/gentree: seed %d, %d files, %d bytes\n", m.Seed, m.Files, m.Bytes)
	}
	if r.cfg.tree2 != "" {
		p("- second tree: `%s`\n", r.cfg.tree2)
	}
	p("- %d timed runs per query after %d warm-up runs, indexctl and csearch interleaved; %d restarts; %d one-file writes; a burst of %d rewrites\n",
		r.cfg.runs, r.cfg.warmup, r.cfg.restarts, r.cfg.writes, r.cfg.churn)
	for _, v := range r.versions {
		p("- %s\n", v)
	}
	if r.csMissing != "" {
		p("- **codesearch skipped**: %s\n", r.csMissing)
	}
	p("\n| figure | indexd | cindex / csearch | notes |\n|---|---:|---:|---|\n")
	for _, row := range r.rows() {
		p("| %s | %s | %s | %s |\n", row.figure, row.indexd, row.cs, row.notes)
	}
	p("\nQueries are whole processes (`indexctl grep`/`glob` against the daemon, `csearch` against its index), medians over the timed runs; in parentheses the daemon's own time (`stats.time_ms`, \"Took\", whole milliseconds), median. ")
	p("Stream figures are p99 / max of the round trip through the socket, the daemon's own time in parentheses. Memory is MiB (1 MiB = 1024 KiB); sizes are bytes of the files.\n\n")
	if r.statusBuilt != "" || r.statusReopened != "" {
		p("### The root's status\n\nWhat `indexctl status --json` says of the root (fields the daemon adds appear here as they come):\n\n")
		p("- after the build: `%s`\n- after the last restart: `%s`\n\n", dash(r.statusBuilt), dash(r.statusReopened))
	}
	p("### Commands\n\n")
	p("The daemon is private to this run: `XDG_STATE_HOME`, `XDG_RUNTIME_DIR` and `INDEXD_SOCKET` point into a temporary directory, and it is stopped at the end.\n\n")
	for _, res := range r.results {
		p("- %s\n", queryLabel(res.q))
		for _, t := range []string{toolIndexctl, toolCsearch} {
			if a, ok := res.argv[t]; ok {
				p("  - %s: `%s`\n", t, shellQuote(a))
			}
		}
	}
	if r.cindex.argv != nil {
		p("- cindex: `CSEARCHINDEX=%s %s` (cindex skips names starting with `.`, files with a line over 2,000 bytes, invalid UTF-8 or over 20,000 distinct trigrams; it indexes node_modules and build/)\n", r.cindex.file, shellQuote(r.cindex.argv))
	}
}

// queryLabel is a query's row label.
func queryLabel(q query) string {
	l := mdCode(q)
	l = strings.Replace(l, "grep", "Grep", 1)
	l = strings.Replace(l, "glob", "Glob", 1)
	if q.limit > 0 {
		l += fmt.Sprintf(" limit %d", q.limit)
	}
	return l
}

func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// dur renders a duration in ms below 1 s, else in s.
func dur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func msFloat(ms float64) string {
	if ms < 0 {
		return "?"
	}
	return fmt.Sprintf("%g ms", ms)
}

func kib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/1024) }

func bytesStr(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// median returns the median of d (sorting a copy).
func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return medianDur(d)
}

// medianInt returns the median of ms, -1 if empty.
func medianInt(ms []int64) float64 {
	if len(ms) == 0 {
		return -1
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return float64(s[m-1]+s[m]) / 2
}

// pct returns the nearest-rank p-th percentile of sorted d.
func pct(d []time.Duration, p int) time.Duration {
	i := (len(d)*p+99)/100 - 1
	return d[max(i, 0)]
}
