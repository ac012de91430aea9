/**
 * The one reader of the deployment's seam switches (issue 11: one env guard for every test seam).
 * Test seams — fault injection, test clocks, table dumps, `/__debug`, and the test-only settings
 * (shorter credential TTL and JWKS cooldown, outbound retry schedule, provider overshare) — exist
 * only with VIGIL_FAULTS=enabled; bench seams (`/__bench`, `benchOp`) only with VIGIL_BENCH=enabled.
 * Anything but that exact value is off, so a forgotten or misspelt variable can only close a seam.
 * Every other module asks here instead of reading the variables itself.
 */
export interface SeamSwitches {
  VIGIL_FAULTS?: string | undefined;
  VIGIL_BENCH?: string | undefined;
}

/** True only in test deployments (VIGIL_FAULTS=enabled). */
export function testSeamsEnabled(env: Pick<SeamSwitches, "VIGIL_FAULTS">): boolean {
  return env.VIGIL_FAULTS === "enabled";
}

/** True only for `npm run bench` (VIGIL_BENCH=enabled). */
export function benchSeamsEnabled(env: Pick<SeamSwitches, "VIGIL_BENCH">): boolean {
  return env.VIGIL_BENCH === "enabled";
}

/** A test-only setting: `value` when test seams are on, else undefined, so the production default applies. */
export function testOnly<T>(env: Pick<SeamSwitches, "VIGIL_FAULTS">, value: T | undefined): T | undefined {
  return testSeamsEnabled(env) ? value : undefined;
}
