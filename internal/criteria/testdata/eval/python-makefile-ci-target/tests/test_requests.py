import requests


def test_version():
    assert requests.__version__.count(".") == 2
