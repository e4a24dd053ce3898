"""The agent tools' definitions, as the MCP server lists them.

tools.json is generated from the Go definitions (mcp/tools.go and the
table of tools, tool/tool.go and tool/params.go) by
`go test ./mcp -run TestPythonToolsJSON -update`, and that test fails
while the file differs from them: the tool classes' names, descriptions
and parameter schemas are the MCP tools', never copied by hand.
"""

import json
from importlib.resources import files


def _load():
    text = files(__package__).joinpath("tools.json").read_text(encoding="utf-8")
    return json.loads(text)["tools"]


#: The tools' definitions in the order the server lists them: dicts with
#: name, method (on the daemon's socket), title, description,
#: input_schema and hidden_params (taken, but not offered to agents).
TOOLS = _load()

#: The definitions by tool name.
BY_NAME = {t["name"]: t for t in TOOLS}


def lookup(name):
    """The definition of the tool called name; ValueError naming the tools
    there are for any other."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError("unknown tool %r (the tools are %s)" % (name, ", ".join(t["name"] for t in TOOLS))) from None
