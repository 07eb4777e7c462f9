// End-to-end example: the official Node.js Spanner client against `rowtree serve`.
//
//   (cd examples/node && npm ci)
//   SPANNER_EMULATOR_HOST=127.0.0.1:9010 node examples/node/quickstart.js
//
// Uses @google-cloud/spanner 8.x (pinned in package.json). In emulator mode
// (SPANNER_EMULATOR_HOST set) the client uses anonymous credentials, so only a
// project id is needed.
//
// It creates an instance and a database with the hash-sharded schema from
// examples/seeds/hash-sharded.sql (a shard id computed by a stored generated
// column leads the key, so writes in timestamp order spread over the key space
// instead of hotspotting its end), writes with mutations and DML in one
// read-write transaction, queries with parameters, reads at an earlier
// timestamp to see the state before a later write, and drops everything again.
// Every printed result is checked; a wrong one exits non-zero.
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {Spanner} = require('@google-cloud/spanner');

const PROJECT = process.env.GOOGLE_CLOUD_PROJECT || 'rowtree-example';
const SEED = path.join(__dirname, '..', 'seeds', 'hash-sharded.sql');

// The seed file's statements, without `--` comments and the trailing `;`.
function seedDdl(file) {
  const text = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map(line => line.split('--')[0])
    .join('\n');
  return text
    .split(';')
    .map(s => s.trim())
    .filter(s => s.length > 0);
}

async function main() {
  assert.ok(process.env.SPANNER_EMULATOR_HOST, 'SPANNER_EMULATOR_HOST is not set');
  const spanner = new Spanner({projectId: PROJECT});
  const suffix = crypto.randomBytes(4).toString('hex');
  const [instance, instanceOp] = await spanner.createInstance(`quickstart-${suffix}`, {
    config: 'emulator-config',
    displayName: 'Rowtree quickstart',
    nodes: 1,
  });
  await instanceOp.promise();
  console.log(`created instance ${instance.formattedName_}`);
  try {
    const ddl = seedDdl(SEED);
    const [database, dbOp] = await instance.createDatabase(`quickstart-${suffix}`, {schema: ddl});
    await dbOp.promise();
    console.log(`created database ${database.formattedName_} with ${ddl.length} statements from ${path.basename(SEED)}`);
    try {
      await run(database);
    } finally {
      await database.delete(); // closes the session pool, then drops the database
      console.log('dropped database');
    }
  } finally {
    await instance.delete();
    console.log('deleted instance');
    spanner.close();
  }
}

async function run(database) {
  const t0 = Date.parse('2024-05-01T12:00:00Z');
  const visits = [];
  for (let i = 0; i < 6; i++) {
    visits.push({LastAccess: new Date(t0 + i * 60_000), UserId: 100 + (i % 3)});
  }

  // One read-write transaction: mutations for the table whose ShardId the
  // database computes (a generated column is never written), DML for the
  // table whose ShardId the application computes with the same expression.
  const {inserted, firstCommit} = await database.runTransactionAsync(async tx => {
    tx.insert('UserAccessLogs', visits);
    let count = 0;
    for (const v of visits) {
      const [rowCount] = await tx.runUpdate({
        sql:
          'INSERT INTO UserAccessLogsManualShard (ShardId, LastAccess, UserId) ' +
          'VALUES (MOD(FARM_FINGERPRINT(CAST(@ts AS STRING)), 2048), @ts, @user)',
        params: {ts: v.LastAccess, user: v.UserId},
        types: {ts: 'timestamp', user: 'int64'},
      });
      count += rowCount;
    }
    await tx.commit();
    return {inserted: count, firstCommit: tx.commitTimestamp};
  });
  console.log(
    `transaction committed at ${firstCommit.toISOString()}: ` +
      `${visits.length} rows by mutation, ${inserted} rows by DML`
  );
  assert.equal(inserted, visits.length, 'rows inserted by DML');

  // A parameterized query: one user's visits, newest first.
  const [rows] = await database.run({
    sql:
      'SELECT ShardId, LastAccess, UserId FROM UserAccessLogs ' +
      'WHERE UserId = @user ORDER BY LastAccess DESC',
    params: {user: 101},
    types: {user: 'int64'},
    json: true,
  });
  for (const r of rows) {
    console.log(`  user ${r.UserId} at ${r.LastAccess.toISOString()} -> shard ${r.ShardId}`);
  }
  const expected = visits
    .filter(v => v.UserId === 101)
    .map(v => v.LastAccess.getTime())
    .sort((a, b) => b - a);
  assert.deepEqual(rows.map(r => r.LastAccess.getTime()), expected, "user 101's visits");
  // MOD keeps the sign of the dividend, so shard ids lie in (-2048, 2048).
  assert.ok(rows.every(r => Math.abs(r.ShardId) < 2048), 'shard ids out of range');
  assert.ok(new Set(rows.map(r => r.ShardId)).size > 1, 'all rows landed on one shard');

  // The generated ShardId equals the one the DML computed, row for row.
  const [[{matched}]] = await database.run({
    sql:
      'SELECT COUNT(*) AS matched FROM UserAccessLogs a JOIN UserAccessLogsManualShard m ' +
      'ON a.ShardId = m.ShardId AND a.LastAccess = m.LastAccess AND a.UserId = m.UserId ' +
      'WHERE a.LastAccess >= @since',
    params: {since: new Date(t0)},
    types: {since: 'timestamp'},
    json: true,
  });
  console.log(`generated and application-computed shard ids agree on ${matched} rows`);
  assert.equal(matched, visits.length, 'rows whose shard ids agree');

  // A later write, then a stale read at the first commit's timestamp.
  const laterCommit = await database.runTransactionAsync(async tx => {
    tx.insert('UserAccessLogs', {LastAccess: new Date(t0 + 3_600_000), UserId: 200});
    await tx.commit();
    return tx.commitTimestamp;
  });
  console.log(`later write committed at ${laterCommit.toISOString()}`);
  assert.ok(laterCommit.getFullTime() > firstCommit.getFullTime(), 'the later commit is after the first');

  const countSql = 'SELECT COUNT(*) AS n FROM UserAccessLogs';
  const [snapshot] = await database.getSnapshot({readTimestamp: firstCommit});
  let before;
  try {
    [[{n: before}]] = await snapshot.run({sql: countSql, json: true});
  } finally {
    snapshot.end();
  }
  const [[{n: now}]] = await database.run({sql: countSql, json: true});
  console.log(`rows at ${firstCommit.toISOString()} (stale read): ${before}; rows now (strong read): ${now}`);
  assert.equal(before, visits.length, 'rows seen by the stale read');
  assert.equal(now, visits.length + 1, 'rows seen by the strong read');
}

main().then(
  () => console.log('node example: all checks passed'),
  err => {
    console.error('FAILED:', err);
    process.exit(1);
  }
);
