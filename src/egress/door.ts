/**
 * The one egress door: the only place in the Worker that calls the runtime's `fetch`
 * (test/unit/egress-door.test.ts greps for any other). Every outbound request — model providers,
 * tenant HTTP tools, outbound webhooks, identity-provider JWKS, and MCP/OTLP when they come — passes
 * here: the URL must satisfy the egress rule for this deployment's mode and be on the caller's
 * allowlist before a byte leaves; redirects are taken by hand (a GET follows at most
 * `config.egress.maxRedirects`, each hop checked again; other methods never follow one); and every
 * request, refused or sent, is handed to the caller's `record` so it lands on the run or the delivery.
 */
import { config } from "../config";
import type { DeploymentMode } from "../core/egress/deployment-mode";
import { checkEgress, type EgressCheck } from "../core/egress/egress";
import { logEvent } from "../log";

/** Why a request leaves; recorded with it. MCP and OTLP exporters join this list when they exist. */
export type EgressPurpose = "model" | "http_tool" | "outbound_webhook" | "jwks" | "mcp" | "otlp";

export interface EgressRecord {
  purpose: EgressPurpose;
  method: string;
  /** `host[:port]` of the first URL (null when it does not parse). */
  host: string | null;
  /** sent: an answer came back · denied: refused by the rule (before sending, or at a redirect) · failed: the transport threw. */
  outcome: "sent" | "denied" | "failed";
  status: number | null;
  redirects: number;
  durationMs: number;
  /** Why it was denied (no URL paths or query strings: they may carry tokens). */
  reason?: string;
}

export interface EgressRequest {
  url: string;
  init?: RequestInit;
  purpose: EgressPurpose;
  /** `host[:port]` values this request may reach (the caller's slice of the tenant's allowlist). */
  allowedHosts: readonly string[];
  mode: DeploymentMode;
  /** Where the request is recorded (a run trace, a delivery attempt); the door also logs denials. */
  record?: (entry: EgressRecord) => void;
  /** The transport (tests inject a local one); the runtime's fetch by default. */
  transport?: typeof fetch;
}

export type EgressOutcome =
  | { ok: true; response: Response; url: URL }
  | { ok: false; code: "network_denied"; message: string; sent: boolean; host: string | null };

const FOLLOWABLE = new Set(["GET", "HEAD"]);

/** Sends `request` if the rule allows it; a transport error is recorded, then rethrown to the caller. */
export async function sendThroughDoor(request: EgressRequest): Promise<EgressOutcome> {
  const method = (request.init?.method ?? "GET").toUpperCase();
  const started = Date.now();
  const firstHost = hostOf(request.url);
  let redirects = 0;
  const note = (outcome: EgressRecord["outcome"], status: number | null, reason?: string) => {
    const entry: EgressRecord = { purpose: request.purpose, method, host: firstHost, outcome, status, redirects, durationMs: Date.now() - started, ...(reason !== undefined && { reason }) };
    if (outcome !== "sent") logEvent("warn", "egress refused or failed", { ...entry });
    request.record?.(entry);
  };
  const refuse = (message: string, sent: boolean): EgressOutcome => {
    note("denied", null, message);
    return { ok: false, code: "network_denied", message, sent, host: firstHost };
  };

  const first = checkEgress(request.url, { allowedHosts: request.allowedHosts, mode: request.mode });
  if (!first.ok) return refuse(first.message, false);
  let target: URL = first.url;
  const send = request.transport ?? globalThis.fetch.bind(globalThis);
  for (;;) {
    let response: Response;
    try {
      response = await send(target.toString(), { ...request.init, redirect: "manual" });
    } catch (error) {
      note("failed", null, (error as { name?: string } | null)?.name ?? "error");
      throw error;
    }
    if (response.status < 300 || response.status >= 400 || response.status === 304) {
      note("sent", response.status);
      return { ok: true, response, url: target };
    }
    const location = response.headers.get("location");
    const next: string | null = location === null ? null : resolve(location, target);
    const allowed: EgressCheck | null = next === null ? null : checkEgress(next, { allowedHosts: request.allowedHosts, mode: request.mode });
    if (allowed === null || !allowed.ok) {
      await response.body?.cancel().catch(() => undefined);
      const where = next ? hostOf(next) : "an unreadable location";
      return refuse(`the endpoint redirected to ${where}, which this request may not reach${allowed && !allowed.ok ? ` (${allowed.message})` : ""}; nothing was sent there`, true);
    }
    if (!FOLLOWABLE.has(method)) {
      // A signed or body-carrying request is never replayed elsewhere: the caller sees the 3xx.
      note("sent", response.status);
      return { ok: true, response, url: target };
    }
    if (redirects >= config.egress.maxRedirects) {
      await response.body?.cancel().catch(() => undefined);
      return refuse(`more than ${config.egress.maxRedirects} redirects`, true);
    }
    await response.body?.cancel().catch(() => undefined);
    redirects += 1;
    target = allowed.url;
  }
}

function resolve(location: string, base: URL): string | null {
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
