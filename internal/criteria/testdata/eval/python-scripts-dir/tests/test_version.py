import httpx


def test_version() -> None:
    assert httpx.__version__ == "0.28.1"
