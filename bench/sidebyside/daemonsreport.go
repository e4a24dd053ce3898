package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// write prints the daemons run's report as markdown.
func (r *daemonsReport) write(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	p("## Daemons side by side: `%s`\n\n", r.cfg.tree)
	p("- %s, %s/%s, %d cores (nproc %d, GOMAXPROCS %d), kernel %s, host %s, %s\n", r.started.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), nproc(), runtime.GOMAXPROCS(0), strings.TrimSpace(string(kernel)), host, strings.TrimSpace(version("go", "version")))
	p("- load average (1, 5, 15 min) before %s, after %s\n", r.loadStart, dash(r.loadEnd))
	c := r.corpus
	p("- tree: %d files, %d dirs, %s, hidden and ignored included; read once in %v to warm the page cache\n", c.files, c.dirs, bytesStr(c.bytes), c.elapsed.Round(time.Millisecond))
	p("- queries: %s; %d timed rounds after %d warm-up rounds, each round every column once, the order reversed every other round\n", r.querySet, r.cfg.runs, r.cfg.warmup)
	for _, v := range r.versions {
		p("- %s\n", v)
	}
	if r.zoektMissing != "" {
		p("- **zoekt skipped**: %s\n", mdEscape(r.zoektMissing))
	}
	if r.csMissing != "" {
		p("- **csearch skipped**: %s\n", mdEscape(r.csMissing))
	}

	p("\n### Indexes\n\n| engine | build, wall | index bytes | notes |\n|---|---:|---:|---|\n")
	if r.indexd.wall > 0 {
		p("| indexd | %s (daemon: %s) | %s | %d files indexed; DB (status `index_bytes`) %s; the state directory, log excluded (DB and base files) %s |\n",
			dur(r.indexd.wall), dur(msDur(r.indexd.readyMS)), bytesStr(r.stateBytes), r.indexd.files, bytesStr(r.indexBytes), bytesStr(r.stateBytes))
	} else {
		p("| indexd | not measured | — | |\n")
	}
	switch z := r.zoekt; {
	case r.zoektMissing != "" && z.shards == 0:
		p("| zoekt | skipped | — | |\n")
	case z.argv == nil:
		p("| zoekt | not built in this run | %s | %s of the existing index `%s` (-zoekt-index-dir) |\n", bytesStr(z.bytes), shards(z.shards), z.dir)
	default:
		p("| zoekt | %s | %s | %s (`*.zoekt`) |\n", dur(z.elapsed), bytesStr(z.bytes), shards(z.shards))
	}
	if ci := r.cindex; ci.argv != nil && ci.err == nil {
		p("| codesearch | %s | %s | peak RSS %s |\n", dur(ci.elapsed), bytesStr(ci.size), kib(ci.maxRSS))
	}

	cell := func(res daemonResult, col string) string {
		st, ok := res.stats[col]
		switch {
		case !ok && col == colFloor && res.stats[colIndexd].n > 0:
			return "— (no files)"
		case !ok:
			return "—"
		case st.n == 0 || st.err != nil:
			return "failed"
		}
		return ms(st.median)
	}
	rt := func(res daemonResult, col string) string {
		a, b := res.stats[colIndexd], res.stats[col]
		if a.n == 0 || a.err != nil || b.n == 0 || b.err != nil {
			return "—"
		}
		return ratio(a.median, b.median)
	}
	p("\n### Medians (ms)\n\n| class | query | limit | indexd | zoekt | indexd / zoekt | read floor | indexd / floor | csearch |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, res := range r.results {
		p("| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", mdEscape(res.q.name), mdCode(res.q), res.q.limit,
			cell(res, colIndexd), cell(res, colZoekt), rt(res, colZoekt), cell(res, colFloor), rt(res, colFloor), cell(res, colCsearch))
	}
	p("\nindexd: one Grep through one Unix-socket connection (package rpc), the round trip; zoekt: one POST to `/api/search` over one keep-alive HTTP connection, until the last byte of the body; read floor: open, read whole and close the files indexd's answer came from, %d workers in this process; csearch: a process per query (start-up included, every match printed). Ratios below 1× mean indexd is faster.\n", runtime.GOMAXPROCS(0))

	p("\n### Answers\n\n| query | indexd lines | indexd answer | zoekt lines (files) | zoekt answer | floor files (bytes) | csearch lines |\n|---|---:|---|---:|---|---:|---:|\n")
	for _, res := range r.results {
		ix := "—"
		if st := res.stats[colIndexd]; st.n > 0 {
			a := res.ix
			parts := []string{"status " + a.status}
			if a.truncated {
				parts = append(parts, "truncated")
			}
			cand := "—"
			if a.candidates != nil {
				cand = fmt.Sprint(*a.candidates)
			}
			parts = append(parts, "candidates "+cand, fmt.Sprintf("files_scanned %d", a.filesScanned), fmt.Sprintf("matched_lines %d", a.matchedLines),
				"daemon median "+msFloat(st.innerMedianMS))
			if a.fallback != "" {
				parts = append(parts, "**fallback: "+a.fallback+"**")
			}
			ix = strings.Join(parts, "; ")
		}
		counts := func(col string, f func(stats) string) string {
			st, ok := res.stats[col]
			switch {
			case !ok:
				return "—"
			case st.n == 0:
				if st.err != nil {
					return "failed: " + mdEscape(st.err.Error())
				}
				return "—"
			}
			s := f(st)
			if st.linesVary {
				s += " (varied)"
			}
			if st.err != nil {
				s += " (then failed: " + mdEscape(st.err.Error()) + ")"
			}
			return s
		}
		zk := "—"
		if st := res.stats[colZoekt]; st.n > 0 {
			zk = fmt.Sprintf("MatchCount %d; FilesConsidered %d; its own median %s", res.zk.matchCount, res.zk.filesConsidered, msFloat(st.innerMedianMS))
		}
		floor := fmt.Sprintf("%d (%s)", res.floorFiles, bytesStr(res.floorBytes))
		if res.floorFiles == 0 {
			floor = "0"
		}
		p("| %s | %s | %s | %s | %s | %s | %s |\n", mdCode(res.q),
			counts(colIndexd, func(st stats) string { return fmt.Sprint(st.lines) }), ix,
			counts(colZoekt, func(stats) string { return fmt.Sprintf("%d (%d)", res.zk.lines, res.zk.files) }), zk,
			floor, counts(colCsearch, func(st stats) string { return fmt.Sprint(st.lines) }))
	}
	p("\nLines are matching lines returned, of the last timed run. Both daemons stop at the limit (indexd after `limit` lines, newest files first; zoekt after `limit` matches per shard and in all, at most `limit` files, ranked), so above the limit they return different lines; below it they should agree, up to what each indexes (notes). zoekt's limits are soft: `ShardMaxMatchCount` holds per shard and the total is checked as shards finish, so on an index of several shards it can return several times `limit` lines, a different number from run to run (*varied*), and has done that much more work. csearch prints every match.\n")

	p("\n### Commands\n\n")
	p("- indexd: a private daemon (`XDG_STATE_HOME`, `XDG_RUNTIME_DIR`, `INDEXD_SOCKET` in a temporary directory), built by `indexctl index --wait %s`, stopped at the end\n", r.cfg.tree)
	if z := r.zoekt; z.argv != nil {
		p("- zoekt index: `%s`\n", shellQuote(z.argv))
	}
	if r.zoektServe != nil {
		p("- zoekt server: `%s`, stopped at the end\n", shellQuote(r.zoektServe))
	}
	if ci := r.cindex; ci.argv != nil {
		p("- cindex: `CSEARCHINDEX=%s %s`\n", ci.file, shellQuote(ci.argv))
	}
	for _, res := range r.results {
		p("- %s\n  - indexd Grep args: `%s`\n", mdCode(res.q), res.indexdArgs)
		if res.zoektBody != "" {
			p("  - zoekt: `%s`\n", res.zoektBody)
		}
		if res.csArgv != nil {
			p("  - csearch: `%s`\n", shellQuote(res.csArgv))
		}
	}
	p("\n### Notes\n\n")
	p("- What each indexes: indexd skips hidden names, the default-ignored directories (%s) and, in a git repository, what .gitignore ignores; zoekt-index skips only .git, .hg and .svn (hidden and gitignored files are in its index) and leaves out files over its size limit (2 MiB by default) and binary ones; cindex skips names starting with `.`, and files with a line over 2,000 bytes, invalid UTF-8 or over 20,000 distinct trigrams.\n", strings.Join(excluded(), " "))
	p("- zoekt's query is the pattern as one quoted `content:` term (a regexp in zoekt's language, contents only, so file names do not match), with `case:yes` or `case:no`; line matches on a file name, if any, are not counted.\n")
	p("- The read floor is what reading the answer's files costs with no index at all: a lower bound for any engine that checks its candidates in those files, not for one that answers from the index alone.\n")
	p("- Warm page cache (the tree was read first). On a small shared machine, compare medians and rerun before trusting a difference under ~10%%.\n")
}

func shards(n int) string {
	if n == 1 {
		return "1 shard"
	}
	return fmt.Sprintf("%d shards", n)
}
