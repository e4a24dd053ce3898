package mcp

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	toolspec "github.com/indexd/indexd/tool"
)

var update = flag.Bool("update", false, "rewrite the Python client's tools.json from the tools' definitions")

// pythonToolsFile is the Python client's copy of the agent tools'
// definitions (clients/python). Its tool classes load it, so that their
// names, descriptions and parameter schemas are the MCP tools' without
// being copied by hand; TestPythonToolsJSON keeps it current.
const pythonToolsFile = "../clients/python/indexd/tools.json"

// pythonTool is one tool in pythonToolsFile.
type pythonTool struct {
	Name        string          `json:"name"`
	Method      string          `json:"method"` // on the daemon's socket
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// HiddenParams are the parameters the tool takes that its schema
	// does not offer to agents (tool.Param.Hidden): an argument outside
	// the schema and this list is refused as the server's
	// unknownArgument refuses it.
	HiddenParams []string `json:"hidden_params"`
}

// pythonToolsJSON returns what pythonToolsFile must hold: the definitions
// of DefaultTools as the server lists them, indented, with a note saying
// how the file is made.
func pythonToolsJSON(t *testing.T) []byte {
	t.Helper()
	var file struct {
		Generated string       `json:"generated"`
		Tools     []pythonTool `json:"tools"`
	}
	file.Generated = "by 'go test ./mcp -run TestPythonToolsJSON -update' from the MCP tools' definitions (mcp/tools.go, and the table of tools in tool/tool.go and tool/params.go); do not edit"
	for _, name := range DefaultTools {
		def := Tool(name)
		if def == nil {
			t.Fatalf("no definition of %s", name)
		}
		schema, ok := def.InputSchema.(json.RawMessage)
		if !ok {
			t.Fatalf("%s: the input schema is a %T, not JSON text", name, def.InputSchema)
		}
		spec, err := toolspec.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		hidden := []string{}
		for _, p := range spec.Params {
			if p.Hidden {
				hidden = append(hidden, p.Name)
			}
		}
		file.Tools = append(file.Tools, pythonTool{Name: def.Name, Method: spec.Method, Title: def.Title, Description: def.Description, InputSchema: schema, HiddenParams: hidden})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<Broken Link>" as written
	enc.SetIndent("", "  ")
	if err := enc.Encode(file); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPythonToolsJSON checks that the Python client's tools.json holds
// the tools' definitions as the server lists them; -update rewrites it.
func TestPythonToolsJSON(t *testing.T) {
	want := pythonToolsJSON(t)
	if *update {
		if err := os.WriteFile(pythonToolsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(pythonToolsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the tools' definitions (run 'go test ./mcp -run TestPythonToolsJSON -update'):\n%s",
			pythonToolsFile, diff.Diff(pythonToolsFile, got, "definitions", want))
	}
	// The file is read by another program: it must be what it says.
	var back struct{ Tools []pythonTool }
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("%s: %v", pythonToolsFile, err)
	}
	if len(back.Tools) != len(DefaultTools) {
		t.Errorf("%s lists %d tools, want %d (%v)", pythonToolsFile, len(back.Tools), len(DefaultTools), DefaultTools)
	}
}
