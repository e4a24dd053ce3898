package index

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/testtree"
)

// The phases a crash child goes through, each announced on its standard
// output as "begin PHASE" before it starts and "end PHASE" after.
var crashPhases = []string{"open", "update", "compact", "save"}

// kill -9 at random points inside each phase of the index's life: the
// open (with a build and save when there is no DB, else the revalidation
// by stat), an update (Apply of rewritten files), a compaction and a
// save. The child announces each phase; the parent kills it on reading
// the announcement of the chosen one and then checks, from the child's
// remaining output, that the kill landed before the phase ended. After
// each kill the DB is reopened and must describe the tree as it is: the
// table equal to a fresh build's, and every file holding a token among
// its candidates. INDEXD_CRASH_TRIALS sets the number of trials (default
// 60; 15 under -race).
func TestCrashAtEveryPhase(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	trials := 60
	if testtree.RaceEnabled {
		trials = 15 // CI runs the 60 without -race
	}
	if s := os.Getenv("INDEXD_CRASH_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
	}
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = strings.Repeat(fmt.Sprintf("word%d other%d ", i, i*7), 40) + "\n"
	}
	root := writeTree(t, files)
	db := filepath.Join(t.TempDir(), "ix.db")
	r := rand.New(rand.NewPCG(1, 2))
	inside := map[string]int{}
	for trial := range trials {
		phase := crashPhases[r.IntN(len(crashPhases))]
		nth := 1 + r.IntN(2)
		if r.IntN(4) == 0 {
			os.Remove(db) // the open builds and saves
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "INDEX_CRASH_CHILD=1", "INDEX_CRASH_ROOT="+root, "INDEX_CRASH_DB="+db,
			"INDEX_CRASH_SEED="+strconv.Itoa(trial))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		seen, killed := 0, false
		var after []string
		for sc.Scan() {
			line := sc.Text()
			if killed {
				after = append(after, line)
				continue
			}
			if line == "begin "+phase {
				if seen++; seen == nth {
					if err := cmd.Process.Kill(); err != nil {
						t.Fatalf("trial %d: kill: %v", trial, err)
					}
					killed = true
				}
			}
		}
		werr := cmd.Wait()
		if !killed {
			t.Fatalf("trial %d: the child ended before %s #%d: %v", trial, phase, nth, werr)
		}
		if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			t.Fatalf("trial %d: the child was not killed by the signal: %v", trial, werr)
		}
		if !slices.Contains(after, "end "+phase) {
			inside[phase]++
		}
		ix, _, err := OpenOrBuild(context.Background(), db, root, nil)
		if err != nil {
			t.Fatalf("trial %d (killed in %s): reopen: %v", trial, phase, err)
		}
		checkIndex(t, ix)
		// Only the DB and the base it names are left: no orphan base, run
		// or temporary file from the killed child.
		if names := testtree.Names(t, filepath.Dir(db)); len(names) != 2 || names[0] != "ix.db" || !strings.HasPrefix(names[1], "ix.db.base-") {
			t.Fatalf("trial %d (killed in %s): the DB's directory holds %q", trial, phase, names)
		}
		fresh := mustBuild(t, root)
		if got, want := paths(ix), paths(fresh); !slices.Equal(got, want) {
			t.Fatalf("trial %d (killed in %s): table %d paths, fresh build %d", trial, phase, len(got), len(want))
		}
		for _, word := range []string{"word7 ", "tok" + strconv.Itoa(trial) + "x", "tok" + strconv.Itoa(trial-1) + "x"} {
			want := candidates(t, fresh, word)
			got := candidates(t, ix, word)
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Fatalf("trial %d (killed in %s): %s holds %q but is not a candidate", trial, phase, f, word)
				}
			}
		}
		ix.Close()
	}
	t.Logf("kills inside the phase: %v (of %d trials)", inside, trials)
	for _, p := range crashPhases {
		if inside[p] == 0 {
			t.Errorf("no kill landed inside %s: the test did not exercise it", p)
		}
	}
}

// crashChild is the child of TestCrashAtEveryPhase: it opens the index
// (building it, with a small budget, in spilled runs), rewrites a few
// files, applies them, compacts and saves, forever, announcing each
// phase.
func crashChild() {
	root, db := os.Getenv("INDEX_CRASH_ROOT"), os.Getenv("INDEX_CRASH_DB")
	k := defaultKnobs()
	k.buildBudget = 16 << 10 // builds spill several runs: a kill lands among them too
	seed, _ := strconv.Atoi(os.Getenv("INDEX_CRASH_SEED"))
	w := bufio.NewWriter(os.Stdout)
	say := func(s string) { w.WriteString(s + "\n"); w.Flush() }
	for i := 0; ; i++ {
		say("begin open")
		ix, _, err := OpenOrBuild(context.Background(), db, root, &OpenOptions{knobs: &k})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		say("end open")
		var changed []string
		for j := range 20 {
			rel := fmt.Sprintf("d%d/f%d.txt", j%10, (i*20+j*7+seed)%300)
			body := strings.Repeat(fmt.Sprintf("tok%dx word%d ", seed, j), 30+i%7) + "\n"
			if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			changed = append(changed, rel)
		}
		say("begin update")
		if err := ix.Apply(context.Background(), changed); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		say("end update")
		say("begin compact")
		if err := ix.Compact(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		say("end compact")
		say("begin save")
		if err := ix.Save(db); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		say("end save")
		ix.Close()
	}
}
