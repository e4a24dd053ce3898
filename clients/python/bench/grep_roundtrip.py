"""Round trip of a rare-literal Grep, three ways, in one run:

  client    a persistent indexd.Client (one connection, kept): c.grep(...)
            returning the envelope as a dict;
  indexctl  subprocess.run(["indexctl", "--json", "grep", "--args", ...])
            per call, its output decoded (a process start each time);
  rg        ripgrep as a subprocess per call, as a Grep tool without
            indexd runs it (rg -n --no-heading -i -F -e PATTERN -- ROOT),
            its lines parsed and sorted newest file first (a stat per
            file).

Each round runs the three in a random order (interleaved, so that a
machine busy for a while weighs on all three alike); the medians, 10th
and 90th percentiles of each are printed, and the match counts, which
must agree. Before the rounds the root is indexed (and waited for) and
each way is run once.

It runs its own daemon on private socket and state directories (unless
--socket is given) and stops it at the end. indexctl and indexd must be
on PATH, built from the checkout:

    go build -o /tmp/indexd-bin ./cmd/...
    PATH=/tmp/indexd-bin:$PATH python3 clients/python/bench/grep_roundtrip.py \\
        --root "$(go env GOROOT)/src" --pattern errTooManyIdleHost --rounds 200

Run it on a quiet machine: the figures are wall-clock times.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import indexd
except ImportError:  # from a checkout, not installed
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import indexd


def goroot_src():
    try:
        out = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return os.path.join(out, "src")


def via_client(c, pattern):
    env = c.grep({"pattern": pattern, "fixed_strings": True})
    return [(m["file"], m["line"]) for m in env["data"]["matches"]]


def via_indexctl(root, pattern, env):
    p = subprocess.run(["indexctl", "--json", "grep", "--root", root, "--args", json.dumps({"pattern": pattern, "fixed_strings": True})],
                       capture_output=True, env=env, cwd=root)
    e = json.loads(p.stdout)
    return [(m["file"], m["line"]) for m in e["data"]["matches"]]


def via_rg(root, pattern):
    p = subprocess.run(["rg", "--line-number", "--no-heading", "--color", "never", "--ignore-case", "--fixed-strings", "-e", pattern, "--", root],
                       capture_output=True)
    hits = []
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        path, num, _ = line.split(":", 2)
        hits.append((path, int(num)))
    mtime = {}
    for path, _ in hits:
        if path not in mtime:
            mtime[path] = os.stat(path).st_mtime_ns
    hits.sort(key=lambda h: (-mtime[h[0]], h[0], h[1]))
    return [(os.path.relpath(path, root), num) for path, num in hits]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=goroot_src(), help="the tree to search (default: $(go env GOROOT)/src)")
    ap.add_argument("--pattern", default="errTooManyIdleHost", help="a literal found in few files")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--socket", help="use the daemon on this socket instead of a private one")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not a.root or not os.path.isdir(a.root):
        sys.exit("grep_roundtrip: no --root (is go on PATH?)")
    for prog in ("indexctl", "indexd", "rg"):
        if shutil.which(prog) is None:
            sys.exit("grep_roundtrip: %s is not on PATH" % prog)
    root = os.path.realpath(a.root)

    env = dict(os.environ)
    private = None
    if a.socket:
        env["INDEXD_SOCKET"] = a.socket
    else:
        private = tempfile.mkdtemp(prefix="indexd-bench-")
        env.update(INDEXD_SOCKET=os.path.join(private, "run", "indexd.sock"), XDG_RUNTIME_DIR=os.path.join(private, "run"),
                   XDG_STATE_HOME=os.path.join(private, "state"))
        os.makedirs(os.path.join(private, "run"), mode=0o700)
    os.environ.update({k: env[k] for k in ("INDEXD_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME") if k in env})
    try:
        with indexd.Client(root, cwd=root, socket=env["INDEXD_SOCKET"]) as c:
            st = c.index(wait=True)
            print("root %s: %s, %d files" % (root, st["state"], st["files"]))
            ways = {
                "client": lambda: via_client(c, a.pattern),
                "indexctl": lambda: via_indexctl(root, a.pattern, env),
                "rg": lambda: via_rg(root, a.pattern),
            }
            found = {name: fn() for name, fn in ways.items()}  # warm-up, and the answers
            print("matches: " + ", ".join("%s %d" % (n, len(v)) for n, v in found.items()))
            if len({tuple(v) for v in found.values()}) != 1:
                print("warning: the three answers differ (same files and lines expected)")
            times = {name: [] for name in ways}
            rnd = random.Random(a.seed)
            names = list(ways)
            for _ in range(a.rounds):
                rnd.shuffle(names)
                for name in names:
                    t = time.perf_counter()
                    ways[name]()
                    times[name].append(time.perf_counter() - t)
        print("%d rounds, interleaved; pattern %r" % (a.rounds, a.pattern))
        print("%-9s %10s %10s %10s" % ("", "median ms", "p10 ms", "p90 ms"))
        for name in ways:
            ts = sorted(times[name])
            q = statistics.quantiles(ts, n=10) if len(ts) >= 2 else [ts[0]] * 9
            print("%-9s %10.3f %10.3f %10.3f" % (name, 1000 * statistics.median(ts), 1000 * q[0], 1000 * q[-1]))
    finally:
        if private is not None:
            subprocess.run(["indexctl", "stop"], env=env, capture_output=True)
            shutil.rmtree(private, ignore_errors=True)


if __name__ == "__main__":
    main()
