// Reads `vigil_do_calls_total{object,method}` from GET /v1/metrics (issue 12 §3), for benches that report
// Durable Object calls per unit of work. Counts only: the reading itself (`metricsText`) is left out of deltas.

/** Parses the metrics text into Map("tenant.method" | "agent.method" → count). */
export function parseDoCalls(text) {
  const calls = new Map();
  for (const match of String(text).matchAll(/^vigil_do_calls_total\{method="([^"]+)",object="(tenant|agent)"\} (\d+)$/gm)) {
    calls.set(`${match[2]}.${match[1]}`, Number(match[3]));
  }
  return calls;
}

/** The tenant's counters now (`client` carries an admin API key of the tenant). */
export async function readDoCalls(client) {
  return parseDoCalls((await client.call("GET", "/v1/metrics")).body);
}

/** Calls made between two readings, per object.method, without the readings. */
export function doCallsDelta(before, after) {
  const out = {};
  for (const [name, count] of after) {
    const added = count - (before.get(name) ?? 0);
    if (added > 0 && name !== "tenant.metricsText") out[name] = added;
  }
  return out;
}

/**
 * TenantDO and AgentDO calls per unit in a delta covering `units` units of work. `authenticate` is reported
 * apart (it depends on the credential cache, not on the unit of work).
 */
export function callsPerUnit(delta, units) {
  let tenant = 0;
  let agent = 0;
  for (const [name, count] of Object.entries(delta)) {
    if (name === "tenant.authenticate") continue;
    if (name.startsWith("tenant.")) tenant += count;
    else agent += count;
  }
  return { tenantPerUnit: tenant / units, agentPerUnit: agent / units, authenticatePerUnit: (delta["tenant.authenticate"] ?? 0) / units, byMethod: delta };
}
