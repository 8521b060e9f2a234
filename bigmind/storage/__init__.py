"""The data layer: every SQL statement that names a memory table lives in this package.

One module per table or aggregate owns that table's SQL and applies the owner scope itself
(``user_id = ?`` for private rows): features above ask for named queries and never write
SQL. A test (tests/test_architecture.py) fails when SQL naming a memory table appears
anywhere else; the schema's migrations and the PostgreSQL copier are the exceptions.
"""
