import os
from pkg.util import helper as h
from .models import Model, Mixin


class App(Model, Mixin, metaclass=Meta):
    """An app."""
    def run(self, path):
        data = h(path)
        self.validate(data)
        return os.path.join(path, "x")
