package ignore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGlobalExcludesFileAsGit: core.excludesFile is found where git finds
// it, through git's own environment variables: GIT_CONFIG_GLOBAL (a
// global configuration file of its own, or none), GIT_CONFIG_COUNT pairs
// (which win), XDG_CONFIG_HOME's git/config and git/ignore. The reference
// is git itself (git config core.excludesFile), where installed.
func TestGlobalExcludesFileAsGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	xdg := filepath.Join(home, "xdg")
	write := func(rel, content string) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".gitconfig", "[core]\n\texcludesFile = "+filepath.Join(home, "from-home")+"\n")
	write("xdg/git/config", "[core]\n\texcludesfile = "+filepath.Join(home, "from-xdg")+"\n")
	other := write("other.gitconfig", "[core]\n\texcludesFile = "+filepath.Join(home, "from-env-global")+"\n")
	empty := write("empty.gitconfig", "")

	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"home wins over xdg", map[string]string{}, filepath.Join(home, "from-home")},
		{"GIT_CONFIG_GLOBAL replaces both", map[string]string{"GIT_CONFIG_GLOBAL": other}, filepath.Join(home, "from-env-global")},
		{"a GIT_CONFIG_GLOBAL without it: git's default", map[string]string{"GIT_CONFIG_GLOBAL": empty}, filepath.Join(xdg, "git", "ignore")},
		{"GIT_CONFIG_COUNT wins", map[string]string{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "core.excludesFile", "GIT_CONFIG_VALUE_0": "/a",
			"GIT_CONFIG_KEY_1": "Core.ExcludesFile", "GIT_CONFIG_VALUE_1": filepath.Join(home, "from-count")}, filepath.Join(home, "from-count")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg, "GIT_CONFIG_NOSYSTEM": "1"}
			for k, v := range tc.env {
				env[k] = v
			}
			for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT"} {
				if _, ok := env[k]; !ok {
					if old, had := os.LookupEnv(k); had {
						os.Unsetenv(k)
						t.Cleanup(func() { os.Setenv(k, old) })
					}
				}
			}
			for k, v := range env {
				t.Setenv(k, v)
			}
			got := globalExcludesFile()
			if got != tc.want {
				t.Errorf("globalExcludesFile() = %q, want %q", got, tc.want)
			}
			cmd := exec.Command(gitBin, "config", "core.excludesFile")
			cmd.Dir = home
			out, _ := cmd.Output() // exit 1: not set
			gitSays := strings.TrimSpace(string(out))
			if gitSays == "" {
				gitSays = filepath.Join(xdg, "git", "ignore") // git's default
			}
			if gitSays != got {
				t.Errorf("git finds %q, we %q", gitSays, got)
			}
		})
	}
}

// TestRepoExcludesFileAsGit: a repository's own configuration (its
// config, and its config.worktree when extensions.worktreeConfig is on)
// sets core.excludesFile over the global one, and GIT_CONFIG_COUNT pairs
// over both, as `git config core.excludesFile` run in it says.
func TestRepoExcludesFileAsGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT"} {
		if old, had := os.LookupEnv(k); had {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, old) })
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/global\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = repo
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	check := func(what string) {
		t.Helper()
		g, ok := repoAbove(repo)
		if !ok {
			t.Fatal("no repository")
		}
		got := readGitGlobal().excludes(g.config().excludesFile, repo)
		want := git("config", "--path", "core.excludesFile")
		if got != want {
			t.Errorf("%s: we find %q, git %q", what, got, want)
		}
	}
	git("init", "-q", "--template=")
	check("global only")
	git("config", "core.excludesFile", "~/local")
	check("the repository's config")
	git("config", "extensions.worktreeConfig", "true")
	git("config", "--worktree", "core.excludesFile", "~/worktree")
	check("config.worktree")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.excludesfile")
	t.Setenv("GIT_CONFIG_VALUE_0", filepath.Join(home, "env"))
	check("GIT_CONFIG_COUNT")
}
