from hatch.cli import main


def test_main_exit_code():
    assert main() == 0
