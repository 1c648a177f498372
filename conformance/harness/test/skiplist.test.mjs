// Checks skiplist.txt, the client scenarios scripts/conformance.sh does not
// run: every line has the allowlist's shape and a reason, names a client
// scenario, and no authorization scenario is ever skipped.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllowlist } from '../report.mjs';

const text = readFileSync(new URL('../skiplist.txt', import.meta.url), 'utf8');

test('skiplist.txt parses, every line with a reason', () => {
  const { entries, errors } = parseAllowlist(text);
  assert.deepEqual(errors, []);
  assert.ok(entries.length > 0, 'no entries: delete the file from the script instead');
  for (const e of entries) {
    assert.equal(e.mode, 'client', `line ${e.line}: only client scenarios are skipped`);
    assert.ok(['*', '0.1.16', '0.2.0-alpha.12'].includes(e.suite), `line ${e.line}: unknown suite ${e.suite}`);
    assert.ok(e.reason.length >= 10, `line ${e.line}: reason too short`);
  }
});

test('skiplist.txt skips no authorization scenario', () => {
  const { entries } = parseAllowlist(text);
  const auth = entries.filter((e) => e.scenario.startsWith('auth/'));
  assert.deepEqual(auth.map((e) => e.scenario), []);
});

test('skiplist.txt names each scenario once per suite', () => {
  const { entries } = parseAllowlist(text);
  const seen = new Set();
  for (const e of entries) {
    const k = `${e.suite} ${e.scenario}`;
    assert.ok(!seen.has(k), `line ${e.line}: ${k} listed twice`);
    seen.add(k);
  }
});
