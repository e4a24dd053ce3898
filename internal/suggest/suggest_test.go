package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"glob", "grep", "ls", "changes", "index", "status", "forget", "stop", "version", "completion", "mcp", "daemon", "help"}
	types := []string{"c", "cpp", "go", "golang-is-not-here", "js", "py", "rust", "ts"}
	for _, tc := range []struct {
		word  string
		cands []string
		want  string
	}{
		{"grp", commands, "grep"},
		{"gerp", commands, "grep"}, // a swap is one edit
		{"glb", commands, "glob"},
		{"stauts", commands, "status"},
		{"STATUS", commands, "status"},
		{"chnages", commands, "changes"},
		{"indx", commands, "index"},
		{"xyzzy", commands, ""},
		{"l", commands, ""}, // one letter: anything is one edit away
		{"hiden", []string{"hidden", "include-hidden", "no-ignore"}, "hidden"},
		{"include-hiden", []string{"hidden", "include-hidden"}, "include-hidden"},
		{"golang", []string{"c", "go", "js", "rust"}, "go"},
		{"python", []string{"c", "go", "py", "rust"}, "py"},
		{"rs", types, ""},
		{"rus", types, "rust"},
	} {
		if got := Closest(tc.word, tc.cands); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"abc", "acb", 1}, {"kitten", "sitting", 3}, {"grep", "gerp", 1},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
