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


class Patina:
    """The `patina` client of a daemon in `home`; without `model`, semantic search is off."""

    def __init__(self, bin_dir, home, model):
        self.exe = os.path.abspath(os.path.join(bin_dir, "patina"))
        self.env = dict(os.environ, PATINA_HOME=home, NO_COLOR="1")
        if not model:
            # No model: semantic search off (the daemon says so) and no embedding backlog.
            self.env["PATINA_MODEL_DIR"] = os.path.join(home, "no-model")

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

