package cliflag

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type vals struct {
	word, fixed, json bool
	limit             int
	max               int64
	path, color       string
	globs             []string
	u                 int
	idle              time.Duration
}

func testSet() (*FlagSet, *vals) {
	v := &vals{}
	fs := New("t")
	fs.BoolVar(&v.word, "word-regexp", "w", false, "whole words")
	fs.BoolVar(&v.fixed, "fixed-strings", "F", false, "literal")
	fs.BoolVar(&v.json, "json", "", false, "JSON")
	fs.IntVar(&v.limit, "limit", "m", 0, "at most `N`")
	fs.Int64Var(&v.max, "max", "", 7, "at most `MB`")
	fs.StringVar(&v.path, "path", "", ".", "search `DIR`")
	fs.StringVar(&v.color, "color", "", "auto", "`WHEN`")
	fs.StringsVar(&v.globs, "glob", "g", "`GLOB`")
	fs.CountVar(&v.u, "unrestricted", "u", "fewer skipped")
	fs.DurationVar(&v.idle, "idle", "", 0, "`DURATION`")
	fs.Alias("colour", "color")
	return fs, v
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    vals
		rest    []string
		changed []string
	}{
		{nil, vals{path: ".", color: "auto", max: 7}, nil, nil},
		{[]string{"x", "-w", "y"}, vals{word: true, path: ".", color: "auto", max: 7}, []string{"x", "y"}, []string{"word-regexp"}},
		{[]string{"-wF", "--limit", "3", "--path=src", "a"}, vals{word: true, fixed: true, limit: 3, path: "src", color: "auto", max: 7}, []string{"a"}, []string{"word-regexp", "fixed-strings", "limit", "path"}},
		{[]string{"-m5", "-m", "6", "-m=7"}, vals{limit: 7, path: ".", color: "auto", max: 7}, nil, []string{"limit"}},
		{[]string{"-wm", "9"}, vals{word: true, limit: 9, path: ".", color: "auto", max: 7}, nil, nil},
		{[]string{"-g", "*.{go,md}", "--glob=!x", "-g!y"}, vals{globs: []string{"*.{go,md}", "!x", "!y"}, path: ".", color: "auto", max: 7}, nil, []string{"glob"}},
		{[]string{"-uu", "-u", "--unrestricted"}, vals{u: 4, path: ".", color: "auto", max: 7}, nil, []string{"unrestricted"}},
		{[]string{"--word-regexp=false", "--json=true"}, vals{json: true, path: ".", color: "auto", max: 7}, nil, []string{"word-regexp", "json"}},
		{[]string{"--colour", "never", "--max", "0x10", "--idle", "1m30s"}, vals{color: "never", max: 16, idle: 90 * time.Second, path: "."}, nil, []string{"color", "max", "idle"}},
		{[]string{"a", "--", "-w", "--json"}, vals{path: ".", color: "auto", max: 7}, []string{"a", "-w", "--json"}, nil},
		{[]string{"-", "--path", "-"}, vals{path: "-", color: "auto", max: 7}, []string{"-"}, nil},
		{[]string{"--path", "--json"}, vals{path: "--json", color: "auto", max: 7}, nil, []string{"path"}},
	} {
		fs, v := testSet()
		if err := fs.Parse(tc.args); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(*v, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.args, *v, tc.want)
		}
		if !reflect.DeepEqual(fs.Args(), tc.rest) {
			t.Errorf("%q: args %q, want %q", tc.args, fs.Args(), tc.rest)
		}
		for _, c := range tc.changed {
			if !fs.Changed(c) {
				t.Errorf("%q: %s not changed", tc.args, c)
			}
		}
		if len(tc.changed) == 0 && fs.Changed("json") != (v.json) {
			t.Errorf("%q: json changed %v", tc.args, fs.Changed("json"))
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hiden"}, "unknown flag --hiden"},
		{[]string{"-wx"}, "unknown flag -x"},
		{[]string{"--limit"}, "flag needs an argument: --limit"},
		{[]string{"-m"}, "flag needs an argument: -m (--limit)"},
		{[]string{"-wm"}, "flag needs an argument: -m (--limit)"},
		{[]string{"--limit", "many"}, `invalid value "many" for --limit: want an integer`},
		{[]string{"--json=maybe"}, `invalid value "maybe" for --json: want true or false`},
		{[]string{"--idle", "5"}, `invalid value "5" for --idle: want a duration such as 30s or 5m`},
		{[]string{"--unrestricted=2"}, "flag takes no argument: --unrestricted"},
	} {
		fs, _ := testSet()
		err := fs.Parse(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	fs, _ := testSet()
	var ue *UnknownError
	if err := fs.Parse([]string{"-q"}); !errors.As(err, &ue) || ue.Name != "q" || !ue.Short {
		t.Errorf("-q: %#v", err)
	}
	for _, h := range []string{"-h", "--help", "-wh"} {
		if err := fs.Parse([]string{h}); !errors.Is(err, ErrHelp) {
			t.Errorf("%s: %v, want ErrHelp", h, err)
		}
	}
}

// The first argument ends the flags of a set told so (the global flags
// before a command's name).
func TestStopAtArgument(t *testing.T) {
	fs, v := testSet()
	fs.StopAtArgument()
	if err := fs.Parse([]string{"--json", "grep", "-w", "x"}); err != nil || !v.json || v.word {
		t.Fatalf("err %v, %+v", err, v)
	}
	if got := fs.Args(); !reflect.DeepEqual(got, []string{"grep", "-w", "x"}) {
		t.Errorf("args %q", got)
	}
}

// Include shares the flags: a value set through one set is the other's.
func TestInclude(t *testing.T) {
	global, v := testSet()
	own := New("own")
	var q bool
	own.BoolVar(&q, "quiet", "q", false, "")
	own.Include(global)
	if err := own.Parse([]string{"-qw", "--colour=never"}); err != nil || !q || !v.word || v.color != "never" {
		t.Fatalf("err %v, q %v, %+v", err, q, v)
	}
	if !global.Changed("word-regexp") {
		t.Error("the global set does not see the change")
	}
	if got := own.Get("limit"); got != 0 {
		t.Errorf("Get(limit) = %#v", got)
	}
	if own.Get("nope") != nil || own.On("limit") {
		t.Error("Get or On of what is not a set bool")
	}
}

func TestUsages(t *testing.T) {
	fs, _ := testSet()
	u := fs.Usages()
	for _, want := range []string{"  -w, --word-regexp", "      --path DIR", "  -m, --limit N", "  -u, --unrestricted ", "search DIR\n"} {
		if !strings.Contains(u, want) {
			t.Errorf("usages lack %q:\n%s", want, u)
		}
	}
}

// FuzzParse: any command line parses or fails with an error; nothing
// panics, and the arguments kept are ones given, in order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"-wF x", "--limit=3 -g a -g b --", "-uum 3 --colour never", "--json=maybe -", "a -- -w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fs, _ := testSet()
		args := strings.Fields(line)
		if fs.Parse(args) != nil {
			return
		}
		i := 0
		for _, a := range fs.Args() {
			for i < len(args) && args[i] != a {
				i++
			}
			if i == len(args) {
				t.Fatalf("%q: argument %q was not given (in order)", args, a)
			}
			i++
		}
	})
}
