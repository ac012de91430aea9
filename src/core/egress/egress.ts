/**
 * The egress rule: deny by default. A request may leave only for a
 * host on the caller's allowlist. What else a URL must satisfy depends on the deployment mode
 * (src/core/egress/deployment-mode.ts):
 * - deployed: https only, and never a loopback, private or link-local target;
 * - local (`npm start`): https anywhere on the allowlist, and plain http to loopback and private
 *   targets (Ollama, vLLM, a local receiver).
 * URLs with credentials are refused in both. Pure: the caller decides what is on the list (a tenant
 * tool's own host, a provider endpoint) and the egress door (src/egress/) performs the request.
 */
import type { DeploymentMode } from "./deployment-mode";
import { targetClass, type TargetClass } from "./egress-targets";

export { isLoopbackHost, targetClass, type TargetClass } from "./egress-targets";

export interface EgressPolicy {
  /** `host[:port]` values (as `URL.host` renders them), compared exactly. */
  allowedHosts: readonly string[];
  mode: DeploymentMode;
}

export type EgressCheck = { ok: true; url: URL } | { ok: false; code: "network_denied"; message: string };

/** Whether `target` may be called under `policy`; no request may be sent on a failure. */
export function checkEgress(target: string, policy: EgressPolicy): EgressCheck {
  const shape = checkUrlShape(target, policy.mode);
  if (!shape.ok) return shape;
  if (!policy.allowedHosts.includes(shape.url.host)) return deny(`${shape.url.host} is not on this call's egress allowlist`);
  return shape;
}

/** The URL rules alone (scheme, target class for the mode, no credentials): used when a URL is registered. */
export function checkUrlShape(target: string, mode: DeploymentMode): EgressCheck {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return deny("the URL is not an absolute URL");
  }
  if (url.username !== "" || url.password !== "") return deny("URLs with credentials are not allowed");
  if (url.protocol !== "https:" && url.protocol !== "http:") return deny(`the ${url.protocol} scheme is not allowed; use https`);
  const kind = targetClass(url.hostname);
  if (mode === "deployed") {
    if (kind !== "public") return deny(`${url.hostname} is a ${describe(kind)} target, which a deployed Vigil never calls (deployed mode; only \`npm start\` runs in local mode)`);
    if (url.protocol === "http:") return deny("plain http is not allowed in deployed mode; use https (local mode allows http to loopback and private addresses only)");
    return { ok: true, url };
  }
  if (url.protocol === "http:" && kind === "public") return deny(`plain http is allowed in local mode only to loopback and private addresses, and ${url.hostname} is neither; use https`);
  return { ok: true, url };
}

function describe(kind: TargetClass): string {
  return kind === "link_local" ? "link-local" : kind;
}

const deny = (message: string): EgressCheck => ({ ok: false, code: "network_denied", message });
