"""A small workload for scripts/keyviz-browser-test: creates an instance and a
database on `rowtree serve` (SPANNER_EMULATOR_HOST) with the official Python
client, then until the wall clock passes a minute boundary (at least 10 s of
load) inserts users with sequential ids (a moving hot spot at the end of the
key space) and reads one hot user again and again, so the database's split
load history gets at least one minute row. Prints the database name."""

import os
import sys
import time

from google.cloud import spanner

PROJECT = os.environ.get("GOOGLE_CLOUD_PROJECT", "keyviz-test")


def main():
    client = spanner.Client(project=PROJECT)
    instance = client.instance(
        "keyviz",
        configuration_name=f"projects/{PROJECT}/instanceConfigs/emulator-config",
        display_name="keyviz",
        node_count=1,
    )
    instance.create().result(timeout=60)
    database = instance.database(
        "shop",
        ddl_statements=[
            "CREATE TABLE Users (UserId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (UserId)",
            "CREATE TABLE Events (UserId INT64 NOT NULL, EventId INT64 NOT NULL, Kind STRING(MAX))"
            " PRIMARY KEY (UserId, EventId), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        ],
    )
    database.create().result(timeout=60)
    start = time.time()
    # The first minute boundary at least 10 s away, plus time for the roll-up.
    boundary = (int(start + 10) // 60 + 1) * 60
    stop = boundary + 4
    next_id = 1
    batches = 0
    while time.time() < stop:
        with database.batch() as batch:
            batch.insert(
                "Users",
                ["UserId", "Name"],
                [(i, f"user <{i}>") for i in range(next_id, next_id + 20)],
            )
            batch.insert(
                "Events",
                ["UserId", "EventId", "Kind"],
                [(i, 1, "signup") for i in range(next_id, next_id + 20)],
            )
        next_id += 20
        with database.snapshot() as snap:
            list(snap.read("Users", ["UserId", "Name"], spanner.KeySet(keys=[[1]])))
        batches += 1
    print(
        f"workload: {next_id - 1} users in {batches} batches over {time.time() - start:.0f} s",
        file=sys.stderr,
    )
    print(database.name)


if __name__ == "__main__":
    main()
