"""What the bench scripts share (stdlib only)."""
import os
from pathlib import Path


def models_dir():
    """Where `scripts/setup-model` installs models: $PATINA_MODEL_DIR's parent, else
    $XDG_DATA_HOME/patina/models (~/.local/share/patina/models)."""
    d = os.environ.get("PATINA_MODEL_DIR")
    if d:
        return Path(d).parent
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "patina" / "models"
