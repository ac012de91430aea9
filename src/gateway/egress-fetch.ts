/**
 * The one door for outbound HTTP (SPEC §6): a `fetch` that refuses, before any byte leaves, a URL
 * whose host is not on this caller's allowlist (plain http only to loopback, and only where the
 * deployment allows it), and a body that fails the caller's final guard. Redirects are never
 * followed; one pointing off the allowlist is `network_denied`. Provider SDKs get it as their
 * `fetch`; tenant tool calls can use it with their own host and guard.
 */
import { checkEgress } from "../core/egress";
import { GatewayError } from "./errors";

export type BodyGuard = (body: unknown) => { ok: true } | { ok: false; fields: string[] };

export interface EgressFetchOptions {
  allowedHosts: readonly string[];
  allowLoopbackHttp: boolean;
  /** Checks the parsed JSON of the exact bytes about to be sent; a violation blocks the request. */
  guard?: BodyGuard;
  /** The underlying fetch (the runtime's by default). */
  fetch?: typeof fetch;
}

export function createEgressFetch(options: EgressFetchOptions): typeof fetch {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const target = input instanceof Request ? input.url : String(input);
    const egress = checkEgress(target, { allowedHosts: options.allowedHosts, allowLoopbackHttp: options.allowLoopbackHttp });
    if (!egress.ok) throw new GatewayError("network_denied", `outbound request refused: ${egress.message}`, "egress", { host: hostOf(target) });
    if (options.guard) {
      if (input instanceof Request) throw new GatewayError("overshared_payload_blocked", "a request object's body cannot be inspected before sending", "need_to_know");
      const body = bodyText(init?.body);
      if (body === null) throw new GatewayError("overshared_payload_blocked", "the request body cannot be inspected before sending", "need_to_know");
      let parsed: unknown;
      try {
        parsed = body === "" ? {} : JSON.parse(body);
      } catch {
        throw new GatewayError("overshared_payload_blocked", "the request body is not JSON, so its fields cannot be checked", "need_to_know");
      }
      const verdict = options.guard(parsed);
      if (!verdict.ok) {
        throw new GatewayError("overshared_payload_blocked", `the request carried fields outside the need-to-know allowlist: ${verdict.fields.slice(0, 10).join(", ")}`, "need_to_know", { fields: verdict.fields.slice(0, 50) });
      }
    }
    const response = await send(egress.url.toString(), { ...init, redirect: "manual" });
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get("location");
      const next = location === null ? null : safeUrl(location, egress.url);
      if (next === null || !checkEgress(next, { allowedHosts: options.allowedHosts, allowLoopbackHttp: options.allowLoopbackHttp }).ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new GatewayError("network_denied", `the endpoint redirected to ${next ? hostOf(next) : "an unreadable location"}, which is not on the egress allowlist; redirects are not followed`, "egress", { host: next ? hostOf(next) : null, sent: true });
      }
    }
    return response;
  };
}

function bodyText(body: BodyInit | null | undefined): string | null {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(body));
  return null;
}

function safeUrl(location: string, base: URL): string | null {
  try {
    return new URL(location, base).toString();
  } catch {
    return null;
  }
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
