"""What the bench scripts share (stdlib only)."""
import json
import os
import subprocess
from pathlib import Path


def models_dir():
    """Where `scripts/setup-model` installs models: $PATINA_MODEL_DIR's parent, else
    $XDG_DATA_HOME/patina/models (~/.local/share/patina/models)."""
    d = os.environ.get("PATINA_MODEL_DIR")
    if d:
        return Path(d).parent
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "patina" / "models"


def patina_env(home, model=True, **extra):
    """The environment of a `patina` client of the daemon in `home` (colour off); without `model`,
    semantic search is off (the daemon says so) and no embedding backlog builds. `extra` adds or
    overrides variables (`PATINA_DAEMON_BIN=…`)."""
    env = dict(os.environ, PATINA_HOME=str(home), NO_COLOR="1")
    if not model:
        env["PATINA_MODEL_DIR"] = os.path.join(str(home), "no-model")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def pct(values, q):
    """The `q` quantile of `values` (nearest rank; NaN when there are none): 0.5 is the median."""
    s = sorted(values)
    return s[min(len(s) - 1, round((len(s) - 1) * q))] if s else float("nan")


def refs_at(patina, root, qualified, path, line):
    """`patina refs` of `qualified` in the repository at `root`, kept when they resolve to the
    definition spanning `path:line`: the set of (path, line) reference sites, the definition's own
    line left out."""
    res = subprocess.run([str(patina), "refs", "--json", "--repo", str(root), qualified],
                         capture_output=True, text=True, cwd=root)
    if res.returncode not in (0, 1) or not res.stdout.strip():
        return set()
    out = set()
    for s in json.loads(res.stdout):
        tpath, span = s["target"].rsplit(":", 1)
        start, end = (int(x) for x in span.split("-"))
        if tpath == path and start <= line <= end and not (s["path"] == path and s["line"] == line):
            out.add((s["path"], s["line"]))
    return out


class Patina:
    """The `patina` client of a daemon in `home`; without `model`, semantic search is off."""

    def __init__(self, bin_dir, home, model):
        self.exe = os.path.abspath(os.path.join(bin_dir, "patina"))
        self.env = patina_env(home, model)

    def run(self, *args, cwd=None, check=True):
        return subprocess.run([self.exe, *args], env=self.env, cwd=cwd, capture_output=True,
                              text=True, check=check)

    def status(self):
        return json.loads(self.run("status", "--json").stdout)


def proc_status_bytes(pid, key):
    """A `/proc/PID/status` figure in bytes (`VmRSS`, `VmHWM`, …); None when the process or the
    key is not there."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss_of(pid):
    """VmRSS of a process in bytes (0 when it is gone)."""
    return proc_status_bytes(pid, "VmRSS") or 0


def model_dir():
    """The embedding model `scripts/setup-model` installed: $PATINA_MODEL_DIR, else under
    `models_dir()`."""
    return Path(os.environ.get("PATINA_MODEL_DIR") or models_dir() / "all-MiniLM-L6-v2")

