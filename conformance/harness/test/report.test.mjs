// Tests for report.mjs: how a scenario's checks become a verdict, the
// allowlist format, and the summary line.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import {
  allowedReason,
  classify,
  findChecks,
  parseAllowlist,
  parseRows,
  render,
  staleEntries,
  verdicts,
} from '../report.mjs';

const check = (id, status) => ({ id, status });

test('classify', async (t) => {
  const cases = [
    {
      name: 'all success',
      in: { mode: 'server', checks: [check('a', 'SUCCESS'), check('i', 'INFO')], exitCode: 0 },
      status: 'PASS',
    },
    {
      name: 'a failure',
      in: { mode: 'server', checks: [check('a', 'SUCCESS'), check('b', 'FAILURE')], exitCode: 1 },
      status: 'FAIL',
      note: /failed: b/,
    },
    {
      name: 'a warning, server exits 0',
      in: { mode: 'server', checks: [check('a', 'SUCCESS'), check('w', 'WARNING')], exitCode: 0 },
      status: 'WARN',
      note: /warnings: w/,
    },
    {
      name: 'a warning, client exits 1 for it',
      in: { mode: 'client', checks: [check('a', 'SUCCESS'), check('w', 'WARNING')], exitCode: 1 },
      status: 'WARN',
    },
    {
      name: 'only warnings',
      in: { mode: 'server', checks: [check('w', 'WARNING'), check('x', 'WARNING')], exitCode: 0 },
      status: 'WARN',
      note: /w,x/,
    },
    {
      name: 'only info',
      in: { mode: 'server', checks: [check('i', 'INFO')], exitCode: 0 },
      status: 'FAIL',
      note: /no successful check/,
    },
    {
      name: 'no checks.json',
      in: { mode: 'client', checks: undefined, exitCode: 1 },
      status: 'FAIL',
      note: /no checks.json, exit 1/,
    },
    {
      name: 'suite skipped the scenario',
      in: { mode: 'server', checks: undefined, exitCode: 0, log: "SKIPPED: scenario 'x' is not applicable" },
      status: 'FAIL',
      note: /skipped/,
    },
    {
      name: 'harness timeout',
      in: { mode: 'server', checks: [check('a', 'SUCCESS')], exitCode: 124 },
      status: 'FAIL',
      note: /timed out/,
    },
    {
      name: 'harness timeout, killed',
      in: { mode: 'server', checks: undefined, exitCode: 137 },
      status: 'FAIL',
      note: /timed out/,
    },
    {
      name: 'client timed out inside the suite',
      in: { mode: 'client', checks: [check('a', 'SUCCESS')], exitCode: 1, log: 'CLIENT TIMED OUT - Test incomplete' },
      status: 'FAIL',
      note: /client timed out/,
    },
    {
      name: 'client exited with an error',
      in: { mode: 'client', checks: [check('a', 'SUCCESS')], exitCode: 1, log: 'CLIENT EXITED WITH ERROR (code 2)' },
      status: 'FAIL',
      note: /client exited/,
    },
    {
      name: 'non-zero exit without a reason',
      in: { mode: 'server', checks: [check('a', 'SUCCESS')], exitCode: 1 },
      status: 'FAIL',
      note: /suite exited 1/,
    },
    {
      name: 'failure counted before warnings',
      in: { mode: 'server', checks: [check('w', 'WARNING'), check('f', 'FAILURE')], exitCode: 1 },
      status: 'FAIL',
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = classify(c.in);
      assert.equal(got.status, c.status, JSON.stringify(got));
      if (c.note) assert.match(got.note, c.note);
    });
  }
});

test('classify counts', () => {
  const got = classify({
    mode: 'server',
    checks: [check('a', 'SUCCESS'), check('b', 'SUCCESS'), check('w', 'WARNING'), check('i', 'INFO')],
    exitCode: 0,
  });
  assert.deepEqual([got.passed, got.failed, got.warnings], [2, 0, 1]);
});

test('parseAllowlist', async (t) => {
  await t.test('entries, comments and blank lines', () => {
    const { entries, errors } = parseAllowlist(
      '# comment\n\n0.1.16 server server-sse-polling the suite marks it pending\n* client sse-retry   timing on a loaded CI machine\n',
    );
    assert.deepEqual(errors, []);
    assert.equal(entries.length, 2);
    assert.deepEqual(
      { ...entries[0], line: undefined },
      { suite: '0.1.16', mode: 'server', scenario: 'server-sse-polling', reason: 'the suite marks it pending', line: undefined },
    );
    assert.equal(entries[1].reason, 'timing on a loaded CI machine');
    assert.equal(entries[1].line, 4);
  });
  const bad = [
    ['no reason', '0.1.16 server ping'],
    ['bad mode', '0.1.16 both ping because'],
    ['too short', 'ping'],
  ];
  for (const [name, line] of bad) {
    await t.test(name, () => {
      const { entries, errors } = parseAllowlist(line);
      assert.equal(entries.length, 0);
      assert.equal(errors.length, 1);
    });
  }
});

test('allowedReason matches suite, mode and scenario', () => {
  const { entries } = parseAllowlist('0.1.16 server a reason one\n* client b reason two\n');
  assert.equal(allowedReason(entries, '0.1.16', 'server', 'a'), 'reason one');
  assert.equal(allowedReason(entries, '0.2.0-alpha.12', 'server', 'a'), undefined);
  assert.equal(allowedReason(entries, '0.1.16', 'client', 'a'), undefined);
  assert.equal(allowedReason(entries, '0.2.0-alpha.12', 'client', 'b'), 'reason two');
});

function fixture() {
  const root = mkdtempSync(path.join(tmpdir(), 'report-test-'));
  const mk = (name, checks, log = '') => {
    const dir = path.join(root, name);
    if (checks) {
      const sub = path.join(dir, 'auth', `${name}-2026-01-01T00-00-00-000Z`);
      mkdirSync(sub, { recursive: true });
      writeFileSync(path.join(sub, 'checks.json'), JSON.stringify(checks));
    } else {
      mkdirSync(dir, { recursive: true });
    }
    const logFile = path.join(root, `${name}.log`);
    writeFileSync(logFile, log);
    return { dir, logFile };
  };
  return { root, mk };
}

test('findChecks looks below nested scenario directories', () => {
  const { mk } = fixture();
  const { dir } = mk('nested', [check('a', 'SUCCESS')]);
  assert.match(findChecks(dir), /auth\/nested-.*\/checks\.json$/);
  const empty = mk('empty', undefined);
  assert.equal(findChecks(empty.dir), undefined);
});

test('verdicts, render and stale entries', () => {
  const { mk } = fixture();
  const ok = mk('ok', [check('a', 'SUCCESS')]);
  const warnAllowed = mk('warn-allowed', [check('a', 'SUCCESS'), check('w', 'WARNING')]);
  const warnNot = mk('warn-not', [check('a', 'SUCCESS'), check('w', 'WARNING')]);
  const failed = mk('failed', [check('f', 'FAILURE')]);
  const rows = parseRows(
    [
      ['0.1.16', 'server', 'ok', 0, 1, ok.dir, ok.logFile],
      ['0.1.16', 'server', 'warn-allowed', 0, 2, warnAllowed.dir, warnAllowed.logFile],
      ['0.1.16', 'server', 'warn-not', 0, 3, warnNot.dir, warnNot.logFile],
      ['0.1.16', 'client', 'failed', 1, 4, failed.dir, failed.logFile],
    ]
      .map((r) => r.join('\t'))
      .join('\n'),
  );
  const { entries } = parseAllowlist('* server warn-allowed known suite quirk\n* server ok no longer needed\n');
  const results = verdicts(rows, entries);
  assert.deepEqual(
    results.map((r) => [r.scenario, r.ok]),
    [
      ['ok', true],
      ['warn-allowed', true],
      ['warn-not', false],
      ['failed', false],
    ],
  );
  assert.match(results[1].note, /allowed: known suite quirk/);
  assert.match(results[2].note, /not in allowlist/);
  assert.deepEqual(
    staleEntries(entries, results).map((e) => e.scenario),
    ['ok'],
  );
  const out = render(results).split('\n');
  assert.equal(out.at(-1), '2 passed, 2 failed');
  assert.match(out[0], /^SUITE\s+MODE\s+SCENARIO\s+RESULT/);
  assert.equal(out.length, 6);
  assert.match(out[2], /warn-allowed\s+pass\*/);
  assert.match(out[4], /failed\s+FAIL/);
});

test('render of nothing still ends with the summary line', () => {
  assert.equal(render([]).split('\n').at(-1), '0 passed, 0 failed');
});

test('a harness error row is a failure with its message', () => {
  const rows = parseRows('-\tserver\t(build ./conformance/server)\t2\t0\t-\t-\tcould not build the server\n');
  assert.equal(rows[0].error, 'could not build the server');
  const results = verdicts(rows, []);
  assert.equal(results[0].ok, false);
  assert.equal(results[0].note, 'could not build the server');
  assert.equal(render(results).split('\n').at(-1), '0 passed, 1 failed');
});
