"""End-to-end example: the official Python Spanner client against `rowtree serve`.

    SPANNER_EMULATOR_HOST=127.0.0.1:9010 python examples/python/quickstart.py

Needs google-cloud-spanner 3.71.0. In emulator mode (SPANNER_EMULATOR_HOST set)
the client uses anonymous credentials, so only a project id is needed.

It creates an instance and a database with the hash-sharded schema from
examples/seeds/hash-sharded.sql (a shard id computed by a stored generated
column leads the key, so writes in timestamp order spread over the key space
instead of hotspotting its end), writes with mutations and DML in one
read-write transaction, queries with parameters, reads at an earlier timestamp
to see the state before a later write, and drops everything again. Every
printed result is checked; a wrong one exits non-zero.
"""

import datetime
import os
import pathlib
import sys
import uuid

from google.cloud import spanner
from google.cloud.spanner_v1 import param_types

PROJECT = os.environ.get("GOOGLE_CLOUD_PROJECT", "rowtree-example")
SEED = pathlib.Path(__file__).resolve().parent.parent / "seeds" / "hash-sharded.sql"
UTC = datetime.timezone.utc


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def seed_ddl(path):
    """The seed file's statements, without `--` comments and the trailing `;`."""
    lines = [line.split("--", 1)[0] for line in path.read_text().splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def main():
    check(os.environ.get("SPANNER_EMULATOR_HOST"), "SPANNER_EMULATOR_HOST is not set")
    client = spanner.Client(project=PROJECT)
    suffix = uuid.uuid4().hex[:8]
    instance = client.instance(
        f"quickstart-{suffix}",
        configuration_name=f"projects/{PROJECT}/instanceConfigs/emulator-config",
        display_name="Rowtree quickstart",
        node_count=1,
    )
    instance.create().result(timeout=60)
    print(f"created instance {instance.name}")
    try:
        ddl = seed_ddl(SEED)
        database = instance.database(f"quickstart-{suffix}", ddl_statements=ddl)
        database.create().result(timeout=60)
        print(f"created database {database.name} with {len(ddl)} statements from {SEED.name}")
        try:
            run(database)
        finally:
            database.drop()
            print("dropped database")
    finally:
        instance.delete()
        print("deleted instance")


def run(database):
    t0 = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    visits = [(t0 + datetime.timedelta(minutes=i), 100 + i % 3) for i in range(6)]

    # One read-write transaction: mutations for the table whose ShardId the
    # database computes (a generated column is never written), DML for the
    # table whose ShardId the application computes with the same expression.
    holder = {}

    def write(txn):
        holder["txn"] = txn
        txn.insert("UserAccessLogs", columns=("LastAccess", "UserId"), values=visits)
        count = 0
        for ts, user in visits:
            count += txn.execute_update(
                "INSERT INTO UserAccessLogsManualShard (ShardId, LastAccess, UserId) "
                "VALUES (MOD(FARM_FINGERPRINT(CAST(@ts AS STRING)), 2048), @ts, @user)",
                params={"ts": ts, "user": user},
                param_types={"ts": param_types.TIMESTAMP, "user": param_types.INT64},
            )
        return count

    inserted = database.run_in_transaction(write)
    first_commit = holder["txn"].committed
    print(f"transaction committed at {first_commit.isoformat()}: "
          f"{len(visits)} rows by mutation, {inserted} rows by DML")
    check(inserted == len(visits), f"DML inserted {inserted} rows, expected {len(visits)}")

    # A parameterized query: one user's visits, newest first.
    with database.snapshot() as snap:
        rows = list(snap.execute_sql(
            "SELECT ShardId, LastAccess, UserId FROM UserAccessLogs "
            "WHERE UserId = @user ORDER BY LastAccess DESC",
            params={"user": 101},
            param_types={"user": param_types.INT64},
        ))
    for shard, ts, user in rows:
        print(f"  user {user} at {ts.isoformat()} -> shard {shard}")
    expected = sorted((ts for ts, u in visits if u == 101), reverse=True)
    check([r[1] for r in rows] == expected, f"user 101's visits: got {rows}")
    # MOD keeps the sign of the dividend, so shard ids lie in (-2048, 2048).
    check(all(-2048 < r[0] < 2048 for r in rows), f"shard ids out of range: {rows}")
    check(len({r[0] for r in rows}) > 1, f"all rows landed on one shard: {rows}")

    # The generated ShardId equals the one the DML computed, row for row.
    with database.snapshot() as snap:
        (matched,), = list(snap.execute_sql(
            "SELECT COUNT(*) FROM UserAccessLogs a JOIN UserAccessLogsManualShard m "
            "ON a.ShardId = m.ShardId AND a.LastAccess = m.LastAccess AND a.UserId = m.UserId "
            "WHERE a.LastAccess >= @since",
            params={"since": t0},
            param_types={"since": param_types.TIMESTAMP},
        ))
    print(f"generated and application-computed shard ids agree on {matched} rows")
    check(matched == len(visits), f"{matched} matching rows, expected {len(visits)}")

    # A later write, then a stale read at the first commit's timestamp.
    later = t0 + datetime.timedelta(hours=1)
    with database.batch() as batch:
        batch.insert("UserAccessLogs", columns=("LastAccess", "UserId"), values=[(later, 200)])
    print(f"later write committed at {batch.committed.isoformat()}")
    check(batch.committed > first_commit, "the later commit is not after the first")

    count_sql = "SELECT COUNT(*) FROM UserAccessLogs"
    with database.snapshot(read_timestamp=first_commit) as snap:
        (before,), = list(snap.execute_sql(count_sql))
    with database.snapshot() as snap:
        (now,), = list(snap.execute_sql(count_sql))
    print(f"rows at {first_commit.isoformat()} (stale read): {before}; rows now (strong read): {now}")
    check(before == len(visits), f"stale read saw {before} rows, expected {len(visits)}")
    check(now == len(visits) + 1, f"strong read saw {now} rows, expected {len(visits) + 1}")


if __name__ == "__main__":
    main()
    print("python example: all checks passed")
