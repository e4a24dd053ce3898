"""The agent tools as classes an agent framework registers: Glob, Grep,
LS and Changes, each with name, title, description and parameters (the
JSON Schema of its arguments), and run(parameters) -> str, which returns
the envelope's JSON text exactly as the daemon wrote it.

    from indexd.tools import make_tools

    for tool in make_tools(project_root="/path/to/repo"):
        registry.register_tool(tool)          # the framework's registry
    print(registry.execute_tool("Grep", '{"pattern": "TODO"}'))

The names, descriptions and schemas are the MCP server's (`indexctl
mcp`), loaded from tools.json, which a Go test keeps equal to the Go
definitions. run() answers as the MCP server's tools do:

- an argument the tool does not take is refused before the call, with an
  INVALID_PARAM envelope naming it and the tool's parameters (the tools
  themselves ignore what they do not know, and an agent would never learn
  of its typo);
- when no daemon can be reached or started, the call is answered by
  `indexctl --json`, which walks the tree without the daemon and says so
  (data.fallback_used, fallback_reason "daemon_unavailable");
- when the daemon hangs (NoAnswer), a TIMEOUT envelope made here says so;
- when there is no envelope at all otherwise (the connection was lost
  twice, indexctl could not walk either), an INTERNAL_ERROR envelope made
  here says why.

Paths in arguments are relative to the workspace root, as the
descriptions say, unless the framework gives the tools a working_dir.

So run() always returns an envelope; the Client's methods raise instead
(see indexd.errors).
"""

import json
import subprocess

from . import _defs
from .client import Client
from ._locate import locate
from .errors import DaemonUnavailable, IndexdError, NoAnswer


class IndexdTool:
    """An agent tool answered by the indexd daemon. Subclasses name the
    tool; the rest comes from its definition.

    project_root is the workspace root (default: as indexctl finds it
    from the current directory); working_dir, the directory relative
    paths in arguments are resolved against (default: the root, as the
    MCP tools resolve them); client, if given, is used instead of a new
    Client for them (tools made by make_tools share one)."""

    #: The tool's name as agents call it ("Glob", "Grep", "LS", "Changes").
    name = None

    def __init__(self, project_root=None, working_dir=None, client=None):
        d = _defs.lookup(self.name)
        #: A short human-readable title.
        self.title = d["title"]
        #: What the tool does and how to call it, for the model.
        self.description = d["description"]
        #: The JSON Schema of the arguments (the MCP tool's inputSchema).
        self.parameters = d["input_schema"]
        self._method = d["method"]
        self._taken = set(self.parameters.get("properties", {})) | set(d["hidden_params"])
        self.client = client if client is not None else _client(project_root, working_dir)

    def run(self, parameters=None):
        """Call the tool with parameters (a dict, or its JSON text) and
        return the envelope's JSON text."""
        args = parameters
        if isinstance(args, bytes):
            args = args.decode("utf-8", "replace")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass  # sent as it is: the tool says it is not an object
        if args is None:
            args = {}
        refusal = self._unknown_argument(args)
        if refusal is not None:
            return _dumps(_fail(args, "INVALID_PARAM", refusal))
        try:
            return self.client.query_json(self.name, args)
        except DaemonUnavailable as e:
            return self._walk(args, e)
        except NoAnswer as e:
            # A hung daemon: walking would hide it (as indexctl and the
            # MCP server do not).
            return _dumps(_fail(args, "TIMEOUT", "%s; try 'indexctl stop'" % e))
        except IndexdError as e:
            return _dumps(_fail(args, "INTERNAL_ERROR", str(e)))

    def to_dict(self):
        """The tool for a prompt or a registry: name, description and
        parameters (the JSON Schema)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def get_parameters(self):
        """The parameters as a list of dicts: name, type (the schema's),
        description, required and, where there is one, default."""
        props = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        out = []
        for name, p in props.items():
            item = {"name": name, "type": p.get("type"), "description": p.get("description", ""), "required": name in required}
            if "default" in p:
                item["default"] = p["default"]
            out.append(item)
        return out

    def validate_parameters(self, parameters):
        """Whether parameters is an object holding every required
        parameter (the tool checks the rest, and says what is wrong)."""
        return isinstance(parameters, dict) and all(k in parameters for k in self.parameters.get("required", []))

    def _unknown_argument(self, args):
        """The message refusing args for the keys the tool does not take
        (mcp's unknownArgument), or None."""
        if not isinstance(args, dict) or not args:
            return None
        bad = sorted(k for k in args if k not in self._taken)
        if not bad:
            return None
        what = "Unknown parameter" + ("s" if len(bad) > 1 else "")
        known = ", ".join(self.parameters.get("properties", {}))
        return "%s %s. %s takes: %s." % (what, ", ".join("'%s'" % k for k in bad), self.name, known)

    def _walk(self, args, unavailable):
        """The answer of `indexctl --json --voice agent` to the call (its
        hints worded for an agent, as the daemon's): indexctl tries the
        daemon once more, then walks the tree without it and says so
        (fallback_reason "daemon_unavailable")."""
        c = self.client
        cmd = c._indexctl_cmd(self._method, args, voice="agent")
        try:
            p = subprocess.run(cmd, cwd=c._place.wd, env=c._indexctl_env(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=c.start_timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            return _dumps(_fail(args, "INTERNAL_ERROR", "%s; answering without it: %s" % (unavailable, e)))
        out = p.stdout.decode("utf-8", "replace").strip()
        if out.startswith("{"):
            return out
        why = p.stderr.decode("utf-8", "replace").strip() or "%s exited with status %d" % (c.indexctl, p.returncode)
        return _dumps(_fail(args, "INTERNAL_ERROR", "%s; answering without it: %s" % (unavailable, why)))


class GlobTool(IndexdTool):
    """Glob: find files by glob pattern."""

    name = "Glob"


class GrepTool(IndexdTool):
    """Grep: search file contents, newest files first."""

    name = "Grep"


class LSTool(IndexdTool):
    """LS: list one directory."""

    name = "LS"


class ChangesTool(IndexdTool):
    """Changes: the files changed since a clock token."""

    name = "Changes"


#: The tool classes, in the order the MCP server lists the tools.
TOOL_CLASSES = [GlobTool, GrepTool, LSTool, ChangesTool]


def make_tools(project_root=None, working_dir=None, client=None):
    """One instance of each tool class, sharing one Client (client, or a
    new one for project_root and working_dir, as IndexdTool takes them)."""
    if client is None:
        client = _client(project_root, working_dir)
    return [cls(client=client) for cls in TOOL_CLASSES]


def _client(project_root, working_dir):
    """The Client of tools run at project_root from working_dir (default:
    the root itself, so that relative paths are the root's)."""
    if working_dir is None:
        root = locate(project_root).root
        return Client(root, cwd=root)
    return Client(project_root, cwd=working_dir)


def _fail(args, code, message):
    """An error envelope made here, as the envelope package's Fail makes
    it: at the root, params_input the arguments, no time spent."""
    return {
        "status": "error",
        "data": {},
        "text": "Error: " + _echo(message),
        "stats": {"time_ms": 0},
        "context": {"cwd": ".", "params_input": args},
        "error": {"code": code, "message": message},
    }


def _dumps(env):
    return json.dumps(env, ensure_ascii=False, separators=(",", ":"))


def _unsafe(ch):
    """Whether the character is unsafe to print (internal/quote): a C0
    control other than TAB, DEL, or a C1 control."""
    o = ord(ch)
    return (o < 0x20 and ch != "\t") or 0x7F <= o <= 0x9F


def _echo(s):
    """s as the envelope prints a message (envelope's echo): as it is when
    it holds no unsafe character, else in internal/quote's quoted form.
    A lone surrogate is U+FFFD, as Go decodes it from JSON."""
    s = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in s)
    if not any(_unsafe(ch) for ch in s):
        return s
    out = ['"']
    for ch in s:
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch in '\\"':
            out.append("\\" + ch)
        elif _unsafe(ch):
            out.extend("\\x%02x" % b for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
