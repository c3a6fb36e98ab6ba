def test_health() -> None:
    assert True
