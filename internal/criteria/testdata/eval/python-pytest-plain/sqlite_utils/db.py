import sqlite3


class Database:
    def __init__(self, filename_or_conn=None, memory=False):
        self.conn = sqlite3.connect(":memory:" if memory else filename_or_conn)

    def table_names(self):
        return [r[0] for r in self.conn.execute("select name from sqlite_master where type = 'table'")]
