/**
 * Named kill points for the crash tests (test/faults/crash-matrix.test.ts) — test-only.
 *
 * Each write path calls `faultPoint('op:step')` at the steps where a crash could leave a partial
 * state (between a transaction's statements, before and after its commit, between the steps of
 * async work). A child process started with `RAGLOOM_FAULT_POINT=<name>` SIGKILLs itself when it
 * reaches that point — a real crash at exactly that step, nothing unwound, no `finally` run — and
 * the test then reopens the database and checks that nothing committed was lost and nothing
 * half-written is visible. With `RAGLOOM_FAULT_LOG=<file>` every point reached is appended to that
 * file (one name per line), so the test can list the points an operation passes and tell a kill
 * that happened from a point that was never reached.
 *
 * Both variables are read when this module loads (and by `rearmFaultPoints`). Without them (production) a call costs one
 * boolean test; names are string literals (built only on rare paths: migrations, workspace saves),
 * so the hot paths (chunk and memory writes) allocate nothing for them.
 */
import { appendFileSync } from 'node:fs';

let KILL_AT = process.env.RAGLOOM_FAULT_POINT || undefined;
let LOG_TO = process.env.RAGLOOM_FAULT_LOG || undefined;
let ARMED = KILL_AT !== undefined || LOG_TO !== undefined;

/**
 * Reads both variables again (test-only): a crash test's child that is started once and runs
 * several operations (its modules loaded ahead) arms the point of each one before running it.
 */
export function rearmFaultPoints(): void {
  KILL_AT = process.env.RAGLOOM_FAULT_POINT || undefined;
  LOG_TO = process.env.RAGLOOM_FAULT_LOG || undefined;
  ARMED = KILL_AT !== undefined || LOG_TO !== undefined;
}

/** A named kill point: no-op unless `RAGLOOM_FAULT_POINT` names it (then SIGKILLs this process). */
export function faultPoint(name: string): void {
  if (ARMED) reached(name);
}

function reached(name: string): void {
  if (LOG_TO !== undefined) appendFileSync(LOG_TO, `${name}\n`);
  if (name === KILL_AT) process.kill(process.pid, 'SIGKILL');
}
