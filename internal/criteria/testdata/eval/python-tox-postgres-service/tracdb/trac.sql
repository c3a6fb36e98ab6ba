-- Trac schema dump (trimmed)
CREATE TABLE ticket (id integer PRIMARY KEY);
