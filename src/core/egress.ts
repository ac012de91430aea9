/**
 * The egress rule (SPEC §6): deny by default. A request may leave only for a host on the caller's
 * allowlist, over https; plain http only to a loopback host and only where the deployment allows it
 * (tests, `VIGIL_FAULTS=enabled`). URLs with credentials are refused. Pure: the caller decides
 * what is on the list (a tenant tool's own host, a provider endpoint) and performs the request.
 */
export interface EgressPolicy {
  /** `host[:port]` values (as `URL.host` renders them), compared exactly. */
  allowedHosts: readonly string[];
  allowLoopbackHttp: boolean;
}

export type EgressCheck = { ok: true; url: URL } | { ok: false; code: "network_denied"; message: string };

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname.toLowerCase());
}

/** Whether `target` may be called under `policy`; no request may be sent on a failure. */
export function checkEgress(target: string, policy: EgressPolicy): EgressCheck {
  const shape = checkUrlShape(target, policy.allowLoopbackHttp);
  if (!shape.ok) return shape;
  if (!policy.allowedHosts.includes(shape.url.host)) return deny(`${shape.url.host} is not on this call's egress allowlist`);
  return shape;
}

/** The URL rules alone (scheme, loopback exception, no credentials): used when a tool is registered. */
export function checkUrlShape(target: string, allowLoopbackHttp: boolean): EgressCheck {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return deny("the URL is not an absolute URL");
  }
  if (url.username !== "" || url.password !== "") return deny("URLs with credentials are not allowed");
  if (url.protocol === "https:") return { ok: true, url };
  if (url.protocol === "http:" && allowLoopbackHttp && isLoopbackHost(url.hostname)) return { ok: true, url };
  return deny(url.protocol === "http:" ? "plain http is allowed only to a loopback host in test deployments; use https" : `the ${url.protocol} scheme is not allowed; use https`);
}

const deny = (message: string): EgressCheck => ({ ok: false, code: "network_denied", message });
