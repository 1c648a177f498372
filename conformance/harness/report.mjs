// report.mjs turns the conformance suite's own result files into one verdict
// per scenario, prints them as a table, and ends with the line
// "N passed, M failed".
//
// Usage: node report.mjs ROWS.tsv ALLOWLIST
//
// ROWS.tsv has one line per scenario run, tab separated:
//   suite  mode  scenario  exitCode  seconds  resultDir  logFile  [error]
// where resultDir is the directory given to the suite with -o (it holds
// <name>-<timestamp>/checks.json) and logFile holds the suite's stdout and
// stderr. exitCode 124 or 137 means the harness's own timeout fired. A row
// with an error column is a step of the harness that failed (building or
// starting our program): it is a failure with that error as its note.
//
// The exit status is 0 when every scenario passed, 1 otherwise, 2 on bad input.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// parseAllowlist reads the warnings allowlist. Each entry is one line:
//   SUITE MODE SCENARIO REASON...
// SUITE is a suite version (0.1.16, 0.2.0-alpha.12) or *, MODE is server or
// client. Blank lines and lines starting with # are ignored. A line without a
// reason is an error: every allowed warning must say why.
export function parseAllowlist(text) {
  const entries = [];
  const errors = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(\S+)\s+(\S+)\s+(\S+)\s+(\S.*)$/.exec(line);
    if (!m) {
      errors.push(`line ${i + 1}: want "SUITE MODE SCENARIO REASON", got ${JSON.stringify(line)}`);
      return;
    }
    const [, suite, mode, scenario, reason] = m;
    if (mode !== 'server' && mode !== 'client') {
      errors.push(`line ${i + 1}: mode must be server or client, got ${mode}`);
      return;
    }
    entries.push({ suite, mode, scenario, reason, line: i + 1 });
  });
  return { entries, errors };
}

// allowedReason returns the allowlist reason for warnings in this scenario,
// or undefined when its warnings are not allowed.
export function allowedReason(entries, suite, mode, scenario) {
  const e = entries.find(
    (x) => (x.suite === '*' || x.suite === suite) && x.mode === mode && x.scenario === scenario,
  );
  return e && e.reason;
}

// findChecks returns the path of the checks.json the suite wrote under dir,
// or undefined. The suite writes dir/<prefix><scenario>-<timestamp>/checks.json
// where scenario may itself contain a slash (auth/...).
export function findChecks(dir) {
  let found;
  const walk = (d, depth) => {
    if (found || depth > 4) return;
    let names;
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names.sort()) {
      const p = path.join(d, n);
      if (n === 'checks.json') {
        found = p;
        return;
      }
      if (statSync(p).isDirectory()) walk(p, depth + 1);
    }
  };
  walk(dir, 0);
  return found;
}

const TIMEOUT_CODES = new Set([124, 137]);

// classify decides one scenario's verdict from the suite's checks (the parsed
// checks.json, or undefined when there was none), the suite's exit code and
// its console output. The result's status is PASS, WARN or FAIL.
//
// FAIL: the harness timeout fired; no checks.json; a FAILURE check; the suite
// reported that the client timed out or exited with an error; the suite
// exited non-zero with no warning to explain it; neither a SUCCESS nor a
// WARNING check (only INFO: nothing was verified).
// WARN: none of those, but at least one WARNING check.
export function classify({ mode, checks, exitCode, log = '' }) {
  const count = (s) => (checks || []).filter((c) => c.status === s);
  const failures = count('FAILURE');
  const warnings = count('WARNING');
  const successes = count('SUCCESS');
  const base = { passed: successes.length, failed: failures.length, warnings: warnings.length };
  const ids = (list) => [...new Set(list.map((c) => c.id))].join(',');

  if (TIMEOUT_CODES.has(exitCode)) return { ...base, status: 'FAIL', note: 'timed out (harness limit)' };
  if (!checks) {
    const skipped = /SKIPPED: scenario/.test(log) ? ' (suite skipped it)' : '';
    return { ...base, status: 'FAIL', note: `no checks.json, exit ${exitCode}${skipped}` };
  }
  if (failures.length > 0) return { ...base, status: 'FAIL', note: `failed: ${ids(failures)}` };
  if (mode === 'client' && /CLIENT TIMED OUT/.test(log)) {
    return { ...base, status: 'FAIL', note: 'client timed out (suite limit)' };
  }
  if (mode === 'client' && /CLIENT EXITED WITH ERROR/.test(log)) {
    return { ...base, status: 'FAIL', note: 'client exited with an error' };
  }
  if (exitCode !== 0 && warnings.length === 0) {
    return { ...base, status: 'FAIL', note: `suite exited ${exitCode}` };
  }
  if (warnings.length > 0) return { ...base, status: 'WARN', note: `warnings: ${ids(warnings)}` };
  if (successes.length === 0) return { ...base, status: 'FAIL', note: 'no successful check' };
  return { ...base, status: 'PASS', note: '' };
}

// verdicts applies classify and the allowlist to every row.
export function verdicts(rows, allow, readChecks = readChecksFile, readLog = readText) {
  return rows.map((r) => {
    if (r.error) {
      return { ...r, status: 'FAIL', passed: 0, failed: 0, warnings: 0, ok: false, note: r.error };
    }
    const checksPath = findChecks(r.resultDir);
    const checks = checksPath ? readChecks(checksPath) : undefined;
    const v = classify({ mode: r.mode, checks, exitCode: r.exitCode, log: readLog(r.logFile) });
    let final = v.status === 'PASS';
    let note = v.note;
    if (v.status === 'WARN') {
      const reason = allowedReason(allow, r.suite, r.mode, r.scenario);
      final = reason !== undefined;
      note = final ? `${note} (allowed: ${reason})` : `${note} (not in allowlist)`;
    }
    return { ...r, ...v, ok: final, note, checksPath };
  });
}

// staleEntries lists allowlist entries whose scenario ran in this report
// without any warning.
export function staleEntries(allow, results) {
  return allow.filter((e) => {
    const runs = results.filter(
      (r) => (e.suite === '*' || e.suite === r.suite) && e.mode === r.mode && e.scenario === r.scenario,
    );
    return runs.length > 0 && runs.every((r) => r.status === 'PASS');
  });
}

// render formats the results as a table followed by the summary line.
export function render(results) {
  const head = ['SUITE', 'MODE', 'SCENARIO', 'RESULT', 'CHECKS p/f/w', 'SECS', 'NOTE'];
  const body = results.map((r) => [
    r.suite,
    r.mode,
    r.scenario,
    r.ok ? (r.status === 'WARN' ? 'pass*' : 'pass') : 'FAIL',
    `${r.passed}/${r.failed}/${r.warnings}`,
    String(r.seconds),
    r.note,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cols) =>
    cols
      .map((c, i) => (i === cols.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const passed = results.filter((r) => r.ok).length;
  return [fmt(head), ...body.map(fmt), `${passed} passed, ${results.length - passed} failed`].join('\n');
}

// parseRows reads the harness's ROWS.tsv.
export function parseRows(text) {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [suite, mode, scenario, exitCode, seconds, resultDir, logFile, error] = l.split('\t');
      return {
        suite,
        mode,
        scenario,
        exitCode: Number(exitCode),
        seconds: Number(seconds),
        resultDir,
        logFile,
        ...(error ? { error } : {}),
      };
    });
}

function readChecksFile(p) {
  try {
    const v = JSON.parse(readFileSync(p, 'utf8'));
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function readText(p) {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

function main(argv) {
  if (argv.length !== 2) {
    process.stderr.write('usage: node report.mjs ROWS.tsv ALLOWLIST\n');
    return 2;
  }
  const rows = parseRows(readText(argv[0]));
  const { entries, errors } = parseAllowlist(readText(argv[1]));
  if (errors.length > 0) {
    process.stderr.write(`${argv[1]}:\n  ${errors.join('\n  ')}\n`);
    return 2;
  }
  const results = verdicts(rows, entries);
  for (const e of staleEntries(entries, results)) {
    process.stdout.write(`note: allowlist line ${e.line} (${e.suite} ${e.mode} ${e.scenario}) is stale: it passed without warnings\n`);
  }
  process.stdout.write(`${render(results)}\n`);
  return results.every((r) => r.ok) && results.length > 0 ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
