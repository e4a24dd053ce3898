package client

import (
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/testtree"
)

// fakeCheckout writes a module with the two programs devEngine builds:
// cmd/indexd prints the answer of an assembly function (amd64; Go
// elsewhere) and an embedded file; cmd/indexctl prints a word.
func fakeCheckout(t *testing.T) string {
	t.Helper()
	return testtree.Write(t, map[string]string{
		"go.mod":                  "module example.com/fake\n\ngo 1.26\n",
		"cmd/indexd/main.go":      "package main\n\nimport (\n\t_ \"embed\"\n\t\"fmt\"\n\n\t\"example.com/fake/asm\"\n)\n\n//go:embed greeting.txt\nvar greeting string\n\nfunc main() { fmt.Print(asm.Answer(), \" \", greeting) }\n",
		"cmd/indexd/greeting.txt": "hello\n",
		"cmd/indexctl/main.go":    "package main\n\nfunc main() { println(\"client\") }\n",
		"asm/asm.go":              "package asm\n",
		"asm/answer_amd64.go":     "package asm\n\n// Answer is written in assembly.\nfunc Answer() int64\n",
		"asm/answer_amd64.s":      "#include \"textflag.h\"\n\nTEXT ·Answer(SB),NOSPLIT,$0-8\n\tMOVQ $1, ret+0(FP)\n\tRET\n",
		"asm/answer_other.go":     "//go:build !amd64\n\npackage asm\n\nfunc Answer() int64 { return 1 }\n",
	})
}

// makeClient builds the fake checkout's client as go build does, or as
// go run does, and describes its build as thisDevBuild describes the
// running client's.
func makeClient(t *testing.T, dir string, goRun bool) devBuild {
	t.Helper()
	out := filepath.Join(t.TempDir(), "indexctl")
	args := []string{"build", "-o", out, "./cmd/indexctl"}
	if goRun {
		args = []string{"run", "-exec", "cp", "./cmd/indexctl", out} // cp BINARY OUT
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, b)
	}
	bi, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := buildid.HasDWARF(out); got == goRun {
		t.Fatalf("go %v made a client with DWARF %v", args, got)
	}
	b := devBuild{dir: dir, id: buildid.Of(out), goRun: func() bool { return goRun }}
	b.flags, b.env = buildSettings(bi.Settings)
	if b.id == "" {
		t.Fatal("the client has no build ID")
	}
	return b
}

// runEngine returns the output of the fake engine at path.
func runEngine(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).Output()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(out)
}

// engineCall is one call of devEngine: what it returned and noted.
type engineCall struct {
	path, build string
	err         error
	notes       []string
}

func callEngine(b devBuild) engineCall {
	var c engineCall
	c.path, c.build, c.err = devEngine(b, func(s string) { c.notes = append(c.notes, s) })
	return c
}

// A development client's engine is built from its checkout on first use,
// saying so; found at once while nothing changes; built again, saying
// which input changed, after an edit of any file the build reads (an
// assembly file whose size does not change, an embedded file, a file
// added to a package); and shared by a go run of the same sources, which
// is checked to be of its build too.
func TestDevEngineRebuildsOnAnyInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := fakeCheckout(t)
	client := makeClient(t, dir, false)

	first := callEngine(client)
	if first.err != nil {
		t.Fatal(first.err)
	}
	if want := []string{"building the engine from " + dir + " (first use: compiling it may take a minute or so)"}; !slices.Equal(first.notes, want) {
		t.Errorf("first use noted %q, want %q", first.notes, want)
	}
	if want := filepath.Join(engineDir(dir), "indexd"); first.path != want || first.build != buildid.Of(want) || first.build == "" {
		t.Fatalf("the engine %s (build %q), want %s (build %q)", first.path, first.build, want, buildid.Of(want))
	}
	if got := runEngine(t, first.path); got != "1 hello\n" {
		t.Fatalf("the engine says %q", got)
	}
	again := callEngine(client)
	if again.err != nil || len(again.notes) > 0 || again.path != first.path || again.build != first.build {
		t.Fatalf("nothing changed, and the second call gave %+v", again)
	}

	edit := func(name, old, new string) {
		t.Helper()
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), old) {
			t.Fatalf("%s holds no %q", name, old)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prev := first
	for _, tc := range []struct {
		change func()
		input  string // the input the note names
		says   string // what the engine then says
	}{
		{func() { edit("asm/answer_amd64.s", "$1", "$2") }, "asm/answer_amd64.s", "2 hello\n"},
		{func() { edit("cmd/indexd/greeting.txt", "hello", "howdy") }, "cmd/indexd/greeting.txt", "2 howdy\n"},
		{func() {
			if err := os.WriteFile(filepath.Join(dir, "cmd/indexd/more.go"), []byte("package main\n\nfunc init() { greeting = \"new file\\n\" }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "cmd/indexd", "2 new file\n"},
	} {
		if runtime.GOARCH != "amd64" && strings.HasSuffix(tc.input, ".s") {
			continue // the assembly file is built on amd64 alone
		}
		tc.change()
		c := callEngine(client)
		if c.err != nil {
			t.Fatal(c.err)
		}
		if want := []string{"building the engine from " + dir + " again: " + tc.input + " changed"}; !slices.Equal(c.notes, want) {
			t.Errorf("after a change of %s: notes %q, want %q", tc.input, c.notes, want)
		}
		if c.path != first.path || c.build == prev.build || c.build != buildid.Of(c.path) {
			t.Errorf("after a change of %s: engine %s build %q (before: %q)", tc.input, c.path, c.build, prev.build)
		}
		if got := runEngine(t, c.path); got != tc.says {
			t.Errorf("after a change of %s the engine says %q, want %q", tc.input, got, tc.says)
		}
		prev = c
	}

	// A go run of the same sources: another client, checked with go run,
	// of the same engine's build. Both are then answered at once.
	runClient := makeClient(t, dir, true)
	if runClient.id == client.id {
		t.Fatal("go run and go build made the same client")
	}
	c := callEngine(runClient)
	want := []string{"building the engine from " + dir + " for this build of indexctl (the engine there was built with another)"}
	if c.err != nil || !slices.Equal(c.notes, want) || c.build != prev.build {
		t.Fatalf("the go run client: %+v, want notes %q and the build %q", c, want, prev.build)
	}
	for _, b := range []devBuild{client, runClient} {
		if c := callEngine(b); c.err != nil || len(c.notes) > 0 || c.build != prev.build {
			t.Errorf("client %s: %+v, want the engine %q at once", b.id, c, prev.build)
		}
	}
}

// A client its checkout no longer makes (built before its sources
// changed) keeps the engine built with it while that is there; one with
// none left is refused, saying why, and the refusal is remembered until
// an input changes; a client built from the sources as they are now is
// served.
func TestDevEngineStaleClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := fakeCheckout(t)
	old := makeClient(t, dir, false)
	oldRun := makeClient(t, dir, true)
	first := callEngine(old)
	if first.err != nil {
		t.Fatal(first.err)
	}
	if c := callEngine(oldRun); c.err != nil || c.build != first.build {
		t.Fatalf("the go run client: %+v", c)
	}

	// The client's sources change: neither client is what the checkout
	// makes now.
	if err := os.WriteFile(filepath.Join(dir, "cmd/indexctl/main.go"), []byte("package main\n\nfunc main() { println(\"client 2\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := callEngine(old)
	wantNotes := []string{
		"building the engine from " + dir + " again: cmd/indexctl/main.go changed",
		"the engine from " + dir + " stays the one built with this indexctl, which is not what " + dir + " builds now (its sources changed since it was built, or it was built by another go command or in another environment)",
	}
	if c.err != nil || c.build != first.build || !slices.Equal(c.notes, wantNotes) {
		t.Fatalf("the stale client with its engine: %+v, want its engine %q and notes %q", c, first.build, wantNotes)
	}
	if c := callEngine(old); c.err != nil || c.build != first.build || len(c.notes) > 0 {
		t.Fatalf("the stale client again: %+v, want its engine at once", c)
	}
	// The go run client is made no more either; the engine stayed for
	// the first client alone: it has none.
	c = callEngine(oldRun)
	if !errors.Is(c.err, ErrNoOwnEngine) || c.path != "" {
		t.Fatalf("the stale go run client: %+v, want ErrNoOwnEngine", c)
	}
	wantErr := "this indexctl is not what " + dir + " builds now (its sources changed since it was built, or it was built by another go command or in another environment), and no engine built with it is left: build it again (go build ./cmd/indexctl) or use go run ./cmd/indexctl"
	if c.err.Error() != wantErr {
		t.Errorf("refused with %q, want %q", c.err, wantErr)
	}
	if c := callEngine(oldRun); !errors.Is(c.err, ErrNoOwnEngine) || len(c.notes) > 0 {
		t.Fatalf("the stale go run client again: %+v, want the refusal at once, with no build", c)
	}

	// A client of the sources as they are: the engine is the same (only
	// the client changed), and serves both it and the first client.
	current := makeClient(t, dir, false)
	if c := callEngine(current); c.err != nil || c.build != first.build {
		t.Fatalf("the current client: %+v", c)
	}
	for _, b := range []devBuild{current, old} {
		if c := callEngine(b); c.err != nil || len(c.notes) > 0 || c.build != first.build {
			t.Errorf("client %s: %+v, want the engine at once", b.id, c)
		}
	}
	// An edit of the engine: the current client's engine is built again,
	// and the first client's is gone.
	if err := os.WriteFile(filepath.Join(dir, "cmd/indexd/greeting.txt"), []byte("bye\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = callEngine(current)
	if c.err != nil || c.build == first.build || runEngine(t, c.path) != "1 bye\n" {
		t.Fatalf("the current client after an edit of the engine: %+v", c)
	}
	if c := callEngine(old); !errors.Is(c.err, ErrNoOwnEngine) {
		t.Fatalf("the stale client after its engine was replaced: %+v, want ErrNoOwnEngine", c)
	}
}

// The settings a build records become the go command's flags and
// environment, what is not recorded given explicitly.
func TestBuildSettings(t *testing.T) {
	s := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		settings   []debug.BuildSetting
		flags, env []string
	}{
		{
			s("-buildmode", "exe", "-compiler", "gc", "CGO_ENABLED", "1", "CGO_CFLAGS", "", "GOARCH", "amd64", "GOOS", "linux", "GOAMD64", "v1"),
			[]string{"-compiler=gc", "-buildvcs=false", "-race=false", "-msan=false", "-asan=false", "-cover=false", "-trimpath=false", "-tags=", "-gcflags=", "-ldflags=", "-pgo=off"},
			[]string{"CGO_ENABLED=1", "CGO_CFLAGS=", "GOARCH=amd64", "GOOS=linux", "GOAMD64=v1", "GOEXPERIMENT="},
		},
		{
			s("-buildmode", "pie", "-ldflags", "-X main.tag=one", "-race", "true", "-tags", "a,b", "-trimpath", "true", "-pgo", "/src/default.pgo",
				"DefaultGODEBUG", "panicnil=1", "CGO_ENABLED", "0", "GOEXPERIMENT", "greenteagc",
				"vcs", "git", "vcs.revision", "abc", "vcs.modified", "true"),
			[]string{"-buildmode=pie", "-ldflags=-X main.tag=one", "-race=true", "-tags=a,b", "-trimpath=true", "-pgo=/src/default.pgo", "-buildvcs=true",
				"-msan=false", "-asan=false", "-cover=false", "-gcflags="},
			[]string{"CGO_ENABLED=0", "GOEXPERIMENT=greenteagc"},
		},
	} {
		flags, env := buildSettings(tc.settings)
		if !slices.Equal(flags, tc.flags) || !slices.Equal(env, tc.env) {
			t.Errorf("buildSettings(%v) = %q, %q; want %q, %q", tc.settings, flags, env, tc.flags, tc.env)
		}
	}
	for ldflags, want := range map[string]bool{"-w": true, "-s -X a=b": true, "--w=true": true, "-X main.w=1": false, "": false} {
		if got := ldflagsStrip(s("-ldflags", ldflags)); got != want {
			t.Errorf("ldflagsStrip(%q) = %v, want %v", ldflags, got, want)
		}
	}
}

// The checkout this package was compiled from is the module's directory
// (go test builds without -trimpath), not the current directory.
func TestCompiledCheckout(t *testing.T) {
	want, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if got := compiledCheckout(); got != want {
		t.Fatalf("compiledCheckout() = %q, want %q", got, want)
	}
	t.Chdir(t.TempDir())
	if got := compiledCheckout(); got != want {
		t.Fatalf("from another directory, compiledCheckout() = %q, want %q", got, want)
	}
}

// A record is written as its format says, byte for byte, and read back;
// a record cut short, or of another kind, is none.
func TestRecordFormat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stamp")
	r := &record{clients: []string{"c/1", "c/2"}, extra: "e/1", inputs: []input{{"/a/go.mod", "12.34.56.78"}, {"/a/b c\n", "-"}, {"/a/x.s", "?1.2.3.4"}}}
	if err := r.write(p, stampHeader); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "indexd engine stamp 1\nc/1 c/2\ne/1\n12.34.56.78 \"/a/go.mod\"\n- \"/a/b c\\n\"\n?1.2.3.4 \"/a/x.s\"\n"
	if string(data) != want {
		t.Fatalf("written:\n%q\nwant:\n%q", data, want)
	}
	got := readRecord(p, stampHeader)
	if got == nil || !slices.Equal(got.clients, r.clients) || got.extra != r.extra || !slices.Equal(got.inputs, r.inputs) {
		t.Fatalf("read back %+v, want %+v", got, r)
	}
	if readRecord(p, refusedHeader) != nil {
		t.Error("a stamp read as a refusal")
	}
	for _, cut := range []int{len(want) - 1, len(want) - 10, 30} {
		if err := os.WriteFile(p, []byte(want[:cut]), 0o600); err != nil {
			t.Fatal(err)
		}
		if readRecord(p, stampHeader) != nil {
			t.Errorf("a record cut at %d bytes was read", cut)
		}
	}
}

// An input whose modification time falls within the snapshot is racy and
// counts as changed at the next check, though its state is unchanged;
// one modified before it began is not, nor one dated after it ended (a
// clock set ahead).
func TestSnapshotRacy(t *testing.T) {
	dir := testtree.Write(t, map[string]string{"racy": "r", "old": "o", "ahead": "a"})
	// The clock of the snapshot: an hour from now for an hour, after every
	// change time the files can have (setting the modification time sets
	// the change time to now).
	start := time.Now().Add(time.Hour).UnixNano()
	end := start + int64(time.Hour)
	for name, mtime := range map[string]int64{"racy": start + int64(time.Minute), "old": start - int64(time.Minute), "ahead": end + int64(time.Minute)} {
		m := time.Unix(0, mtime)
		if err := os.Chtimes(filepath.Join(dir, name), m, m); err != nil {
			t.Fatal(err)
		}
	}
	times := []int64{start, end}
	clock := func() (int64, error) {
		t := times[0]
		times = times[1:]
		return t, nil
	}
	paths := []string{filepath.Join(dir, "ahead"), filepath.Join(dir, "old"), filepath.Join(dir, "racy")}
	r, err := snapshot("c", paths, clock)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range r.inputs {
		if racy := strings.HasPrefix(in.state, "?"); racy != (i == 2) {
			t.Errorf("%s recorded %q", in.path, in.state)
		}
	}
	first, n := r.changed()
	if n != 1 || first.path != paths[2] {
		t.Errorf("changed() = %v, %d; want the racy file alone", first, n)
	}
	if got := describeChange(dir, first, n); got != "racy changed as the engine was last built, or may have" {
		t.Errorf("describeChange: %q", got)
	}
}
