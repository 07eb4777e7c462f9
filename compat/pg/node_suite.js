// node-postgres (`pg`) against `rowtree serve --pg-port` (run by
// scripts/pg-wire-tests). node-postgres sends every parameter untyped and
// as text, so this exercises the server's parameter type inference.
//
//   node node_suite.js PORT DATABASE
'use strict';
const { Client } = require('pg');

const [port, database] = process.argv.slice(2);
const tests = [];
const test = (name, f) => tests.push([name, f]);
const eq = (a, b, what) => {
  const x = JSON.stringify(a), y = JSON.stringify(b);
  if (x !== y) throw new Error(`${what || 'values'}: ${x} != ${y}`);
};

async function client() {
  const c = new Client({ host: '127.0.0.1', port: Number(port), database, user: 'node' });
  await c.connect();
  return c;
}

test('schema, untyped parameters, types of results', async (c) => {
  await c.query('DROP TABLE IF EXISTS node_items');
  await c.query(`CREATE TABLE node_items (id bigint PRIMARY KEY, name varchar, price numeric,
                 ok bool, at timestamptz, born date, score float8)`);
  const r = await c.query(
    'INSERT INTO node_items (id, name, price, ok, at, born, score) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [1, 'pen', '2.50', true, new Date('2024-01-02T03:04:05Z'), '2000-02-29', 0.25]);
  eq(r.rowCount, 1, 'rowCount');
  await c.query('INSERT INTO node_items (id, name) VALUES ($1, $2), ($3, $4)', [2, '42', 3, 'x']);
  const q = await c.query('SELECT id, name, price, ok, at, score FROM node_items WHERE id = $1', [1]);
  eq(q.rows[0].id, '1', 'int8 comes back as a string');
  eq(q.rows[0].name, 'pen');
  eq(q.rows[0].price, '2.5');
  eq(q.rows[0].ok, true);
  eq(q.rows[0].at.toISOString(), '2024-01-02T03:04:05.000Z');
  eq(q.rows[0].score, 0.25);
  eq(q.fields.map((f) => f.dataTypeID), [20, 1043, 1700, 16, 1184, 701], 'type OIDs');
  const s = await c.query('SELECT id FROM node_items WHERE name = $1', ['42']);
  eq(s.rows, [{ id: '2' }], 'a digit string for a string column stays a string');
});

test('transactions', async (c) => {
  await c.query('BEGIN');
  await c.query('INSERT INTO node_items (id, name) VALUES ($1, $2)', [10, 'gone']);
  await c.query('ROLLBACK');
  eq((await c.query('SELECT count(*) AS n FROM node_items WHERE id = 10')).rows[0].n, '0');
  await c.query('BEGIN');
  await c.query('INSERT INTO node_items (id, name) VALUES ($1, $2)', [11, 'kept']);
  await c.query('COMMIT');
  eq((await c.query('SELECT name FROM node_items WHERE id = $1', [11])).rows[0].name, 'kept');
});

test('errors carry SQLSTATE, failed blocks', async (c) => {
  let e = await c.query('SELECT * FROM nowhere').catch((x) => x);
  eq(e.code, '42P01', 'undefined table');
  e = await c.query('INSERT INTO node_items (id) VALUES (1)').catch((x) => x);
  eq(e.code, '23505', 'unique violation');
  await c.query('BEGIN');
  await c.query('SELEC').catch(() => {});
  e = await c.query('SELECT 1').catch((x) => x);
  eq(e.code, '25P02', 'failed block');
  await c.query('ROLLBACK');
  // Integer literals are bigint (int8), which node-postgres returns as strings.
  eq((await c.query('SELECT 1 AS one')).rows, [{ one: '1' }]);
});

test('named prepared statements', async (c) => {
  for (let i = 20; i < 25; i++) {
    await c.query({ name: 'ins', text: 'INSERT INTO node_items (id, name) VALUES ($1, $2)', values: [i, `n${i}`] });
  }
  const r = await c.query({ name: 'sel', text: 'SELECT count(*) AS n FROM node_items WHERE id >= $1', values: [20] });
  eq(r.rows[0].n, '5');
});

(async () => {
  let failed = 0;
  for (const [name, f] of tests) {
    const c = await client();
    try {
      await f(c);
      console.log(`ok   ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.stack || e}`);
    } finally {
      await c.end();
    }
  }
  console.log(`node-postgres: ${tests.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
