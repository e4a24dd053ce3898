package query

import (
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/tool"
)

// sync (default true) is decoded for Glob and Grep; a wrong type is an
// INVALID_PARAM like every boolean.
func TestSyncParam(t *testing.T) {
	t.Parallel()
	tools, _ := setup(t, fsTree{"a.txt": "x\n"})
	for _, name := range []string{tool.Glob, tool.Grep} {
		r := run(t, tools, name, `{"pattern":"a","sync":"no"}`)
		wantError(t, r, envelope.CodeInvalidParam, "sync must be a boolean.")
		r = run(t, tools, name, `{"pattern":"a","sync":false}`)
		wantStatus(t, r, "success")
	}
	for _, c := range []struct {
		args string
		want bool
	}{{`{"pattern":"a"}`, true}, {`{"pattern":"a","sync":false}`, false}, {`{"pattern":"a","sync":null}`, true}} {
		a, _ := decodeArgs([]byte(c.args))
		g, err := decodeGlob(a, rules{})
		if err != nil || g.Sync != c.want {
			t.Errorf("glob %s: sync %v, err %v", c.args, g.Sync, err)
		}
		p, err := decodeGrep(a, rules{})
		if err != nil || p.Sync != c.want {
			t.Errorf("grep %s: sync %v, err %v", c.args, p.Sync, err)
		}
	}
}
