import packaging


def test_version_string():
    assert packaging.__version__
