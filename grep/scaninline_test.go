package grep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/indexd/indexd/internal/testtree"
)

// A small scan read on the caller's goroutine (smallScan) answers exactly
// as the workers do: the same order, the same stop at the limit, the same
// partial answer when the context has ended.
func TestSmallScanSameAnswers(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 8 {
		body := fmt.Sprintf("line %d\n", i)
		if i%2 == 0 {
			body += "needle one\nneedle two\n"
		}
		files[fmt.Sprintf("f%d.txt", i)] = body
	}
	files["bin.dat"] = "needle\x00"
	root := testtree.Write(t, files)
	base := time.Now().Add(-time.Hour)
	var refs []File
	for i := range 8 {
		rel := fmt.Sprintf("f%d.txt", i)
		mt := base.Add(time.Duration((i*5)%8) * time.Second) // not in name order
		if err := os.Chtimes(filepath.Join(root, rel), mt, mt); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, File{Rel: rel, ModTime: mt.UnixNano(), Size: int64(len(files[rel]))})
	}
	refs = append(refs, File{Rel: "bin.dat", ModTime: base.UnixNano(), Size: 7}, File{Rel: "gone.txt", ModTime: base.UnixNano()})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{8, 3, 1, 0} {
		for _, mode := range []Mode{ModeContent, ModeFiles, ModeCount} {
			for _, limit := range []int{1, 2, 3, 100} {
				for _, ctx := range []context.Context{context.Background(), cancelled} {
					m, err := CompileMatcher("needle", MatchOptions{CaseSensitive: true})
					if err != nil {
						t.Fatal(err)
					}
					q := &Search{Root: root, Matcher: m, Mode: mode, Limit: limit}
					in := append([]File(nil), refs[len(refs)-n:]...)
					if !smallScan(in) {
						t.Fatalf("%d files are not a small scan", n)
					}
					got := Scan(ctx, q, in)
					if n == 0 && ctx.Err() != nil {
						// Nothing to read: the answer is complete, ended
						// context or not.
						if got.Abort != Complete {
							t.Errorf("an empty scan says %v", got.Abort)
						}
						continue
					}
					workers := *q
					workers.noInline = true
					want := Scan(ctx, &workers, append([]File(nil), refs[len(refs)-n:]...))
					if !reflect.DeepEqual(got, want) {
						t.Errorf("n=%d mode=%s limit=%d ctx err %v:\n here    %+v\n workers %+v", n, mode, limit, ctx.Err(), got, want)
					}
				}
			}
		}
	}
}
