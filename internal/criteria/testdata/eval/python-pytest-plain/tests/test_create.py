from sqlite_utils import Database


def test_table_names_empty():
    assert Database(memory=True).table_names() == []
