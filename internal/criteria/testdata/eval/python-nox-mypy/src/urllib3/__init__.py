"""Python HTTP library with thread-safe connection pooling."""

__version__ = "2.3.0"
