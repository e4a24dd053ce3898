package query

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/tool"
)

// TestParamsAgree holds each tool's decoder to its table of parameters
// (tool.Spec.Params), from which the MCP schemas and indexctl's flags are
// written too: every parameter in the table is read (a value of another
// type is refused with the table's message), an integer's bounds and an
// enumeration's choices are the table's, and a parameter left out
// decodes as its default given explicitly. A parameter a decoder reads
// that the table lacks panics (decoder.param) in every test of the tool.
func TestParamsAgree(t *testing.T) {
	t.Parallel()
	decoders := map[string]func(args, rules) (any, *envelope.Error){
		tool.Glob:    func(a args, u rules) (any, *envelope.Error) { return decodeGlob(a, u) },
		tool.Grep:    func(a args, u rules) (any, *envelope.Error) { return decodeGrep(a, u) },
		tool.LS:      func(a args, u rules) (any, *envelope.Error) { return decodeLS(a, u) },
		tool.Changes: func(a args, u rules) (any, *envelope.Error) { return decodeChanges(a, u) },
	}
	for _, spec := range tool.Specs() {
		decode := decoders[spec.Name]
		if decode == nil {
			t.Errorf("no decoder for %s", spec.Name)
			continue
		}
		base := map[string]any{}
		if spec.Param("pattern") != nil && spec.Param("pattern").Required {
			base["pattern"] = "x"
		}
		call := func(extra map[string]any) *envelope.Error {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range extra {
				m[k] = v
			}
			js, _ := json.Marshal(m)
			a, err := decodeArgs(js)
			if err != nil {
				return err
			}
			_, err = decode(a, rules{})
			return err
		}
		decoded := func(extra map[string]any) any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range extra {
				m[k] = v
			}
			js, _ := json.Marshal(m)
			a, _ := decodeArgs(js)
			v, err := decode(a, rules{})
			if err != nil {
				t.Fatalf("%s %s: %v", spec.Name, js, err)
			}
			return v
		}
		for _, p := range spec.Params {
			what := spec.Name + "." + p.Name
			// A value of another type: refused with the table's message.
			wrong := any(map[string]int{"x": 1})
			if err := call(map[string]any{p.Name: wrong}); err == nil || err.Code != envelope.CodeInvalidParam {
				t.Errorf("%s: an object taken (%v)", what, err)
			} else if p.Name != "pattern" && err.Message != typeError(&p, envelope.Voice{}) {
				t.Errorf("%s: message %q, want the table's %q", what, err.Message, typeError(&p, envelope.Voice{}))
			}
			switch p.Kind {
			case tool.Int:
				if err := call(map[string]any{p.Name: p.Min - 1}); err == nil {
					t.Errorf("%s: %d (below the table's minimum) taken", what, p.Min-1)
				}
				if err := call(map[string]any{p.Name: p.Min}); err != nil {
					t.Errorf("%s: the table's minimum %d refused: %v", what, p.Min, err)
				}
				if p.HasMax {
					if err := call(map[string]any{p.Name: p.Max}); err != nil {
						t.Errorf("%s: the table's maximum %d refused: %v", what, p.Max, err)
					}
					if err := call(map[string]any{p.Name: p.Max + 1}); err == nil {
						t.Errorf("%s: %d (above the table's maximum) taken", what, p.Max+1)
					}
				}
			case tool.String:
				for _, c := range p.Enum {
					if err := call(map[string]any{p.Name: c}); err != nil {
						t.Errorf("%s: the table's choice %q refused: %v", what, c, err)
					}
				}
				if len(p.Enum) > 0 && call(map[string]any{p.Name: "none of them"}) == nil {
					t.Errorf("%s: a value that is not one of the table's choices taken", what)
				}
			}
			// Left out, or given as the table's default: the same.
			if p.Default != nil && p.Kind != tool.Strings && !p.Required {
				if got, want := decoded(nil), decoded(map[string]any{p.Name: p.Default}); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: left out decodes as %+v, given its default %v as %+v", what, got, p.Default, want)
				}
				if p.Kind == tool.Bool {
					if got, other := decoded(nil), decoded(map[string]any{p.Name: !p.Default.(bool)}); reflect.DeepEqual(got, other) {
						t.Errorf("%s: %v decodes as the default", what, !p.Default.(bool))
					}
				}
			}
		}
	}
	// The envelope's limits are the table's, and the engine's the ones
	// the envelope's notes quote.
	for _, c := range []struct {
		name      string
		got, want int
	}{{"envelope.GlobMaxLimit", envelope.GlobMaxLimit, tool.GlobMaxLimit},
		{"envelope.GrepMultilineMaxBytes", envelope.GrepMultilineMaxBytes, grep.MultilineMaxBytes}} {
		if c.got != c.want {
			t.Errorf("%s = %d, the table's is %d", c.name, c.got, c.want)
		}
	}
}
