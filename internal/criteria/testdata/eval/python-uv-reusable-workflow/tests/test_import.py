def test_import():
    import mcp

    assert mcp.__doc__
