package buildid

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
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
	if got := Of(exe); got != id {
		t.Fatalf("Of(%s) = %q, Self() = %q", exe, got, id)
	}
	// Not an executable, a truncated one, notes that end early: no ID.
	dir := t.TempDir()
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"text": []byte("not an executable\n"), "head": data[:100], "empty": nil} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Of(p); got != "" {
			t.Errorf("Of(%s) = %q, want none", name, got)
		}
	}
	if Of("/nonexistent") != "" {
		t.Fatal("no ID must read as empty")
	}
	note := []byte("\x04\x00\x00\x00\x50\x00\x00\x00\x04\x00\x00\x00Go\x00\x00short")
	if got := findNote(note, binary.LittleEndian); got != "" {
		t.Errorf("a note whose description is cut: %q", got)
	}
	if got := findNote(note[:18], binary.LittleEndian); got != "" {
		t.Errorf("a note cut in its name: %q", got)
	}
}

// HasDWARF tells a go build from a go run, and from a go build whose
// -ldflags strip the debug information, and Of reads what go tool buildid
// does: in this system's executables, and in macOS's (Mach-O, built
// here for darwin and read here, since the client reads its own there).
func TestHasDWARF(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program nine times")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() { println(\"hello\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	for _, target := range []string{"", "darwin/arm64", "darwin/amd64"} {
		for _, tc := range []struct {
			args []string
			want bool
		}{
			{[]string{"build", "-o", out, "."}, true},
			{[]string{"build", "-ldflags=-w", "-o", out, "."}, false},
			{[]string{"run", "-exec", "cp", ".", out}, false}, // cp BINARY OUT: the binary go run runs
		} {
			cmd := exec.Command("go", tc.args...)
			cmd.Dir = dir
			if goos, goarch, ok := strings.Cut(target, "/"); ok {
				cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			}
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s go %v: %v\n%s", target, tc.args, err, b)
			}
			if got := HasDWARF(out); got != tc.want {
				t.Errorf("%s go %v: HasDWARF = %v, want %v", target, tc.args, got, tc.want)
			}
			want, err := exec.Command("go", "tool", "buildid", out).Output()
			if err != nil {
				t.Fatalf("go tool buildid: %v", err)
			}
			if got := Of(out); got == "" || got != strings.TrimSpace(string(want)) {
				t.Errorf("%s go %v: Of = %q, go tool buildid says %q", target, tc.args, got, want)
			}
			if err := os.Remove(out); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range []string{"/nonexistent", filepath.Join(dir, "main.go")} {
		if HasDWARF(p) {
			t.Errorf("HasDWARF(%s) = true", p)
		}
	}
}
