"""indexd: the Python client of the indexd daemon.

    import indexd

    with indexd.Client() as c:              # the root: as indexctl finds it
        env = c.grep(pattern="TODO", include="*.py")
        print(env["text"])
        for batch in c.stream("Grep", {"pattern": "TODO"}):   # every match
            ...

    tools = indexd.tools.make_tools(project_root="/path/to/repo")
    print(tools[1].run({"pattern": "TODO"}))  # the envelope's JSON

Client answers Glob, Grep, LS and Changes with the daemon's envelope (a
dict), finding the socket and the root as indexctl does and starting the
daemon through indexctl when none answers. indexd.tools has the agent
tools as classes with run(parameters) -> str, whose names, descriptions
and parameter schemas are the MCP tools'.
"""

from . import tools
from ._locate import default_socket_path, locate
from .client import Client, Stream
from .errors import ConnectionLost, DaemonUnavailable, IndexdError, NoAnswer, RPCError

__version__ = "0.1.0"

__all__ = [
    "Client",
    "ConnectionLost",
    "DaemonUnavailable",
    "IndexdError",
    "NoAnswer",
    "RPCError",
    "Stream",
    "default_socket_path",
    "locate",
    "tools",
]
