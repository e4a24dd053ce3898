"""A minimal agent tool registry, shaped as a Python agent framework's
(register_tool, execute_tool(name, input_text) -> str,
get_tools_description), with indexd's tools registered in it, running
Glob, Grep and LS on the repository this file is in.

    python3 examples/registry.py            # from clients/python
    python3 examples/registry.py /some/repo

Needs indexctl on PATH (the first call starts the daemon through it).
"""

import json
import os
import sys

try:
    import indexd
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import indexd

from indexd.tools import make_tools


class ToolRegistry:
    """Tools by name; each has name, description, parameters (a JSON
    Schema) and run(parameters) -> str."""

    def __init__(self):
        self._tools = {}

    def register_tool(self, tool):
        self._tools[tool.name] = tool

    def list_tools(self):
        return list(self._tools)

    def get_tools_description(self):
        """The tools for a prompt: one line each, then the parameters."""
        lines = []
        for t in self._tools.values():
            lines.append("- %s: %s" % (t.name, t.description.split("\n")[0]))
            lines.append("  parameters: %s" % json.dumps(t.parameters))
        return "\n".join(lines)

    def execute_tool(self, name, input_text):
        """Run the named tool on its arguments given as JSON text; the
        answer is the envelope's JSON text."""
        tool = self._tools.get(name)
        if tool is None:
            return json.dumps({"status": "error", "data": {}, "text": "Error: unknown tool %s" % name, "stats": {"time_ms": 0},
                               "context": {"cwd": ".", "params_input": input_text}, "error": {"code": "INVALID_PARAM", "message": "unknown tool %s" % name}})
        return tool.run(input_text)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = argv[1] if len(argv) > 1 else indexd.locate(cwd=here).root
    registry = ToolRegistry()
    for tool in make_tools(project_root=root):
        registry.register_tool(tool)
    print("Tools: %s\n" % ", ".join(registry.list_tools()))
    calls = [
        ("Glob", {"pattern": "**/*.go", "path": "cmd", "limit": 5}),
        ("Grep", {"pattern": "func main\\(", "include": "*.go"}),
        ("LS", {"path": "."}),
    ]
    for name, args in calls:
        answer = json.loads(registry.execute_tool(name, json.dumps(args)))
        print("== %s %s -> %s" % (name, json.dumps(args), answer["status"]))
        print(answer["text"])
        print()


if __name__ == "__main__":
    main(sys.argv)
