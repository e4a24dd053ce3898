package tree

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
)

// walkAll walks root with opts and returns the reported files and the
// hidden directories announced, in walk order.
func walkAll(t *testing.T, root string, opts Options) (files, hiddenDirs []string, st Stats, err error) {
	t.Helper()
	opts.OnHiddenDir = func(rel string) { hiddenDirs = append(hiddenDirs, rel) }
	st, err = Walk(context.Background(), root, "", ignore.Open(root), opts, func(e Entry) error {
		files = append(files, e.Rel)
		return nil
	})
	return files, hiddenDirs, st, err
}

// OnHiddenDir names every hidden directory the walk enters, empty ones
// included, in walk order; never one it skips (hidden and not let
// through, or inside an ignored directory).
func TestWalkOnHiddenDir(t *testing.T) {
	t.Parallel()
	root := testtree.Write(t, map[string]string{
		".ignore":              "out/\n",
		".a/x.txt":             "x\n",
		".a/.b/y.txt":          "y\n",
		"src/.conf/z.txt":      "z\n",
		"out/.hidden/w.txt":    "in an ignored directory\n",
		"visible/v.txt":        "v\n",
		"visible/.dotfile.txt": "a hidden file, not a directory\n",
	})
	for _, d := range []string{".empty", "src/.conf/.deeper"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, got, _, err := walkAll(t, root, Options{IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".a", ".a/.b", ".empty", "src/.conf", "src/.conf/.deeper"}
	if !slices.Equal(got, want) {
		t.Errorf("IncludeHidden: hidden dirs %q, want %q", got, want)
	}
	// Without IncludeHidden only the directories a pattern lets through
	// are entered, and so announced; the rest are skips.
	files, got, st, err := walkAll(t, root, Options{AllowHidden: func(name string) bool { return name == ".a" }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".a"}; !slices.Equal(got, want) {
		t.Errorf("AllowHidden(.a): hidden dirs %q, want %q", got, want)
	}
	if want := []string{".a/x.txt", "visible/v.txt"}; !slices.Equal(files, want) {
		t.Errorf("AllowHidden(.a): files %q, want %q", files, want)
	}
	var skipped []string
	for _, s := range st.Skipped {
		if s.Hidden {
			skipped = append(skipped, s.Rel)
		}
	}
	if want := []string{".a/.b", ".empty", ".ignore", "src/.conf", "visible/.dotfile.txt"}; !slices.Equal(skipped, want) {
		t.Errorf("AllowHidden(.a): hidden skips %q, want %q", skipped, want)
	}
}

// OnDir is called once for every directory the walk enters (the start
// included; never an ignored, reserved or skipped hidden one), each
// before its subdirectories, and before the directory is listed: a file
// OnDir makes in the directory it is given is in the walk's output.
func TestWalkOnDir(t *testing.T) {
	t.Parallel()
	root := testtree.Write(t, map[string]string{
		".ignore":         "out/\n",
		"a/x.txt":         "x\n",
		"a/b/y.txt":       "y\n",
		"a/b/c/z.txt":     "z\n",
		".h/w.txt":        "w\n",
		"out/o.txt":       "ignored\n",
		"d/e/f/g/deep.go": "deep\n",
	})
	var mu sync.Mutex
	var dirs []string
	made := "" // the file OnDir makes: a new name per walk
	onDir := func(rel string, dir *os.File) {
		mu.Lock()
		defer mu.Unlock()
		if parent := path.Dir(rel); rel != "" && !slices.Contains(dirs, strings.TrimPrefix(parent, ".")) {
			t.Errorf("OnDir(%q) before its parent's", rel)
		}
		dirs = append(dirs, rel)
		fd, err := unix.Openat(int(dir.Fd()), made, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		unix.Close(fd)
	}
	for _, hidden := range []bool{true, false} {
		dirs, made = nil, "made-by-ondir-"+strconv.FormatBool(hidden)+".txt"
		files, _, _, err := walkAll(t, root, Options{IncludeHidden: hidden, OnDir: onDir, Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(dirs)
		want := []string{"", "a", "a/b", "a/b/c", "d", "d/e", "d/e/f", "d/e/f/g"}
		if hidden {
			want = []string{"", ".h", "a", "a/b", "a/b/c", "d", "d/e", "d/e/f", "d/e/f/g"}
		}
		if !slices.Equal(dirs, want) {
			t.Errorf("hidden %v: OnDir called for %q, want %q", hidden, dirs, want)
		}
		for _, d := range want {
			if f := path.Join(d, made); !slices.Contains(files, f) {
				t.Errorf("hidden %v: %s, made by OnDir before the listing, was not listed: %q", hidden, f, files)
			}
		}
	}
}

// An eager walk (readers queue subdirectories as they list them) hands
// out exactly what a lazy one does, in the same order, with the same
// stats and skips; cut short by the callback or MaxVisited it ends as a
// lazy one does, its readers stopped. So does one whose readers reach
// eagerAhead and leave some directories' subdirectories to the caller.
func TestWalkEagerSameAnswers(t *testing.T) {
	t.Parallel()
	for _, ahead := range []int64{eagerAhead, 8} {
		t.Run(fmt.Sprintf("ahead %d", ahead), func(t *testing.T) {
			t.Parallel()
			testWalkEagerSameAnswers(t, ahead)
		})
	}
}

func testWalkEagerSameAnswers(t *testing.T, ahead int64) {
	files := map[string]string{".ignore": "*.log\nskip/\n"}
	for i := range 400 {
		d := fmt.Sprintf("d%d/e%d", i%7, i%11)
		if i%3 == 0 {
			d += fmt.Sprintf("/f%d", i%5)
		}
		if i%13 == 0 {
			d = ".h/" + d
		}
		name := fmt.Sprintf("%s/n%03d.txt", d, i)
		if i%17 == 0 {
			name = fmt.Sprintf("%s/n%03d.log", d, i)
		}
		if i%19 == 0 {
			name = fmt.Sprintf("skip/%s/n%03d.txt", d, i)
		}
		files[name] = "x\n"
	}
	root := testtree.Write(t, files)
	walk := func(opts Options, stopAt int) ([]Entry, Stats, error) {
		var out []Entry
		st, err := Walk(context.Background(), root, "", ignore.Open(root), opts, func(e Entry) error {
			out = append(out, e)
			if len(out) == stopAt {
				return ErrStop
			}
			return nil
		})
		return out, st, err
	}
	for _, c := range []struct {
		name   string
		opts   Options
		stopAt int
	}{
		{"whole", Options{IncludeHidden: true, Info: true}, -1},
		{"no hidden", Options{Info: true}, -1},
		{"stopped", Options{IncludeHidden: true}, 50},
		{"limited", Options{IncludeHidden: true, MaxVisited: 120}, -1},
	} {
		for _, workers := range []int{1, 4} {
			c.opts.Workers = workers
			c.opts.maxAhead = ahead
			lazy, lst, lerr := walk(c.opts, c.stopAt)
			c.opts.Eager = true
			eager, est, eerr := walk(c.opts, c.stopAt)
			c.opts.Eager = false
			if !errors.Is(eerr, lerr) && eerr != lerr {
				t.Errorf("%s, %d workers: eager error %v, lazy %v", c.name, workers, eerr, lerr)
			}
			if !slices.Equal(eager, lazy) || len(lazy) == 0 {
				t.Errorf("%s, %d workers: eager walk handed out %d entries, lazy %d, or in another order", c.name, workers, len(eager), len(lazy))
			}
			if est.Visited != lst.Visited || est.Ignored != lst.Ignored || est.Hidden != lst.Hidden || !slices.Equal(est.Skipped, lst.Skipped) {
				t.Errorf("%s, %d workers: eager stats %+v, lazy %+v", c.name, workers, est, lst)
			}
		}
	}
}

// A directory swapped for a symlink to a directory outside the root, over
// and over while walks run, is never entered: no walk reports a name from
// outside, and none fails (a directory replaced mid-walk is counted in
// Stats.Errors, not an error). Lazy and eager walks alike; an eager one
// ends with nothing counted as listed ahead, whatever its readers met.
func TestWalkDirectorySwappedForLink(t *testing.T) {
	t.Parallel()
	outside := testtree.Write(t, map[string]string{"secret.txt": "outside\n", "sub/deeper.txt": "outside\n"})
	root := testtree.Write(t, map[string]string{"d/inside.txt": "in\n", "d/sub/deep.txt": "in\n", "top.txt": "top\n"})
	if err := os.Symlink(outside, filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	stop := testtree.ExchangeLoop(t, filepath.Join(root, "d"), filepath.Join(root, "l"))
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	// The real directory may be walked under either name; the link, under
	// either name, is reported and never entered.
	allowed := map[string]bool{"d/inside.txt": true, "d/sub/deep.txt": true, "l/inside.txt": true, "l/sub/deep.txt": true,
		"top.txt": true, "l": true, "d": true}
	var ahead []int64 // what each walk left counted as listed ahead
	walked := func(n int64) { ahead = append(ahead, n) }
	for i := range 300 {
		files, _, _, err := walkAll(t, root, Options{Workers: 1 + i%4, Eager: i%2 == 1, walked: walked})
		if err != nil {
			t.Fatalf("walk %d: %v", i, err)
		}
		if n := ahead[len(ahead)-1]; n != 0 {
			t.Fatalf("walk %d (eager %v) ended with %d entries counted as listed ahead, want 0: every listing it read was consumed", i, i%2 == 1, n)
		}
		for _, f := range files {
			if !allowed[f] {
				t.Fatalf("walk %d reported %q: a name from outside the root (all: %q)", i, f, files)
			}
		}
	}
	stopped = true
	if n := stop(); n == 0 {
		t.Fatal("the exchange loop never ran")
	}
}

// Out of file descriptors (EMFILE, in a child with RLIMIT_NOFILE
// lowered), a walk, lazy or eager, ends with ErrUnreadable; it never
// answers short as if the tree held less.
func TestWalkOutOfDescriptors(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("TREE_EMFILE_CHILD"); dir != "" {
		emfileChild(dir)
		return
	}
	files := map[string]string{}
	for i := range 40 {
		files["d"+strconv.Itoa(i)+"/sub/f.txt"] = "x\n"
	}
	root := testtree.Write(t, files)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWalkOutOfDescriptors$")
	cmd.Env = append(os.Environ(), "TREE_EMFILE_CHILD="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("child: %q, want a line for the lazy walk and one for the eager", out)
	}
	for i, got := range lines {
		if !strings.HasPrefix(got, "unreadable") {
			t.Errorf("child walk (eager %v) with descriptors exhausted: %q, want an ErrUnreadable failure", i == 1, got)
		}
	}
}

// emfileChild leaves one descriptor free (RLIMIT_NOFILE lowered, every
// other free number taken), walks dir lazily then eagerly and prints for
// each "unreadable", "other error", "short N" or "complete". The root takes the free descriptor, so
// listing the first directory runs out.
func emfileChild(dir string) {
	rules := ignore.Open(dir)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		os.Stdout.WriteString("setup: " + err.Error() + "\n")
		os.Exit(0)
	}
	highest := 0
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > highest {
			highest = n
		}
	}
	if _, err := testtree.LeaveOneDescriptor(uint64(highest + 4)); err != nil {
		os.Stdout.WriteString("setup: " + err.Error() + "\n")
		os.Exit(0)
	}
	for _, eager := range []bool{false, true} { // each walk frees what it took
		n := 0
		_, err = Walk(context.Background(), dir, "", rules, Options{Workers: 8, Eager: eager}, func(Entry) error { n++; return nil })
		switch {
		case errors.Is(err, ErrUnreadable):
			os.Stdout.WriteString("unreadable: " + err.Error() + "\n")
		case err != nil:
			os.Stdout.WriteString("other error: " + err.Error() + "\n")
		case n < 40:
			os.Stdout.WriteString("short " + strconv.Itoa(n) + "\n")
		default:
			os.Stdout.WriteString("complete\n")
		}
	}
	os.Exit(0)
}

// orderByNames is Order read off its definition: name by name, an
// ancestor first.
func orderByNames(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := range min(len(as), len(bs)) {
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

func TestOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	pieces := []string{"a", "b", "/", "-", ".", "a.b", "0", " ", "\xff", "é", "~", "!"}
	gen := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return strings.Trim(strings.ReplaceAll(b.String(), "//", "/"), "/")
	}
	for range 100000 {
		a, b := gen(), gen()
		if a == "" || b == "" {
			continue
		}
		if got, want := Order(a, b), orderByNames(a, b); got != want {
			t.Fatalf("Order(%q, %q) = %d, by names %d", a, b, got, want)
		}
	}
}
