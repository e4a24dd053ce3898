package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/indexd/indexd/rpc"
)

// A saved index damaged while the daemon was down (every page after the
// two meta pages zeroed: bbolt would panic on the first it read) is set
// aside as <db>.corrupt-<ns>, logged and rebuilt; the daemon stays up and
// answers as the walk does.
func TestDamagedDBSetAsideAndRebuilt(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	root := writeTree(t, sample)
	td := startDaemon(t, Config{StateDir: state})
	db := td.index(root, true).DB
	if err := td.stop(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	if len(data) < 4*ps {
		t.Fatalf("the DB is %d bytes", len(data))
	}
	clear(data[2*ps:])
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}

	rec := &logRecorder{}
	td = startDaemon(t, Config{StateDir: state, Logger: slog.New(rec)})
	rs := td.index(root, true)
	if rs.State != rpc.StateReady || rs.Reopened || rs.Files != sampleFiles {
		t.Fatalf("after the damage: %+v", rs)
	}
	if n := rec.count("discarding the saved index"); n != 1 {
		t.Errorf("logged the discarded index %d times", n)
	}
	ents, err := os.ReadDir(state)
	if err != nil {
		t.Fatal(err)
	}
	var aside []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), filepath.Base(db)+".corrupt-") {
			aside = append(aside, e.Name())
		}
	}
	if len(aside) != 1 {
		t.Errorf("set aside: %q", aside)
	} else if b, err := os.ReadFile(filepath.Join(state, aside[0])); err != nil || !bytes.Equal(b, data) {
		t.Errorf("the file set aside is not the damaged DB (%v)", err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no rebuilt DB: %v", err)
	}
	for _, q := range sampleQueries {
		a, want := td.query(q.method, root, q.args), walked(t, q.method, root, q.args)
		if a.data.Used || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("%s %s after the rebuild:\n got %s\nwant %s", q.method, q.args, a.Data, want.Data)
		}
	}
}
