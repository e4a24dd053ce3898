"""Where the daemon and the workspace are, found exactly as indexctl finds them.

The Go originals: rpc.DefaultSocketPath (rpc/socketpath.go) for the
socket, client.Locate and client.FindRoot (internal/client/client.go) for
the root, and os.Getwd for the current directory. A test of this package
(tests/test_client.py) checks the answers against indexctl's.
"""

import os
import stat

# How the root was found when none was named (rpc.RootFromGit,
# rpc.RootFromCwd): sent as the tool call's root_from, so that the daemon
# may answer from a deeper root it already serves.
ROOT_FROM_GIT = "git"
ROOT_FROM_CWD = "cwd"


def clean(path):
    """Go's filepath.Clean for a POSIX path (normpath keeps a leading //)."""
    p = os.path.normpath(path)
    if p.startswith("//"):
        p = "/" + p.lstrip("/")
    return p


def getwd():
    """The current directory as Go's os.Getwd gives it: $PWD when it names
    the current directory (the path the user took, through symbolic
    links), else the kernel's."""
    pwd = os.environ.get("PWD", "")
    if pwd.startswith("/"):
        try:
            if os.path.samestat(os.stat("."), os.stat(pwd)):
                return pwd
        except OSError:
            pass
    return os.getcwd()


def default_socket_path():
    """The daemon's socket: $INDEXD_SOCKET, else
    $XDG_RUNTIME_DIR/indexd/indexd.sock, else indexd/indexd.sock in the
    user's cache directory ($XDG_CACHE_HOME or ~/.cache), else
    $TMPDIR/indexd-UID/indexd.sock. The result is absolute."""
    p = os.environ.get("INDEXD_SOCKET", "")
    if p:
        return p if os.path.isabs(p) else clean(os.path.join(getwd(), p))
    d = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(d):  # the XDG spec says to ignore a relative one
        return os.path.join(d, "indexd", "indexd.sock")
    d = _user_cache_dir()
    if d:
        return os.path.join(d, "indexd", "indexd.sock")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", "indexd-%d" % os.getuid(), "indexd.sock")


def _user_cache_dir():
    """Go's os.UserCacheDir on Unix, or None where it fails."""
    d = os.environ.get("XDG_CACHE_HOME", "")
    if d:
        return d if os.path.isabs(d) else None
    home = os.environ.get("HOME", "")
    if not home:
        return None
    d = os.path.join(home, ".cache")
    return d if os.path.isabs(d) else None


def find_root(d):
    """The nearest ancestor of d (d included) holding .git (a directory,
    or a file as in worktrees and submodules), else d."""
    cur = d
    while True:
        if os.path.lexists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur) or cur
        if parent == cur:
            return d
        cur = parent


class Place:
    """Where a query runs: root (absolute and clean, symbolic links not
    resolved), cwd (the current directory relative to the root, "." when
    outside it), root_from (how the root was found without being named:
    ROOT_FROM_GIT, ROOT_FROM_CWD; "" when named) and wd (the current
    directory itself)."""

    __slots__ = ("root", "cwd", "root_from", "wd")

    def __init__(self, root, cwd, root_from, wd):
        self.root, self.cwd, self.root_from, self.wd = root, cwd, root_from, wd

    def __repr__(self):
        return "Place(root=%r, cwd=%r, root_from=%r)" % (self.root, self.cwd, self.root_from)


def locate(root=None, cwd=None):
    """Find the workspace root and the current directory within it, as
    indexctl does: root (relative to the current directory) if given,
    else the nearest ancestor of the current directory holding .git, else
    the current directory. cwd stands for the current directory (default:
    this process's). Raises FileNotFoundError or NotADirectoryError for a
    root that is not a directory."""
    wd = getwd()
    if cwd is not None:
        wd = clean(os.path.join(wd, os.fspath(cwd)))
    name = os.fspath(root) if root is not None else ""
    r, frm = name, ""
    if not r:
        r = find_root(wd)
        frm = ROOT_FROM_GIT if os.path.lexists(os.path.join(r, ".git")) else ROOT_FROM_CWD
    elif not os.path.isabs(r):
        r = os.path.join(wd, r)
    r = clean(r)
    shown = name or r
    real = os.path.realpath(r)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise FileNotFoundError("root '%s' does not exist" % shown) from None
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError("root '%s' is not a directory" % shown)
    rel = "."
    real_wd = os.path.realpath(wd)
    if _within(real, real_wd):
        rel = os.path.relpath(real_wd, real)
    return Place(r, rel, frm, wd)


def _within(root, p):
    """Whether the clean absolute path p is root or lies under it,
    comparing whole components."""
    if p == root:
        return True
    if root == "/":
        return p.startswith("/")
    return p.startswith(root + "/")

