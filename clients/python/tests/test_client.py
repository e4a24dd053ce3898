"""The client against indexctl: every tool, through the client, answers
with the envelope `indexctl --json` prints for the same query (timing
aside), bad parameters included, from the root and from below it."""

import json
import os
import re
import shutil
import tempfile
import unittest

import indexd
from indexd import _locate

from . import support
from .support import mask


def setUpModule():
    support.setup()


def tearDownModule():
    support.finish()


# (tool, args) asked of both; the expected status says what each shows.
QUERIES = [
    ("Glob", {"pattern": "**/*.go"}, "success"),
    ("Glob", {"pattern": "*.txt", "path": "gen", "limit": 5}, "partial"),
    ("Glob", {"pattern": "**/*", "include_hidden": True, "include_ignored": True, "limit": 200}, "partial"),
    ("Glob", {"pattern": "**/*.TS", "case_sensitive": False}, "success"),
    ("Glob", {"pattern": "**/*.py", "sort": "recent"}, "success"),
    ("Glob", {"pattern": "*.txt"}, "success"),
    ("Glob", {"pattern": "**/nothing.*"}, "success"),
    ("Grep", {"pattern": "todo"}, "success"),
    ("Grep", {"pattern": "TODO", "include": "*.py"}, "success"),
    ("Grep", {"pattern": "gamma", "case_sensitive": True, "context_after": 1}, "success"),
    ("Grep", {"pattern": "needle 1\\d$", "path": "gen", "output_mode": "files_with_matches"}, "success"),
    ("Grep", {"pattern": "needle", "path": "gen", "output_mode": "count", "limit": 3}, "partial"),
    ("Grep", {"pattern": "(", "fixed_strings": True}, "success"),
    # Ignored paths are not indexed: the walk answers, and says so.
    ("Grep", {"pattern": "TODO", "include_hidden": True, "include_ignored": True}, "partial"),
    ("Grep", {"pattern": "needle", "limit": 1000}, "partial"),
    ("LS", {}, "success"),
    ("LS", {"path": "src"}, "success"),
    ("LS", {"path": "gen", "offset": 10, "limit": 5}, "partial"),
    ("LS", {"include_hidden": True, "ignore": ["*.md", "gen"]}, "success"),
    ("Changes", {}, "success"),
]

# Bad parameters: the same envelope, and this error code.
BAD = [
    ("Grep", {}, "INVALID_PARAM"),
    ("Grep", {"pattern": "("}, "INVALID_PARAM"),
    ("Grep", {"pattern": "x", "limit": 0}, "INVALID_PARAM"),
    ("Grep", {"pattern": "x", "limit": "ten"}, "INVALID_PARAM"),
    ("Grep", {"pattern": "x", "output_mode": "lines"}, "INVALID_PARAM"),
    ("Grep", {"pattern": "x", "path": "../.."}, "ACCESS_DENIED"),
    ("Grep", {"pattern": "x", "path": "no/such/dir"}, "NOT_FOUND"),
    ("Grep", {"pattern": "x", "include": 5}, "INVALID_PARAM"),
    ("Glob", {"path": "src"}, "INVALID_PARAM"),
    ("Glob", {"pattern": "*", "path": "a.go"}, "INVALID_PARAM"),
    ("Glob", {"pattern": "*", "sort": "size"}, "INVALID_PARAM"),
    ("Glob", {"pattern": "*", "limit": 201}, "INVALID_PARAM"),
    ("LS", {"path": "/"}, "ACCESS_DENIED"),
    ("LS", {"limit": 201}, "INVALID_PARAM"),
    ("LS", {"offset": -1}, "INVALID_PARAM"),
    ("LS", {"path": "missing"}, "NOT_FOUND"),
    ("Changes", {"since": 5}, "INVALID_PARAM"),
]


class TestSameAsIndexctl(support.DaemonTestCase):
    def test_tools_from_the_root(self):
        c = self.client()
        self.ready(c)
        self.assertEqual((c.root, c.cwd, c.root_from), (self.root, ".", "git"))
        for tool, args, status in QUERIES:
            with self.subTest(tool=tool, args=args):
                got = c.query(tool, args)
                want = support.indexctl_json(tool.lower(), args, self.root)
                self.assertEqual(mask(got), mask(want))
                self.assertEqual(got["status"], status, got["text"])
                self.assertEqual(got["context"]["params_input"], args)

    def test_tools_from_a_subdirectory(self):
        sub = os.path.join(self.root, "src")
        c = self.client(cwd=sub)
        self.ready(c)
        self.assertEqual((c.root, c.cwd), (self.root, "src"))
        for tool, args in [("Glob", {"pattern": "**/*"}), ("Grep", {"pattern": "todo"}), ("LS", {}), ("LS", {"path": "lib"}), ("Grep", {"pattern": "x", "path": ".."})]:
            with self.subTest(tool=tool, args=args):
                got = c.query(tool, args)
                self.assertEqual(mask(got), mask(support.indexctl_json(tool.lower(), args, sub)))
                self.assertEqual(got["context"]["cwd"], "src")

    def test_named_root(self):
        # A root named relative to the client's directory; the calls'
        # directory is then outside it.
        c = self.client(root="repo/docs", cwd=self.tmp)
        self.assertEqual((c.root, c.cwd, c.root_from), (os.path.join(self.root, "docs"), ".", ""))
        self.ready(c)
        got = c.grep(pattern="TODO")
        want = support.indexctl_json("grep", {"pattern": "TODO"}, self.tmp, "--root", "repo/docs")
        self.assertEqual(mask(got), mask(want))
        self.assertEqual(got["data"]["matches"], [{"file": "readme.md", "line": 2, "text": "TODO docs"}])

    def test_deeper_root(self):
        # Below a root the daemon serves, a client that found its root
        # (the .git above) is answered from the deeper root, as indexctl.
        lib = os.path.join(self.root, "src", "lib")
        self.ready(self.client(root=lib))
        c = self.client(cwd=lib)
        self.assertEqual((c.root, c.cwd, c.root_from), (self.root, "src/lib", "git"))
        got = c.grep(pattern="gamma")
        self.assertEqual(mask(got), mask(support.indexctl_json("grep", {"pattern": "gamma"}, lib)))
        self.assertEqual(got["context"]["cwd"], ".")
        self.assertEqual([m["file"] for m in got["data"]["matches"]], ["c.ts", "c.ts"])

    def test_bad_parameters(self):
        c = self.client()
        self.ready(c)
        for tool, args, code in BAD:
            with self.subTest(tool=tool, args=args):
                got = c.query(tool, args)
                want = support.indexctl_json(tool.lower(), args, self.root)
                self.assertEqual(mask(got), mask(want))
                self.assertEqual(got["status"], "error")
                self.assertEqual(got["error"]["code"], code, got["error"]["message"])

    def test_arguments_not_an_object(self):
        # indexctl --args takes only an object; the daemon's answer is the
        # tool's error, and the client passes it on.
        got = self.client().query("Grep", ["pattern"])
        self.assertEqual(got["status"], "error")
        self.assertEqual(got["error"], {"code": "INVALID_PARAM", "message": "Arguments must be a JSON object."})

    def test_keywords_and_args(self):
        c = self.client()
        self.ready(c)
        a = c.grep({"pattern": "todo", "limit": 2}, include="*.go")
        b = c.query("Grep", {"pattern": "todo", "limit": 2, "include": "*.go"})
        self.assertEqual(mask(a), mask(b))
        self.assertEqual([m["file"] for m in a["data"]["matches"]], ["a.go"])

    def test_query_json_is_the_daemons_text(self):
        c = self.client()
        self.ready(c)
        text = c.query_json("LS", {"path": "src"})
        self.assertIsInstance(text, str)
        self.assertEqual(mask(json.loads(text)), mask(c.ls(path="src")))

    def test_unknown_tool(self):
        with self.assertRaisesRegex(ValueError, "unknown tool 'Find'"):
            self.client().query("Find", {})

    def test_status_and_index(self):
        c = self.client()
        st = c.index(wait=True)
        self.assertEqual((st["root"], st["state"]), (os.path.realpath(self.root), "ready"))
        status = c.status()
        self.assertEqual(status["socket"], support.socket_path())
        self.assertIn(os.path.realpath(self.root), [r["root"] for r in status["roots"]])
        support.track(c)


class TestUnlimited(support.DaemonTestCase):
    """Unlimited answers: whole, as `indexctl --json --all` prints them, and
    as an iterator over the streamed batches."""

    def test_whole_as_indexctl_all(self):
        c = self.client()
        self.ready(c)
        for tool, args in [("Grep", {"pattern": "needle"}), ("Glob", {"pattern": "**/*.txt"}), ("Grep", {"pattern": "needle", "output_mode": "files_with_matches"}), ("Grep", {"pattern": "needle 7", "output_mode": "count"}), ("LS", {"path": "gen"})]:
            with self.subTest(tool=tool, args=args):
                got = c.query(tool, args, unlimited=True)
                want = support.indexctl_json(tool.lower(), args, self.root, "--all")
                self.assertEqual(mask(got), mask(want))
                self.assertEqual(got["status"], "success", got["text"][:300])
                self.assertEqual(got["context"]["params_input"], dict(args, limit=0))
        env = c.grep({"pattern": "needle"}, unlimited=True)
        self.assertEqual(len(env["data"]["matches"]), support.GEN)
        self.assertFalse(env["data"]["truncated"])

    def test_a_limit_beyond_the_agents(self):
        c = self.client()
        self.ready(c)
        got = c.grep({"pattern": "needle", "limit": 2000}, unlimited=True)
        want = support.indexctl_json("grep", {"pattern": "needle"}, self.root, "--limit", "2000")
        self.assertEqual(mask(got), mask(want))
        self.assertEqual((len(got["data"]["matches"]), got["data"]["truncated"], got["status"]), (2000, True, "partial"))

    def test_stream(self):
        c = self.client()
        self.ready(c)
        whole = c.grep({"pattern": "needle"}, unlimited=True)
        batches = []
        with c.stream("Grep", {"pattern": "needle"}, text=True) as s:
            for b in s:
                batches.append(b)
                # The client's own connection is free meanwhile.
                self.assertEqual(c.ls(path="src")["status"], "success")
            env = s.envelope
        self.assertGreater(len(batches), 1)
        self.assertTrue(all(len(b["matches"]) <= 1024 and b["cwd"] == "." for b in batches))
        got = [m for b in batches for m in b["matches"]]
        self.assertEqual(got, whole["data"]["matches"])
        self.assertEqual(env["data"]["matches"], [])
        # The whole text is the response's, then "\n" and the batches'.
        self.assertEqual(mask({"text": env["text"] + "\n" + "".join(b["text"] for b in batches)}), mask({"text": whole["text"]}))
        self.assertEqual(mask(env)["stats"], mask(whole)["stats"])

    def test_stream_of_glob_without_text(self):
        c = self.client()
        self.ready(c)
        paths = [p for b in c.stream("Glob", pattern="gen/*.txt") for p in b["paths"]]
        self.assertEqual(paths, ["gen/f%04d.txt" % i for i in range(support.GEN)])

    def test_stream_within_the_agents_limit_comes_whole(self):
        c = self.client()
        self.ready(c)
        s = c.stream("Grep", {"pattern": "needle", "limit": 10})
        self.assertEqual(list(s), [])
        self.assertEqual(len(s.envelope["data"]["matches"]), 10)

    def test_stream_closed_early(self):
        c = self.client()
        self.ready(c)
        s = c.stream("Grep", {"pattern": "needle"})
        first = next(s)
        self.assertEqual(len(first["matches"]), 1024)
        s.close()
        self.assertIsNone(s.envelope)
        with self.assertRaises(StopIteration):
            next(s)
        self.assertEqual(c.grep(pattern="needle 17$")["data"]["matches"], [{"file": "gen/f0017.txt", "line": 2, "text": "needle 17"}])


class TestLocate(unittest.TestCase):
    """The socket and the root found as indexctl finds them."""

    def setUp(self):
        self.env = dict(os.environ)
        self.addCleanup(self._restore)
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix="locate-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def _restore(self):
        os.environ.clear()
        os.environ.update(self.env)

    def test_socket_path(self):
        for k in ("INDEXD_SOCKET", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
            os.environ.pop(k, None)
        os.environ["HOME"] = "/home/u"
        self.assertEqual(indexd.default_socket_path(), "/home/u/.cache/indexd/indexd.sock")
        os.environ["XDG_CACHE_HOME"] = "/c"
        self.assertEqual(indexd.default_socket_path(), "/c/indexd/indexd.sock")
        os.environ["XDG_RUNTIME_DIR"] = "relative"  # ignored, as the XDG spec says
        self.assertEqual(indexd.default_socket_path(), "/c/indexd/indexd.sock")
        os.environ["XDG_RUNTIME_DIR"] = "/run/user/7"
        self.assertEqual(indexd.default_socket_path(), "/run/user/7/indexd/indexd.sock")
        os.environ["INDEXD_SOCKET"] = "/x/s.sock"
        self.assertEqual(indexd.default_socket_path(), "/x/s.sock")

    def test_socket_path_as_indexctl(self):
        # indexctl status names the socket it looks at.
        for env in [
            {"INDEXD_SOCKET": "rel/s.sock"},
            {"INDEXD_SOCKET": "", "XDG_RUNTIME_DIR": self.tmp},
            {"INDEXD_SOCKET": "", "XDG_RUNTIME_DIR": "", "XDG_CACHE_HOME": self.tmp},
            {"INDEXD_SOCKET": "", "XDG_RUNTIME_DIR": "", "XDG_CACHE_HOME": ""},
        ]:
            with self.subTest(env=env):
                os.environ.update(env)
                p = support.indexctl("status", cwd=self.tmp)
                m = re.fullmatch(r"indexd is not running \((.*)\)\n", p.stdout)
                self.assertIsNotNone(m, p.stdout + p.stderr)
                self.assertEqual(_in(self.tmp, indexd.default_socket_path), m.group(1))

    def test_root(self):
        repo = os.path.join(self.tmp, "repo")
        os.makedirs(os.path.join(repo, "a", "b"))
        os.mkdir(os.path.join(repo, ".git"))
        plain = os.path.join(self.tmp, "plain")
        os.makedirs(plain)
        link = os.path.join(self.tmp, "link")
        os.symlink(os.path.join(repo, "a"), link)
        cases = [
            (None, os.path.join(repo, "a", "b"), (repo, "a/b", "git")),
            (None, repo, (repo, ".", "git")),
            (None, plain, (plain, ".", "cwd")),
            ("..", os.path.join(repo, "a"), (repo, "a", "")),
            (plain, repo, (plain, ".", "")),
            # Through a link: the path the user took, as Go's Getwd.
            (None, os.path.join(link, "b"), (os.path.join(link, "b"), ".", "cwd")),
        ]
        for root, cwd, want in cases:
            with self.subTest(root=root, cwd=cwd):
                os.environ["PWD"] = cwd
                old = os.getcwd()
                os.chdir(cwd)
                try:
                    p = _locate.locate(root)
                finally:
                    os.chdir(old)
                self.assertEqual((p.root, p.cwd, p.root_from), want)

    def test_bad_root(self):
        with self.assertRaisesRegex(FileNotFoundError, "root 'nope' does not exist"):
            _locate.locate("nope", cwd=self.tmp)
        f = os.path.join(self.tmp, "f")
        open(f, "w").close()
        with self.assertRaisesRegex(NotADirectoryError, "root '%s' is not a directory" % f):
            _locate.locate(f)


def _in(d, fn):
    old = os.getcwd()
    os.chdir(d)
    saved = os.environ.get("PWD")
    os.environ["PWD"] = d
    try:
        return fn()
    finally:
        os.chdir(old)
        if saved is None:
            os.environ.pop("PWD", None)
        else:
            os.environ["PWD"] = saved


if __name__ == "__main__":
    unittest.main()
