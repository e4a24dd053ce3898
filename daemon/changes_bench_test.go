package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/tool"
)

// Figure, measured not asserted:
//
//	go test -run '^$' -bench ChangesThousand -benchtime 200x ./daemon/
//
// BenchmarkChangesThousand measures one Changes call through the socket
// (barrier, journal, filters, envelope, JSON both ways: an upper bound of
// the daemon's own time) when 1,000 files changed since the token, in a
// root of 2,000 files. The changes are made and synced before the timer
// starts. sync=false skips the read-your-writes barrier (a sync cookie's
// round trip through the file system and the watcher).
func BenchmarkChangesThousand(b *testing.B) {
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("pkg%02d/sub%d/file%04d.go", i%40, i%5, i)] = "package x\n"
	}
	td := startDaemon(b, Config{})
	root := writeTree(b, files)
	if rs := td.index(root, true); rs.State != rpc.StateReady {
		b.Fatalf("index: %+v", rs)
	}
	var clock struct {
		Data struct {
			Clock string `json:"clock"`
		} `json:"data"`
	}
	if err := json.Unmarshal(td.call(tool.MethodChanges, rpc.ToolParams{Root: root, Args: json.RawMessage(`{}`)}), &clock); err != nil || clock.Data.Clock == "" {
		b.Fatalf("no clock: %v", err)
	}
	for i := range 1000 {
		writeFile(b, root, fmt.Sprintf("pkg%02d/sub%d/file%04d.go", i%40, i%5, i), "package y\n")
	}
	args := json.RawMessage(fmt.Sprintf(`{"since":%q}`, clock.Data.Clock))
	params := rpc.ToolParams{Root: root, Args: args}
	ctx := context.Background()
	check := func() {
		js := td.call(tool.MethodChanges, params)
		var a struct {
			Status string               `json:"status"`
			Data   envelope.ChangesData `json:"data"`
		}
		if err := json.Unmarshal(js, &a); err != nil || a.Status != "success" || len(a.Data.Changes) != 1000 {
			b.Fatalf("status %s, %d changes: %v", a.Status, len(a.Data.Changes), err)
		}
	}
	check() // the barrier: every write is journaled
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			p := params
			p.Args = json.RawMessage(fmt.Sprintf(`{"since":%q,"sync":%v}`, clock.Data.Clock, sync))
			for range b.N {
				var res json.RawMessage
				if err := td.c.Call(ctx, tool.MethodChanges, p, &res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	check()

	// The daemon's own time: its method handler called in process (no
	// socket, no client), on a daemon of its own serving the same root.
	b.Run("handler", func(b *testing.B) {
		cfg := Config{StateDir: b.TempDir(), SocketPath: socketPath(b), Logger: slog.New(slog.DiscardHandler)}.withDefaults()
		d := newDaemon(ctx, cfg, cfg.Logger)
		defer func() { d.stop(); d.closeAll() }()
		idx, _ := json.Marshal(rpc.RootParams{Root: root, Wait: true})
		if _, rerr := d.Handle(ctx, rpc.MethodIndex, idx); rerr != nil {
			b.Fatal(rerr)
		}
		tok, rerr := d.Handle(ctx, tool.MethodChanges, mustJSON(b, rpc.ToolParams{Root: root, Args: json.RawMessage(`{}`)}))
		if rerr != nil {
			b.Fatal(rerr)
		}
		if err := json.Unmarshal(tok, &clock); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			writeFile(b, root, fmt.Sprintf("pkg%02d/sub%d/file%04d.go", i%40, i%5, i), fmt.Sprintf("package z%d\n", b.N))
		}
		p := mustJSON(b, rpc.ToolParams{Root: root, Args: json.RawMessage(fmt.Sprintf(`{"since":%q}`, clock.Data.Clock))})
		js, rerr := d.Handle(ctx, tool.MethodChanges, p) // the barrier: every write is journaled
		var a struct {
			Data envelope.ChangesData `json:"data"`
		}
		if rerr != nil || json.Unmarshal(js, &a) != nil || len(a.Data.Changes) != 1000 {
			b.Fatalf("%v: %.300s", rerr, js)
		}
		for _, sync := range []bool{true, false} {
			b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
				p := mustJSON(b, rpc.ToolParams{Root: root, Args: json.RawMessage(fmt.Sprintf(`{"since":%q,"sync":%v}`, clock.Data.Clock, sync))})
				for range b.N {
					if _, rerr := d.Handle(ctx, tool.MethodChanges, p); rerr != nil {
						b.Fatal(rerr)
					}
				}
			})
		}
	})
}

func mustJSON(b *testing.B, v any) json.RawMessage {
	js, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return js
}
