/**
 * vitest global setup: gives the run a folder for its shared PostgreSQL cluster (postgres.ts
 * starts it there on first use, so a run that has no PostgreSQL test never starts one) and
 * stops and removes the cluster when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { newRunDir, teardownRun } from './postgres-cluster.js';

export default function setup(project: TestProject): () => void {
  const dir = newRunDir();
  project.provide('pgRunDir', dir);
  project.provide('pgOwnerPid', process.pid);
  return () => teardownRun(dir);
}
