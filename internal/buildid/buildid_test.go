package buildid

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The ID read from the note is what the go command says it is.
func TestSelfMatchesGoTool(t *testing.T) {
	id := Self()
	if id == "" {
		t.Fatal("no build ID in the test binary")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); id != want {
		t.Fatalf("Self() = %q, go tool buildid says %q", id, want)
	}
	if Of("/nonexistent") != "" || parseNote([]byte("short")) != "" {
		t.Fatal("no ID must read as empty")
	}
}
