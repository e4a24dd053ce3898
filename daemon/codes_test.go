package daemon

import (
	"testing"

	"github.com/indexd/indexd/rpc"
)

// Every JSON-RPC error code the daemon or the protocol can answer means
// one thing: no two share a number.
func TestErrorCodesUnique(t *testing.T) {
	codes := map[string]int{
		"rpc.CodeParseError":      rpc.CodeParseError,
		"rpc.CodeInvalidRequest":  rpc.CodeInvalidRequest,
		"rpc.CodeMethodNotFound":  rpc.CodeMethodNotFound,
		"rpc.CodeInvalidParams":   rpc.CodeInvalidParams,
		"rpc.CodeInternalError":   rpc.CodeInternalError,
		"rpc.CodeRepliesUnread":   rpc.CodeRepliesUnread,
		"daemon.CodeTooManyRoots": CodeTooManyRoots,
		"daemon.CodeStopped":      CodeStopped,
		"daemon.CodeMemoryLimit":  CodeMemoryLimit,
		"daemon.CodeFailed":       CodeFailed,
	}
	seen := map[int]string{}
	for name, c := range codes {
		if other, ok := seen[c]; ok {
			t.Errorf("%s and %s are both %d", name, other, c)
		}
		seen[c] = name
	}
}
