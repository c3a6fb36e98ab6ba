from poetry.__version__ import __version__


def test_version() -> None:
    assert __version__
