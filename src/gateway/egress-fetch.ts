/**
 * The model gateway's `fetch`, handed to the provider SDKs: the NEED_TO_KNOW final guard on the
 * exact bytes about to be sent, then the one egress door (src/egress/) with this call's allowlist
 * (the granted endpoint's host) and the deployment's mode. A refusal — by the guard, the rule, or a
 * redirect off the allowlist — throws a `GatewayError` and sends nothing (more).
 */
import type { DeploymentMode } from "../core/egress/deployment-mode";
import { sendThroughDoor, type EgressRecord } from "../egress";
import { GatewayError } from "./errors";

/** Checks a request body: its parsed JSON, and its exact text (for values that must not appear anywhere in it). */
export type BodyGuard = (body: unknown, text: string) => { ok: true } | { ok: false; fields: string[] };

export interface EgressFetchOptions {
  allowedHosts: readonly string[];
  mode: DeploymentMode;
  /** Checks the parsed JSON of the exact bytes about to be sent; a violation blocks the request. */
  guard?: BodyGuard;
  /** Where each request is recorded (the run trace). */
  record?: (entry: EgressRecord) => void;
  /** The transport under the door (the runtime's by default; tests inject a local one). */
  fetch?: typeof fetch;
}

export function createEgressFetch(options: EgressFetchOptions): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (input instanceof Request) throw new GatewayError("overshared_payload_blocked", "a request object's body cannot be inspected before sending", "need_to_know");
    const target = String(input);
    if (options.guard) {
      const body = bodyText(init?.body);
      if (body === null) throw new GatewayError("overshared_payload_blocked", "the request body cannot be inspected before sending", "need_to_know");
      let parsed: unknown;
      try {
        parsed = body === "" ? {} : JSON.parse(body);
      } catch {
        throw new GatewayError("overshared_payload_blocked", "the request body is not JSON, so its fields cannot be checked", "need_to_know");
      }
      const verdict = options.guard(parsed, body);
      if (!verdict.ok) {
        throw new GatewayError("overshared_payload_blocked", `the request carried fields outside the need-to-know allowlist: ${verdict.fields.slice(0, 10).join(", ")}`, "need_to_know", { fields: verdict.fields.slice(0, 50) });
      }
    }
    const outcome = await sendThroughDoor({
      url: target,
      ...(init && { init }),
      purpose: "model",
      allowedHosts: options.allowedHosts,
      mode: options.mode,
      ...(options.record && { record: options.record }),
      ...(options.fetch && { transport: options.fetch }),
    });
    if (!outcome.ok) {
      throw new GatewayError("network_denied", `outbound request refused: ${outcome.message}`, "egress", { host: outcome.host, ...(outcome.sent && { sent: true }) });
    }
    return outcome.response;
  };
}

function bodyText(body: BodyInit | null | undefined): string | null {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(body));
  return null;
}
