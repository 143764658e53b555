// Prints one line per scenario of one conformance run from the suite's checks.json files:
// checks passed, failed and warned (counted as the suite counts them), and how many of the
// failing check ids the baseline expects. Display only: the gate is the suite's own --expected-failures verdict
// (tests/conformance/run.sh reads it).
//
// Usage: node summary.mjs LABEL RESULTS_DIR BASELINE_YAML [SCORED_SCENARIO...]
//   SCORED_SCENARIO: the scenarios the run gates (a requirement run gates only the ones the
//   requirement set scores); the others are marked "not scored".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const [label, dir, baselineFile, ...scored] = process.argv.slice(2);
const baseline = (parse(readFileSync(baselineFile, 'utf8')) ?? {}).server ?? [];
const wholeScenario = new Set(baseline.filter((e) => !e.includes(':')));
const perCheck = new Set(baseline.filter((e) => e.includes(':')));

// Result dirs are server-<scenario>-<ISO time>.
const rows = [];
for (const d of readdirSync(dir).sort()) {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
  if (!m) continue;
  const scenario = m[1];
  let checks;
  try {
    checks = JSON.parse(readFileSync(join(dir, d, 'checks.json'), 'utf8'));
  } catch {
    continue;
  }
  // The suite counts a check id once, at its worst status.
  const rank = { FAILURE: 3, WARNING: 2, SUCCESS: 1 };
  const worst = new Map();
  for (const c of checks) {
    if (!(c.status in rank)) continue;
    const prev = worst.get(c.id);
    if (!prev || rank[c.status] >= rank[prev.status]) worst.set(c.id, c);
  }
  const all = [...worst.values()];
  // Counted as the suite prints them: every check, ids repeated.
  const count = (s) => checks.filter((c) => c.status === s).length;
  const counts = `${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('WARNING')} warnings`;
  const bad = all.filter((c) => c.status !== 'SUCCESS');
  const expected = bad.filter(
    (c) => wholeScenario.has(scenario) || perCheck.has(`${scenario}:${c.id}`),
  );
  const unexpected = bad.filter((c) => !expected.includes(c));
  const isScored = scored.length === 0 || scored.includes(scenario);
  let verdict;
  if (!isScored) verdict = 'not scored';
  else if (unexpected.length) verdict = 'FAIL';
  else if (wholeScenario.has(scenario)) verdict = 'n/a (baseline: whole scenario)';
  else if (expected.length) verdict = `pass (${expected.length} untestable in baseline)`;
  else verdict = 'pass';
  rows.push({ scenario, counts, bad, unexpected, verdict, isScored });
}

for (const r of rows) {
  console.log(
    `${label.padEnd(36)} ${r.scenario.padEnd(46)} ${r.counts.padEnd(34)} ${r.verdict}`,
  );
  if (r.isScored) {
    for (const c of r.unexpected) {
      console.log(`${' '.repeat(30)}${c.status} ${c.id}: ${(c.errorMessage ?? c.description ?? '').slice(0, 300)}`);
    }
  }
}
