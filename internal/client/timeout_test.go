package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/indexd/indexd/tool"
)

// The wait for a Grep's answer follows its timeout_ms as the tool reads
// it: a number in range is the tool's limit; any other value the tool
// refuses or takes at its largest is waited for at the largest; absent,
// null or unreadable arguments get the default. Glob and LS wait the
// default whatever their arguments hold. Under the command line's rules
// (Unlimited) only a timeout_ms given to Grep bounds the wait.
func TestRequestTimeout(t *testing.T) {
	def := RequestTimeout(Request{Tool: tool.Glob})
	max := time.Duration(tool.GrepMaxTimeoutMS)*time.Millisecond + requestMargin
	ms := func(n int) time.Duration { return time.Duration(n)*time.Millisecond + requestMargin }
	for _, tc := range []struct {
		tool, args string
		want       time.Duration
	}{
		{tool.Grep, `{"pattern":"x"}`, def},
		{tool.Grep, `{"pattern":"x","timeout_ms":5000}`, ms(5000)},
		{tool.Grep, `{"timeout_ms":250.9,"pattern":"x"}`, ms(250)},
		{tool.Grep, `{"timeout_ms":1}`, ms(1)},
		{tool.Grep, `{"timeout_ms":0.5}`, max},
		{tool.Grep, `{"timeout_ms":-3}`, max},
		{tool.Grep, `{"timeout_ms":1e9}`, max},
		{tool.Grep, `{"timeout_ms":"5000"}`, max},
		{tool.Grep, `{"timeout_ms":true}`, max},
		{tool.Grep, `{"timeout_ms":{"a":1}}`, max},
		{tool.Grep, `{"timeout_ms":null}`, def},
		{tool.Grep, `{"timeout_ms":100,"timeout_ms":7000}`, ms(7000)},
		{tool.Grep, `{"TIMEOUT_MS":7000}`, def},
		{tool.Grep, `{"nested":{"timeout_ms":7000}}`, def},
		{tool.Grep, `{"timeout_ms":7000`, def},
		{tool.Grep, `null`, def},
		{tool.Grep, ``, def},
		{tool.Glob, `{"timeout_ms":7000}`, def},
	} {
		if got := RequestTimeout(Request{Tool: tc.tool, Args: json.RawMessage(tc.args)}); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.tool, tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		tool, args string
		want       time.Duration
	}{
		{tool.Grep, `{"pattern":"x"}`, 0},
		{tool.Grep, `{"pattern":"x","timeout_ms":null}`, 0},
		{tool.Grep, `{"pattern":"x","timeout_ms":5000}`, ms(5000)},
		{tool.Grep, `{"timeout_ms":-3}`, max},
		{tool.Glob, `{"pattern":"x"}`, 0},
		{tool.Glob, `{"timeout_ms":7000}`, 0},
		{tool.LS, `{}`, 0},
	} {
		if got := RequestTimeout(Request{Tool: tc.tool, Args: json.RawMessage(tc.args), Unlimited: true}); got != tc.want {
			t.Errorf("unlimited %s %s: %v, want %v", tc.tool, tc.args, got, tc.want)
		}
	}
}
