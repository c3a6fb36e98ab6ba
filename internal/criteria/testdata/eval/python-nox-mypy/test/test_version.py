import urllib3


def test_version() -> None:
    assert urllib3.__version__.startswith("2.")
