"""The tool classes against the MCP server (`indexctl mcp`): the same
names, titles, descriptions and input schemas, and run() returns the
envelope the MCP tool returns as its structuredContent (timing aside),
refusals of unknown arguments included. Without a daemon, run() answers
by indexctl's walk, as the MCP server does."""

import json
import os
import subprocess
import sys
import unittest

import indexd
from indexd.tools import TOOL_CLASSES, GrepTool, LSTool, make_tools

from . import support
from .support import mask

HERE = os.path.dirname(os.path.abspath(__file__))


def setUpModule():
    support.setup()


def tearDownModule():
    support.finish()


class MCPSession:
    """An `indexctl mcp --root ROOT` session on pipes, one JSON-RPC message
    a line."""

    def __init__(self, root, errlog):
        self.p = subprocess.Popen([support.INDEXCTL, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, text=True)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise AssertionError("indexctl mcp ended (exit %s)" % self.p.wait())
            msg = json.loads(line)
            if msg.get("id") == self.id and "method" not in msg:
                if "error" in msg:
                    raise AssertionError("%s: %s" % (method, msg["error"]))
                return msg["result"]

    def close(self):
        self.p.stdin.close()
        self.p.stdout.close()
        self.p.wait(timeout=30)


# Calls made through both: (tool, arguments).
CALLS = [
    ("Glob", {"pattern": "**/*.py"}),
    ("Grep", {"pattern": "todo", "include": "*.{go,py,ts}"}),
    ("Grep", {"pattern": "("}),
    ("LS", {"path": "src"}),
    ("LS", {"path": "../.."}),
    ("Changes", {}),
    ("Grep", {"pattern": "x", "bogus": 1}),
    ("Glob", {"pattern": "*", "limt": 5, "Path": "src"}),
    ("LS", {"ignore": ["*.md"], "hidden\nkey": True}),
    ("Grep", {"pattern": "needle 1$", "sync": False, "glob": ["gen/*"]}),  # taken, though not offered
]


class TestAsMCP(support.DaemonTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.errlog = open(os.path.join(cls.tmp, "mcp.err"), "w")
        cls.mcp = MCPSession(cls.root, cls.errlog)

    @classmethod
    def tearDownClass(cls):
        cls.mcp.close()
        cls.errlog.close()
        super().tearDownClass()

    def test_definitions_are_the_mcp_tools(self):
        listed = {t["name"]: t for t in self.mcp.call("tools/list", {})["tools"]}
        self.assertEqual(sorted(listed), sorted(c.name for c in TOOL_CLASSES))
        for cls in TOOL_CLASSES:
            tool = cls(client=self.client())
            t = listed[tool.name]
            with self.subTest(tool=tool.name):
                self.assertEqual(tool.title, t["title"])
                self.assertEqual(tool.description, t["description"])
                self.assertEqual(tool.parameters, t["inputSchema"])
                self.assertEqual(tool.to_dict(), {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]})

    def test_run_as_the_mcp_tools(self):
        tools = {t.name: t for t in make_tools(project_root=self.root)}
        self.addCleanup(tools["Glob"].client.close)
        self.assertTrue(all(t.client is tools["Glob"].client for t in tools.values()))
        self.ready(tools["Glob"].client)
        for name, args in CALLS:
            with self.subTest(tool=name, args=args):
                got = json.loads(tools[name].run(args))
                res = self.mcp.call("tools/call", {"name": name, "arguments": args})
                self.assertEqual(mask(got), mask(res["structuredContent"]))
                self.assertEqual(res.get("isError", False), got["status"] == "error")
        got = json.loads(tools["Grep"].run({"pattern": "x", "bogus": 1, "alpha": 2}))
        self.assertEqual(got["error"]["code"], "INVALID_PARAM")
        self.assertTrue(got["error"]["message"].startswith("Unknown parameters 'alpha', 'bogus'. Grep takes: pattern, path, include, "), got["error"]["message"])

    def test_run_takes_json_text(self):
        tool = GrepTool(project_root=self.root)
        self.addCleanup(tool.client.close)
        self.ready(tool.client)
        a = json.loads(tool.run('{"pattern": "alpha"}'))
        b = json.loads(tool.run({"pattern": "alpha"}))
        self.assertEqual(mask(a), mask(b))
        self.assertEqual([m["file"] for m in a["data"]["matches"]], ["a.go", "a.go"])
        bad = json.loads(tool.run("pattern: alpha"))  # not JSON: the tool says what it wants
        self.assertEqual(bad["error"], {"code": "INVALID_PARAM", "message": "Arguments must be a JSON object."})

    def test_parameters(self):
        tool = LSTool(client=self.client())
        self.assertEqual([p["name"] for p in tool.get_parameters()], ["path", "offset", "limit", "include_hidden", "include_ignored", "ignore"])
        self.assertEqual(tool.get_parameters()[2], {"name": "limit", "type": "integer", "description": "Maximum number of entries to return (1-200).", "required": False, "default": 100})
        grep = GrepTool(client=self.client())
        self.assertTrue(grep.validate_parameters({"pattern": "x"}))
        self.assertFalse(grep.validate_parameters({"path": "x"}))


class TestWithoutDaemon(support.DaemonTestCase):
    def test_run_walks_when_no_daemon_can_be_reached(self):
        # A socket path under a regular file: no daemon can listen there.
        blocker = os.path.join(self.tmp, "file")
        open(blocker, "w").close()
        sock = os.path.join(blocker, "s.sock")
        c = indexd.Client(self.root, socket=sock)
        self.addCleanup(c.close)
        with self.assertRaisesRegex(indexd.DaemonUnavailable, "cannot connect to %s" % sock):
            c.grep(pattern="alpha")
        grep = GrepTool(client=c)
        got = json.loads(grep.run({"pattern": "alpha"}))
        want = support.indexctl_json("grep", {"pattern": "alpha"}, self.root, "--socket", sock)
        self.assertEqual(mask(got), mask(want))
        self.assertEqual((got["status"], got["data"]["fallback_used"], got["data"]["fallback_reason"]), ("partial", True, "daemon_unavailable"))
        self.assertEqual([m["file"] for m in got["data"]["matches"]], ["a.go", "a.go"])

    def test_run_without_indexctl_either(self):
        blocker = os.path.join(self.tmp, "file2")
        open(blocker, "w").close()
        c = indexd.Client(self.root, socket=os.path.join(blocker, "s.sock"), indexctl=os.path.join(self.tmp, "no-indexctl"))
        self.addCleanup(c.close)
        got = json.loads(LSTool(client=c).run({"path": "src"}))
        self.assertEqual(got["status"], "error")
        self.assertEqual(got["error"]["code"], "INTERNAL_ERROR")
        self.assertEqual(got["context"], {"cwd": ".", "params_input": {"path": "src"}})
        self.assertIn("no-indexctl", got["error"]["message"])


class TestExample(unittest.TestCase):
    def test_example_runs_the_three_tools(self):
        support.setup()
        example = os.path.join(HERE, "..", "examples", "registry.py")
        repo = os.path.realpath(os.path.join(HERE, "..", "..", ".."))
        p = subprocess.run([sys.executable, example, repo], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Tools: Glob, Grep, LS, Changes\n", p.stdout)
        self.assertRegex(p.stdout, r"== Glob .* -> (success|partial)\n")
        self.assertRegex(p.stdout, r"== Grep .* -> (success|partial)\n")
        self.assertIn("\ncmd/indexctl/main.go:", p.stdout)
        self.assertIn("\ncmd/indexd/main.go:", p.stdout)
        self.assertRegex(p.stdout, r"== LS .* -> (success|partial)\n")


if __name__ == "__main__":
    unittest.main()
