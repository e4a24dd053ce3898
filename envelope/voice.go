package envelope

import "fmt"

// Voice words an answer's hints and messages for its reader. The zero value
// is the agents': a hint names the parameter to set ("Set
// include_ignored=true to search them."), as docs/product.md shows. A voice
// whose Flag is set is a person's at indexctl's command line (Tools.Voice,
// rpc.ToolParams.Voice "cli"): a hint names the flag to give ("Use
// --include-ignored to search them."). The reader chooses the voice; no
// front end rewrites another's text.
type Voice struct {
	// Flag returns the flag that sets a parameter ("" when none does).
	Flag func(param string) string
}

// CLI reports whether v is the command line's.
func (v Voice) CLI() bool { return v.Flag != nil }

// Param names a parameter: "limit" for agents, "--limit" on the command
// line.
func (v Voice) Param(name string) string {
	if v.CLI() {
		if f := v.Flag(name); f != "" {
			return "--" + f
		}
	}
	return name
}

// Set says how to ask for param=value: "Set include_ignored=true" for
// agents; "Use --include-ignored" (for true) or "Use --limit 500" on the
// command line.
func (v Voice) Set(param, value string) string {
	if !v.CLI() {
		return fmt.Sprintf("Set %s=%s", param, value)
	}
	if value == "true" {
		return "Use " + v.Param(param)
	}
	return "Use " + v.Param(param) + " " + value
}
