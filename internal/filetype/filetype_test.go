package filetype

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTableSorted: Lookup's binary search needs the table in name order.
func TestTableSorted(t *testing.T) {
	if !slices.IsSortedFunc(table, func(a, b Type) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("table is not sorted by name")
	}
	for _, ty := range table {
		if got, ok := Lookup(ty.Name); !ok || got.Name != ty.Name {
			t.Errorf("Lookup(%q) = %v, %v", ty.Name, got, ok)
		}
	}
	if _, ok := Lookup("no-such-type"); ok {
		t.Error("Lookup found a type that does not exist")
	}
}

// TestTableIsRipgreps compares the table with the installed rg's
// --type-list, when rg is installed: each line "name: glob, glob".
func TestTableIsRipgreps(t *testing.T) {
	version, err := exec.Command("rg", "--version").Output()
	if err != nil {
		t.Skipf("rg --version: %v", err)
	}
	if !strings.HasPrefix(string(version), "ripgrep 13.") {
		t.Skipf("the table is ripgrep 13's; installed: %s", strings.SplitN(string(version), "\n", 2)[0])
	}
	out, err := exec.Command("rg", "--type-list").Output()
	if err != nil {
		t.Fatalf("rg --type-list: %v", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, globs, _ := strings.Cut(line, ": ")
		want[name] = globs
	}
	for _, ty := range table {
		if w, ok := want[ty.Name]; !ok {
			t.Errorf("type %q is not rg's", ty.Name)
		} else if got := strings.Join(ty.Globs, ", "); got != w {
			t.Errorf("type %q: globs %q, rg has %q", ty.Name, got, w)
		}
		delete(want, ty.Name)
	}
	for name := range want {
		t.Errorf("rg's type %q is missing (another rg version?)", name)
	}
}
