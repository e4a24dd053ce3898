package tool

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/indexd/indexd/internal/textdiff"
)

var update = flag.Bool("update", false, "rewrite the parameter tables of "+docsPath+" from the table")

// docsPath is the reference of the tools' parameters, relative to this
// package.
const docsPath = "../docs/tools.md"

// A generated table sits between a begin line naming its tool and the
// end line; the rest of the document is prose, left as it is.
const (
	beginMark = "<!-- parameters of %s: generated from tool/params.go by TestDocsTables; go test ./tool -run TestDocsTables -update rewrites them -->"
	endMark   = "<!-- end of the generated parameters -->"
)

var beginRE = regexp.MustCompile(`^<!-- parameters of (\S+):`)

// TestDocsTables checks that each tool's parameter table in
// docs/tools.md is the one the table (Specs) makes, and that every tool
// has one; go test ./tool -run TestDocsTables -update rewrites them.
func TestDocsTables(t *testing.T) {
	old, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := regenerate(string(old))
	if err != nil {
		t.Fatalf("%s: %v", docsPath, err)
	}
	if got == string(old) {
		return
	}
	if *update {
		if err := os.WriteFile(docsPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's parameter tables differ from the table in params.go (go test ./tool -run TestDocsTables -update rewrites them):\n%s",
		docsPath, textdiff.Lines(string(old), got))
}

// regenerate returns doc with every generated table made afresh from
// Specs. A tool without a table, a table of no tool, a table given twice
// or left open is an error.
func regenerate(doc string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	var out strings.Builder
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		m := beginRE.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.HasPrefix(lines[i], endMark) {
				return "", fmt.Errorf("line %d: an end mark with no table open", i+1)
			}
			out.WriteString(lines[i])
			continue
		}
		s, err := Lookup(m[1])
		if err != nil {
			return "", fmt.Errorf("line %d: %w", i+1, err)
		}
		if seen[s.Name] {
			return "", fmt.Errorf("line %d: a second table of %s", i+1, s.Name)
		}
		seen[s.Name] = true
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], endMark) {
			if beginRE.MatchString(lines[j]) {
				return "", fmt.Errorf("line %d: the table of %s is not closed", i+1, s.Name)
			}
			j++
		}
		if j == len(lines) {
			return "", fmt.Errorf("line %d: the table of %s is not closed", i+1, s.Name)
		}
		out.WriteString(paramsTable(s))
		i = j
	}
	for _, s := range Specs() {
		if !seen[s.Name] {
			return "", fmt.Errorf("no parameter table of %s (add the lines %q and %q where it goes)", s.Name, fmt.Sprintf(beginMark, s.Name), endMark)
		}
	}
	return out.String(), nil
}

// paramsTable is the Markdown table of s's parameters, between its marks.
func paramsTable(s *Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, beginMark+"\n\n", s.Name)
	b.WriteString("| parameter | type | default | values | indexctl | description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for i := range s.Params {
		p := &s.Params[i]
		doc := markdown(p.Doc)
		if p.Hidden {
			doc = "*Not offered to agents.* " + doc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, kindName(p.Kind), defaultOf(p), valuesOf(p), flagsOf(p), doc)
	}
	b.WriteString("\n" + endMark + "\n")
	return b.String()
}

func kindName(k Kind) string {
	switch k {
	case String:
		return "string"
	case Int:
		return "integer"
	case Bool:
		return "boolean"
	case Strings:
		return "list of strings"
	}
	return fmt.Sprintf("kind %d", int(k))
}

func defaultOf(p *Param) string {
	switch {
	case p.Required:
		return "required"
	case p.Default == nil:
		return "—"
	}
	switch v := p.Default.(type) {
	case string:
		return "`" + fmt.Sprintf("%q", v) + "`"
	case []string:
		if len(v) == 0 {
			return "`[]`"
		}
		return "`" + fmt.Sprintf("%q", v) + "`"
	}
	return fmt.Sprintf("`%v`", p.Default)
}

func valuesOf(p *Param) string {
	switch {
	case len(p.Enum) > 0:
		q := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			q[i] = "`" + fmt.Sprintf("%q", e) + "`"
		}
		return strings.Join(q, ", ")
	case p.Kind == Int && p.HasMax:
		return fmt.Sprintf("%d–%d", p.Min, p.Max)
	case p.Kind == Int:
		return fmt.Sprintf("≥ %d", p.Min)
	}
	return ""
}

func flagsOf(p *Param) string {
	var f []string
	if p.Short != "" {
		f = append(f, "`-"+p.Short+"`")
	}
	if n := p.FlagName(); n != "" {
		f = append(f, "`--"+n+"`")
	}
	if len(f) == 0 {
		return "—"
	}
	return strings.Join(f, " ")
}

// quotedRE finds the values a description quotes ('**/*.go'): a quote
// at the start or after a blank or an opening bracket, up to a quote
// followed by the end, a blank or punctuation. An apostrophe within a
// word (ripgrep's) is neither.
var quotedRE = regexp.MustCompile(`(^|[\s(\[])'([^'\s][^']*)'([\s.,;:)\]]|$)`)

// markdown writes a description for a table cell: its quoted values as
// code, and elsewhere the characters Markdown would take for markup
// escaped.
func markdown(doc string) string {
	var b strings.Builder
	last := 0
	for _, m := range quotedRE.FindAllStringSubmatchIndex(doc, -1) {
		b.WriteString(escapeText(doc[last:m[3]]))
		b.WriteString("`" + strings.ReplaceAll(doc[m[4]:m[5]], "|", `\|`) + "`")
		last = m[5] + 1
	}
	b.WriteString(escapeText(doc[last:]))
	return b.String()
}

var textEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, "`", "\\`", `|`, `\|`, `<`, `\<`, `[`, `\[`)

func escapeText(s string) string { return textEscaper.Replace(s) }
