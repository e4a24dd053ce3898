package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/indexd/indexd/envelope"
)

// A grep over a file that takes the regexp engine tens of seconds, whose
// client hangs up while it reads the file, stops mid-file: its handler
// returns the scan cut short, where it used to finish the scan first (the
// handler could not be interrupted mid-file), and the daemon then stops.
// Nothing here depends on how fast the machine scans: the handler's
// answer and the bytes this process read say where the scan stopped. The
// count is the process's, so the test does not run beside others.
func TestHungUpGrepStops(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// 64 MiB of 'a' on one line: `a[a-z]{1,30}[a-z]{1,30}z` costs
	// hundreds of nanoseconds a byte, and its prefilter literal "a" is
	// everywhere.
	f, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat([]byte("a"), 1<<20)
	for range 64 {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	answers := make(chan *envelope.Envelope, 1)
	td := startDaemon(t, Config{hooks: &testHooks{answered: func(tool string, env *envelope.Envelope) { answers <- env }}})

	td.index(root, true) // the build reads the file too: before the count below

	nc, err := net.Dial("unix", td.cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "grep", "params": map[string]any{
		"root": root, "args": map[string]any{"pattern": `a[a-z]{1,30}[a-z]{1,30}z`, "timeout_ms": 60000},
	}})
	if _, err := fmt.Fprintf(nc, "%s\n", req); err != nil {
		t.Fatal(err)
	}
	// Wait for the grep to be reading the file: this process (whose
	// tests do not run beside this one) has read a megabyte more.
	read := readBytes(t)
	deadline := time.Now().Add(wait)
	for readBytes(t) < read+1<<20 {
		if time.Now().After(deadline) {
			t.Fatal("the grep did not start reading")
		}
		runtime.Gosched()
	}
	nc.Close()
	env := recv(t, answers, "the grep's handler to return after the hang-up")
	js, _ := env.MarshalJSON()
	var a struct {
		Data struct {
			AbortedReason string `json:"aborted_reason"`
		} `json:"data"`
		Stats struct {
			Candidates   int `json:"candidates"`
			FilesScanned int `json:"files_scanned"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(js, &a); err != nil {
		t.Fatal(err)
	}
	// The one candidate was left unfinished: the scan was cut mid-file
	// (the answer, which nobody reads, says so as a timeout), and well
	// short of the file's 64 MiB.
	if a.Data.AbortedReason == "" || a.Stats.Candidates != 1 || a.Stats.FilesScanned != 0 {
		t.Fatalf("the grep's answer after its client hung up: %s, want big.txt left unfinished", js)
	}
	// The file is one line longer than a chunk: the scan streams it once
	// looking for the literal (quickly, checking the context between
	// chunks), then the regexp reads it again (slowly). A hang-up noticed
	// after the first pass (it was, once, on a loaded machine: 64 MiB and
	// 94 KB) still cuts the second short; a scan that finished read the
	// file twice.
	if n := readBytes(t) - read; n >= 2*64<<20 {
		t.Errorf("%d bytes read after the hang-up: the scan read the whole file twice, to the end of its regexp's pass", n)
	}
	td.cancel()
	if err := recv(t, td.errc, "Run to return"); err != nil {
		t.Errorf("Run: %v", err)
	}
	td.errc <- nil // for the cleanup's stop
}
