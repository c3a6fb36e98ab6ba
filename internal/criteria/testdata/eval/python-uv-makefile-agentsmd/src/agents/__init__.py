"""OpenAI Agents SDK."""

__all__ = ["Agent"]


class Agent:
    def __init__(self, name: str) -> None:
        self.name = name
