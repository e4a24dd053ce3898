package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseQueries(t *testing.T) {
	in := "# class\tpattern\tcase\tlimit\n\n" +
		"rare literal\txyzzy\t1\t1000\r\n" +
		"phrase with a tab-free space\tfunc main\t0\t50\n" +
		"  regex  \tkmalloc\\(\\w+, GFP_\\w+\\)\t1\t1\n"
	qs, err := parseQueries(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []query{
		{name: "rare literal", kind: kindGrep, pattern: "xyzzy", caseSensitive: true, limit: 1000},
		{name: "phrase with a tab-free space", kind: kindGrep, pattern: "func main", limit: 50},
		{name: "regex", kind: kindGrep, pattern: `kmalloc\(\w+, GFP_\w+\)`, caseSensitive: true, limit: 1},
	}
	if !slices.Equal(qs, want) {
		t.Fatalf("got %+v\nwant %+v", qs, want)
	}

	for _, bad := range []string{
		"",                           // no queries
		"# only a comment\n",         // no queries
		"a\tb\t1\n",                  // three fields
		"a\tb\t1\t10\textra\n",       // five
		"a\tb\tyes\t10\n",            // case not 0/1
		"a\tb\t1\t0\n",               // limit below 1
		"a\tb\t1\t1001\n",            // above the maximum
		"a\tb\t1\tten\n",             // not a number
		"a\t\t1\t10\n",               // empty pattern
		"ok\tx\t1\t1\n\t\tx\t1\t1\n", // empty class on line 2
	} {
		if qs, err := parseQueries(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error, got %+v", bad, qs)
		}
	}
}

func TestLoadQueries(t *testing.T) {
	tree := t.TempDir()
	for _, name := range []string{"kernel", "goroot"} {
		qs, from, err := loadQueries(name, tree)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(qs) != 6 || !strings.Contains(from, name) {
			t.Errorf("%s: %d queries from %s", name, len(qs), from)
		}
	}
	// Chosen by the tree: the kernel's has Kbuild and MAINTAINERS at its top.
	if qs, _, _ := loadQueries("", tree); qs[0].pattern != "xyzzy" {
		t.Errorf("an ordinary tree got %q first", qs[0].pattern)
	}
	for _, f := range []string{"Kbuild", "MAINTAINERS"} {
		os.WriteFile(filepath.Join(tree, f), nil, 0o644)
	}
	if qs, _, _ := loadQueries("", tree); qs[0].pattern != "dma_fence_chain_find_seqno" {
		t.Errorf("the kernel's tree got %q first", qs[0].pattern)
	}
	// A file.
	f := filepath.Join(t.TempDir(), "q.tsv")
	os.WriteFile(f, []byte("mine\tneedle\t0\t7\n"), 0o644)
	qs, _, err := loadQueries(f, tree)
	if err != nil || len(qs) != 1 || qs[0].limit != 7 {
		t.Errorf("%s: %+v, %v", f, qs, err)
	}
	if _, _, err := loadQueries(filepath.Join(tree, "missing.tsv"), tree); err == nil {
		t.Error("a missing file: no error")
	}
}

func TestZoektQuery(t *testing.T) {
	for _, c := range []struct {
		q    query
		want string
	}{
		{query{pattern: "struct device", caseSensitive: true}, `case:yes content:"struct device"`},
		{query{pattern: "spin_lock_irqsave"}, `case:no content:"spin_lock_irqsave"`},
		// zoekt's quoted strings take a backslash as an escape: doubled,
		// the regexp keeps its own.
		{query{pattern: `kmalloc\(\w+, GFP_\w+\)`, caseSensitive: true}, `case:yes content:"kmalloc\\(\\w+, GFP_\\w+\\)"`},
		{query{pattern: `-say "hi" or file:x`, caseSensitive: true}, `case:yes content:"-say \"hi\" or file:x"`},
	} {
		if got := zoektQuery(c.q); got != c.want {
			t.Errorf("%q: got %s, want %s", c.q.pattern, got, c.want)
		}
	}
	var body struct {
		Q    string
		Opts map[string]int
	}
	if err := json.Unmarshal(zoektRequest(query{pattern: "x", limit: 42}), &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TotalMaxMatchCount", "ShardMaxMatchCount", "MaxDocDisplayCount"} {
		if body.Opts[k] != 42 {
			t.Errorf("%s = %d, want 42", k, body.Opts[k])
		}
	}
}

// testdata/zoekt-search.json is zoekt-webserver's answer to
// {"Q":"case:yes content:\"xyzzy\"","Opts":{... 2 ...}} on GOROOT/src, with
// a third file added that matched on its name only.
func TestDecodeZoekt(t *testing.T) {
	body, err := os.ReadFile("testdata/zoekt-search.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := decodeZoekt(200, body)
	if err != nil {
		t.Fatal(err)
	}
	want := zoektAnswer{lines: 2, files: 2, matchCount: 2, filesConsidered: 2, duration: 160858 * time.Nanosecond}
	if a != want {
		t.Errorf("got %+v, want %+v", a, want)
	}
	if a, err := decodeZoekt(200, []byte(`{"Result":{"Files":null,"MatchCount":0}}`+"\n")); err != nil || a.lines != 0 {
		t.Errorf("no match: %+v, %v", a, err)
	}
	for _, c := range []struct {
		status int
		body   string
	}{
		{400, `{"Error":"query: unterminated quoted string"}`},
		{200, `{"Error":"something"}`},
		{200, `{}`},
		{200, `<html>`},
		{500, ``},
	} {
		if _, err := decodeZoekt(c.status, []byte(c.body)); err == nil {
			t.Errorf("%d %s: no error", c.status, c.body)
		}
	}
}

func TestAnswerFiles(t *testing.T) {
	var e toolEnvelope
	raw := `{"status":"partial","data":{"matches":[
		{"file":"b/x.go","line":3,"text":"a"},{"file":"a.go","line":1,"text":"b"},
		{"file":"b/x.go","line":9,"text":"c"},{"file":"a.go","line":2,"text":"d"}],"truncated":true},
		"stats":{"time_ms":4,"matched_lines":4,"candidates":12,"files_scanned":5}}`
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatal(err)
	}
	got := answerFiles(&e, "/tree")
	if want := []string{"/tree/b/x.go", "/tree/a.go"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if !e.Data.Truncated || e.Stats.Candidates == nil || *e.Stats.Candidates != 12 || e.Stats.FilesScanned != 5 {
		t.Errorf("envelope decoded as %+v", e)
	}
	var none toolEnvelope
	json.Unmarshal([]byte(`{"status":"success","data":{"matches":[]},"stats":{}}`), &none)
	if got := answerFiles(&none, "/tree"); len(got) != 0 {
		t.Errorf("no matches: %q", got)
	}
}

func TestFloorReader(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var want int64
	for i := range 7 {
		p := filepath.Join(dir, string(rune('a'+i)))
		data := strings.Repeat("x", i*100_000) // some over the buffer's 256 KiB
		os.WriteFile(p, []byte(data), 0o644)
		files = append(files, p)
		want += int64(len(data))
	}
	for _, workers := range []int{1, 2, 16} {
		n, err := newFloorReader(workers).read(files)
		if err != nil || n != want {
			t.Errorf("%d workers: %d bytes, %v; want %d", workers, n, err, want)
		}
	}
	if n, err := newFloorReader(2).read(nil); n != 0 || err != nil {
		t.Errorf("no files: %d, %v", n, err)
	}
	if _, err := newFloorReader(2).read(append(files, filepath.Join(dir, "missing"))); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestDaemonsRun runs the daemons harness end to end on a tiny generated
// tree without zoekt and csearch: both are skipped and named, indexd and
// the read floor are timed, and no daemon is left behind.
func TestDaemonsRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds indexctl and runs a daemon: skipped with -short")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	gentree(t, tree, 300, 3)
	qf := filepath.Join(dir, "q.tsv")
	os.WriteFile(qf, []byte("planted\tQuokkaNeedleZeta\t1\t1000\nnone\tQuokkaNeedleZeta.*xyzzy\t1\t10\n"), 0o644)
	cfg := daemonsConfig{tree: tree, runs: 2, warmup: 1, zoektIndex: "none", zoektWebserver: "none", csearch: "none", cindex: "none",
		queries: qf, timeoutMS: 60000, cmdTimeout: 2 * time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := runDaemons(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.zoektMissing == "" || rep.csMissing == "" || len(rep.results) != 2 {
		t.Fatalf("zoekt %q, csearch %q, %d results", rep.zoektMissing, rep.csMissing, len(rep.results))
	}
	planted, none := rep.results[0], rep.results[1]
	if st := planted.stats[colIndexd]; st.n != 2 || st.err != nil || st.lines == 0 || planted.floorFiles == 0 || planted.stats[colFloor].n != 2 {
		t.Errorf("planted: indexd %+v, floor %+v (%d files)", st, planted.stats[colFloor], planted.floorFiles)
	}
	if _, ok := none.stats[colFloor]; ok || none.ix.lines != 0 || none.ix.status != "success" {
		t.Errorf("no match: %+v, floor timed: %v", none.ix, ok)
	}
	var b strings.Builder
	rep.write(&b)
	for _, s := range []string{"**zoekt skipped**", "**csearch skipped**", "| planted | grep `QuokkaNeedleZeta` | 1000 |", "— (no files)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
	// The daemon is gone (or its pid is another program's).
	if rep.daemonPID <= 0 {
		t.Fatal("no daemon pid")
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rep.daemonPID))
		if err != nil || !bytes.Contains(cmdline, []byte("/daemons-")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon pid %d still runs: %q", rep.daemonPID, cmdline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
