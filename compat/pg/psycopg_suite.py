"""psycopg 3 against `rowtree serve --pg-port` (run by scripts/pg-wire-tests).

Each test is a function; the script runs them all, prints one line per test
and the closing count, and exits non-zero if any failed. Usage:

    python psycopg_suite.py "host=127.0.0.1 port=P dbname=D user=u"
"""

import datetime
import decimal
import sys
import traceback
import uuid

import psycopg
from psycopg import errors
from psycopg.types.json import Jsonb

DSN = sys.argv[1]
TESTS = []


def test(f):
    TESTS.append(f)
    return f


def connect(**kw):
    return psycopg.connect(DSN, **kw)


@test
def schema_and_parameters_of_several_types():
    with connect(autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS py_values")
        c.execute(
            """CREATE TABLE py_values (
                 id bigint PRIMARY KEY, name varchar, score float8, small real,
                 amount numeric, flag bool, born date, seen timestamptz,
                 doc jsonb, token uuid, blob bytea, tags text[])"""
        )
        when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.timezone.utc)
        tok = uuid.UUID("12345678-1234-5678-1234-567812345678")
        c.execute(
            "INSERT INTO py_values (id, name, score, small, amount, flag, born, seen, doc, token, blob, tags)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (1, "Ada", 1.5, 2.5, decimal.Decimal("12.345"), True, datetime.date(1815, 12, 10),
             when, Jsonb({"a": [1, 2]}), tok, b"\x00\xff", ["x", "y z"]),
        )
        row = c.execute("SELECT * FROM py_values WHERE id = %s", (1,)).fetchone()
        assert row == (1, "Ada", 1.5, 2.5, decimal.Decimal("12.345"), True,
                       datetime.date(1815, 12, 10), when, {"a": [1, 2]}, tok, b"\x00\xff",
                       ["x", "y z"]), row
        # A string parameter compared with a string column, an int with an int.
        assert c.execute("SELECT id FROM py_values WHERE name = %s", ("Ada",)).fetchall() == [(1,)]
        assert c.execute("SELECT count(*) FROM py_values WHERE id > %s", (0,)).fetchone() == (1,)
        # NULL parameters.
        c.execute("INSERT INTO py_values (id, name) VALUES (%s, %s)", (2, None))
        assert c.execute("SELECT name FROM py_values WHERE id = 2").fetchone() == (None,)


@test
def binary_results():
    with connect(autocommit=True) as c:
        cur = c.cursor(binary=True)
        cur.execute("SELECT id, name, score, amount, born, seen FROM py_values WHERE id = %s", (1,))
        row = cur.fetchone()
        assert row[0] == 1 and row[1] == "Ada" and row[2] == 1.5, row
        assert row[3] == decimal.Decimal("12.345"), row
        assert row[4] == datetime.date(1815, 12, 10), row


@test
def transaction_commit_and_rollback():
    with connect() as c:
        c.execute("INSERT INTO py_values (id, name) VALUES (10, 'in txn')")
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        c.rollback()
        assert c.execute("SELECT count(*) FROM py_values WHERE id = 10").fetchone() == (0,)
        c.rollback()
        with c.transaction():
            c.execute("INSERT INTO py_values (id, name) VALUES (11, 'kept')")
        assert c.execute("SELECT name FROM py_values WHERE id = 11").fetchone() == ("kept",)


@test
def errors_carry_sqlstate():
    with connect(autocommit=True) as c:
        try:
            c.execute("SELEC 1")
            raise AssertionError("no error")
        except errors.SyntaxError as e:
            assert e.sqlstate == "42601", e.sqlstate
        try:
            c.execute("SELECT * FROM no_such_table")
            raise AssertionError("no error")
        except errors.UndefinedTable as e:
            assert e.sqlstate == "42P01"
        try:
            c.execute("INSERT INTO py_values (id, name) VALUES (1, 'again')")
            raise AssertionError("no error")
        except errors.UniqueViolation as e:
            assert e.sqlstate == "23505"


@test
def failed_block_until_rollback():
    with connect() as c:
        c.execute("SELECT 1")
        try:
            c.execute("SELECT * FROM no_such_table")
        except errors.UndefinedTable:
            pass
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        try:
            c.execute("SELECT 1")
            raise AssertionError("no error")
        except errors.InFailedSqlTransaction as e:
            assert e.sqlstate == "25P02"
        c.rollback()
        assert c.execute("SELECT 1").fetchone() == (1,)


@test
def prepared_statements():
    with connect(autocommit=True, prepare_threshold=0) as c:
        for i in range(20, 30):
            c.execute("INSERT INTO py_values (id, name, score) VALUES (%s, %s, %s)",
                      (i, f"n{i}", i / 2))
        rows = c.execute("SELECT id, score FROM py_values WHERE id >= %s AND id < %s ORDER BY id",
                         (20, 25)).fetchall()
        assert rows == [(20, 10.0), (21, 10.5), (22, 11.0), (23, 11.5), (24, 12.0)], rows
        cur = c.execute("UPDATE py_values SET name = %s WHERE id >= %s", ("u", 20))
        assert cur.rowcount == 10, cur.rowcount


@test
def read_only_transaction():
    with connect() as c:
        c.execute("SET TRANSACTION READ ONLY")
        assert c.execute("SELECT count(*) FROM py_values").fetchone()[0] >= 1
        try:
            c.execute("DELETE FROM py_values")
            raise AssertionError("no error")
        except errors.ReadOnlySqlTransaction as e:
            assert e.sqlstate == "25006"
        c.rollback()


@test
def returning_and_server_settings():
    with connect(autocommit=True) as c:
        row = c.execute("INSERT INTO py_values (id, name) VALUES (%s, %s) RETURNING id, name",
                        (40, "r")).fetchone()
        assert row == (40, "r"), row
        assert c.execute("SHOW server_version").fetchone()[0].startswith("15")
        c.execute("SET application_name = 'suite'")
        assert c.execute("SHOW application_name").fetchone() == ("suite",)
        assert c.info.parameter_status("application_name") == "suite"


def main():
    failed = 0
    for t in TESTS:
        try:
            t()
            print(f"ok   {t.__name__}")
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}")
            traceback.print_exc()
    print(f"psycopg: {len(TESTS) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
