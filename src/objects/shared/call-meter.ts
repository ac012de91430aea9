/**
 * Durable Object calls counted at the stub boundary (issue 12 §3, `vigil_do_calls_total`). Every stub
 * made by ./stubs.ts counts each method call here, per tenant, in isolate memory: counting costs no
 * I/O. The counts reach the tenant's metrics only piggybacked on calls that happen anyway — the
 * agent's batched per-run report and the `GET /v1/metrics` read — so the counter never adds a call.
 * The store sits on `globalThis` so every module instance in the isolate (workerd may load the Worker
 * and the Durable Object classes separately) shares one tally.
 */
import type { CalledObject, DoCallCount } from "../../schema/contracts";

const STORE = Symbol.for("vigil.do-call-meter");
type Tally = Map<string, Map<string, number>>;

function tally(): Tally {
  const holder = globalThis as unknown as Record<symbol, Tally | undefined>;
  return (holder[STORE] ??= new Map());
}

/**
 * Tenants whose counts one isolate keeps at most: past it the tenant counted longest ago loses its untaken counts
 * (a metric undercounts; memory stays bounded whatever names callers make up).
 */
export const MAX_COUNTED_TENANTS = 10_000;

export function countDoCall(tenantId: string, object: CalledObject, method: string): void {
  const byTenant = tally();
  let counts = byTenant.get(tenantId);
  if (counts) byTenant.delete(tenantId);
  else {
    counts = new Map();
    if (byTenant.size >= MAX_COUNTED_TENANTS) byTenant.delete(byTenant.keys().next().value!);
  }
  byTenant.set(tenantId, counts);
  const key = `${object}\u0000${method}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Removes and returns the calls counted for one tenant in this isolate since the last take. */
export function takeDoCalls(tenantId: string): DoCallCount[] {
  const counts = tally().get(tenantId);
  if (!counts) return [];
  tally().delete(tenantId);
  return [...counts].map(([key, count]) => {
    const [object, method] = key.split("\u0000") as [CalledObject, string];
    return { object, method, count };
  });
}

/** Puts taken counts back (their carrier call failed), so they ride on the next one. */
export function restoreDoCalls(tenantId: string, calls: readonly DoCallCount[]): void {
  for (const call of calls) for (let i = 0; i < call.count; i++) countDoCall(tenantId, call.object, call.method);
}

/** Properties of a stub that are not RPC methods (or must stay unwrapped: promise probing, disposal). */
const PASS_THROUGH = new Set<string | symbol>(["then", "id", "name", "dup", "constructor"]);

/** Wraps a stub so that every method call is counted for `tenantId` before it leaves. */
export function meteredStub<T extends object>(stub: T, tenantId: string, object: CalledObject): T {
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof property !== "string" || PASS_THROUGH.has(property) || typeof value !== "function") return value;
      // Reflect.apply invokes the RPC method itself; reading `.apply` off an RPC stub would name a remote method.
      return (...args: unknown[]) => {
        countDoCall(tenantId, object, property);
        return Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
      };
    },
  });
}
