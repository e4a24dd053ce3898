package client

import (
	"strings"
	"testing"
)

// A streamed answer is put back together as the daemon would have built
// it: the parts' elements in order in the data's empty list, their texts
// after the envelope's and "\n"; other members as they came. Without
// parts the response stands; malformed parts or a response without the
// empty list are errors, never an answer.
func TestWholeAnswer(t *testing.T) {
	res := `{"status":"success","data":{"matches":[],"truncated":false},"text":"Found 3 matches in 2 files for 'x' in '.'\n(Sorted by mtime desc. Took 1ms)","stats":{"time_ms":1},"context":{"cwd":"."}}`
	var w wholeAnswer
	w.add([]byte(`{"cwd":".","matches":[{"file":"a","line":1,"text":"x \"q\""},{"file":"a","line":2,"text":"x"}],"text":"\na:1: x \"q\"\na:2: x"}`))
	w.add([]byte(`{"cwd":".","matches":[{"file":"\"b\\n\"","line":7,"text":"x\u2028"}],"text":"\n\"b\\n\":7: x\u2028"}`))
	got, err := w.envelope([]byte(res))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"success","data":{"matches":[{"file":"a","line":1,"text":"x \"q\""},{"file":"a","line":2,"text":"x"},{"file":"\"b\\n\"","line":7,"text":"x\u2028"}],"truncated":false},"text":"Found 3 matches in 2 files for 'x' in '.'\n(Sorted by mtime desc. Took 1ms)\n\na:1: x \"q\"\na:2: x\n\"b\\n\":7: x\u2028","stats":{"time_ms":1},"context":{"cwd":"."}}`
	if string(got) != want {
		t.Errorf("whole answer\n got  %s\n want %s", got, want)
	}

	var none wholeAnswer
	if got, err := none.envelope([]byte(res)); err != nil || string(got) != res {
		t.Errorf("no parts: %s, %v", got, err)
	}

	for _, c := range []struct{ parts []string }{
		{[]string{`{"paths":["a"]`}},
		{[]string{`{"paths":["a"],"text":"\na"}`, `{"files":["b"],"text":"\nb"}`}},
		{[]string{`{"paths":["a"],"text":"\na"}`}}, // the response's list is "matches"
	} {
		var w wholeAnswer
		for _, p := range c.parts {
			w.add([]byte(p))
		}
		if got, err := w.envelope([]byte(res)); err == nil || !strings.HasPrefix(err.Error(), "malformed response") {
			t.Errorf("parts %q: %s, %v", c.parts, got, err)
		}
	}
}
