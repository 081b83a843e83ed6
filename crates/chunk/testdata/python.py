"""Greeting helpers."""
import functools


class Greeter(Base):
    """Greets people."""

    greeting = "hello"

    def __init__(self, name):
        self.name = name

    # The full greeting.
    @property
    def message(self):
        return f"{self.greeting}, {self.name}"


@functools.cache
def shout(text):
    def inner():
        pass
    return text.upper()


if __name__ == "__main__":
    print(shout("hi"))
