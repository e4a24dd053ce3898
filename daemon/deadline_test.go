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
)

// A grep over a file that takes the regexp engine tens of seconds, whose
// client hangs up, stops at once: the daemon then stops well within its
// drain (10 s), where it used to finish the scan first (the handler could
// not be interrupted mid-file).
func TestHungUpGrepStops(t *testing.T) {
	t.Parallel()
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
	td := startDaemon(t, Config{})

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
	// Wait for the grep to be under way (status counts it as it starts).
	deadline := time.Now().Add(wait)
	for td.status("").Queries == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the grep did not start")
		}
	}
	nc.Close()

	td.cancel()
	select {
	case err := <-td.errc:
		td.errc <- err // for the cleanup's stop
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second): // well under the grep's own 60 s: a hang-up stopped it
		buf := make([]byte, 1<<20)
		t.Fatalf("the daemon did not stop within 30 s of a hang-up: the grep kept running\n%s", buf[:runtime.Stack(buf, true)])
	}
}
