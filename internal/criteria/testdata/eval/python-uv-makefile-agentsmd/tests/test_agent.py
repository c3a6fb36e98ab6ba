from agents import Agent


def test_agent_name() -> None:
    assert Agent(name="triage").name == "triage"
