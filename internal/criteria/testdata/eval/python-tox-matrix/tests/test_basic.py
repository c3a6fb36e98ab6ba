import click


def test_version():
    assert click.__version__.startswith("8.")
