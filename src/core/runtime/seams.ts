/**
 * The one reader of the deployment's seam switches. Test seams exist only when VIGIL_FAULTS names them:
 * `enabled` turns every seam on, a comma-separated list of seam names (`faults,clocks`) only those. Bench seams
 * (`/__bench`, `benchOp`, the statement meter) exist only with VIGIL_BENCH=enabled. Anything else is off, so a
 * forgotten or misspelt variable or name can only close a seam. Every other module asks here instead of reading
 * the variables itself. docs/decisions/test-seams.md lists each seam and the test files that turn it on.
 */
export interface SeamSwitches {
  VIGIL_FAULTS?: string | undefined;
  VIGIL_BENCH?: string | undefined;
}

/**
 * The test seams:
 * - `faults`: armed crash points (agent, saga, forwarder), the MCP abort and the provider overshare faults;
 * - `clocks`: run timers, compaction, session expiry, retention and erasure as if the clock read a given time, and a
 *   tenant's decision tick length;
 * - `dumps`: every row of an object's tables (the DO method and `/__debug`), the tenant's key-lookup count;
 * - `settings`: shorter credential-cache TTL and JWKS cooldown, a smaller outbound retry schedule;
 * - `checks`: every statement bound from a kept plan and every memory-copy read compared with a fresh one.
 */
export const TEST_SEAMS = ["faults", "clocks", "dumps", "settings", "checks"] as const;
export type TestSeam = (typeof TEST_SEAMS)[number];

/** True when the deployment's VIGIL_FAULTS turns on `seam` (`enabled`, or a list naming it). */
export function seamOn(env: Pick<SeamSwitches, "VIGIL_FAULTS">, seam: TestSeam): boolean {
  const value = env.VIGIL_FAULTS;
  if (typeof value !== "string" || value === "") return false;
  if (value === "enabled") return true;
  return value.split(",").includes(seam);
}

/** True only when every test seam is on (VIGIL_FAULTS=enabled); the deploy check refuses any VIGIL_FAULTS. */
export function testSeamsEnabled(env: Pick<SeamSwitches, "VIGIL_FAULTS">): boolean {
  return env.VIGIL_FAULTS === "enabled";
}

/** True only for `npm run bench` (VIGIL_BENCH=enabled). */
export function benchSeamsEnabled(env: Pick<SeamSwitches, "VIGIL_BENCH">): boolean {
  return env.VIGIL_BENCH === "enabled";
}

/** A test-only setting: `value` when the `settings` seam is on and it is given, else undefined (the production default). */
export function testOnly<T>(env: Pick<SeamSwitches, "VIGIL_FAULTS">, value: T | undefined): T | undefined {
  return seamOn(env, "settings") ? value : undefined;
}
