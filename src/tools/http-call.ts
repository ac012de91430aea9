/**
 * One tenant HTTP tool call on the wire. The request goes only to the tool's own
 * registered host (its egress allowlist is exactly that host; redirects are never followed), carries
 * the JSON arguments signed like Vigil's outbound webhooks — `Vigil-Signature: t=<unix s>,v1=<hex
 * HMAC-SHA256(secret, "<t>." + body)>` — and `Vigil-Operation-Id` so the receiver can deduplicate,
 * is bounded by a timeout, and its answer must be JSON within a size cap.
 */
import { config } from "../config";
import type { DeploymentMode } from "../core/egress/deployment-mode";
import { signVigil } from "../core/egress/webhook-signature";
import { sendThroughDoor, type EgressRecord } from "../egress";

export const OPERATION_ID_HEADER = "Vigil-Operation-Id";
export const SIGNATURE_HEADER = "Vigil-Signature";

export interface HttpToolRequest {
  url: string;
  method: string;
  toolName: string;
  secret: string;
  operationId: string;
  args: unknown;
  mode: DeploymentMode;
  nowMs: number;
  /** Where the request is recorded (the tenant's audit log, keyed by the run). */
  record?: (entry: EgressRecord) => void;
}

export type HttpToolOutcome =
  | { ok: true; status: number; body: unknown }
  | { ok: false; code: string; message: string; retryable: boolean; sent: boolean; details?: Record<string, string | number> };

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

export async function sendHttpToolRequest(request: HttpToolRequest): Promise<HttpToolOutcome> {
  const registered = safeHost(request.url);
  const body = JSON.stringify(request.args);
  const t = Math.floor(request.nowMs / 1000);
  let response: Response;
  try {
    const sent = await sendThroughDoor({
      url: request.url,
      purpose: "http_tool",
      allowedHosts: registered ? [registered] : [],
      mode: request.mode,
      ...(request.record && { record: request.record }),
      init: {
        method: request.method,
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "user-agent": "Vigil-Tools/1",
          [SIGNATURE_HEADER]: await signVigil(request.secret, body, t),
          [OPERATION_ID_HEADER]: request.operationId,
          "Vigil-Tool": request.toolName,
        },
        body,
        signal: AbortSignal.timeout(config.tenantTools.timeoutMs),
      },
    });
    if (!sent.ok) return { ok: false, code: "network_denied", message: sent.message, retryable: false, sent: sent.sent };
    response = sent.response;
  } catch (error) {
    return failedToSend(error);
  }
  if (response.status >= 300 && response.status < 400) {
    await discard(response);
    const location = safeHost(response.headers.get("location") ?? "", request.url);
    return { ok: false, code: "network_denied", message: `the tool answered ${response.status} with a redirect${location ? ` to ${location}` : ""}; redirects are not followed`, retryable: false, sent: true };
  }
  if (response.status >= 400) {
    await discard(response);
    const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
    return { ok: false, code: "upstream_error", message: `the tool answered HTTP ${response.status}`, retryable, sent: true, details: { status: response.status } };
  }
  if (!JSON_TYPE.test(response.headers.get("content-type") ?? "")) {
    await discard(response);
    return { ok: false, code: "invalid_response", message: "the tool's answer is not JSON (content-type must be application/json)", retryable: false, sent: true };
  }
  const read = await readCapped(response, config.tenantTools.maxResponseBytes);
  if (!read.ok) return read.code === "timeout" ? failedToSend(read.error, true) : { ok: false, code: "response_too_large", message: `the tool's answer exceeds ${config.tenantTools.maxResponseBytes} bytes`, retryable: false, sent: true };
  try {
    return { ok: true, status: response.status, body: JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(read.bytes)) };
  } catch {
    return { ok: false, code: "invalid_response", message: "the tool's answer is not valid JSON", retryable: false, sent: true };
  }
}

type Read = { ok: true; bytes: Uint8Array } | { ok: false; code: "too_large" } | { ok: false; code: "timeout"; error: unknown };

/** The body, refused as soon as it passes `cap` bytes (a declared Content-Length over the cap is refused unread). */
async function readCapped(response: Response, cap: number): Promise<Read> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > cap) {
    await discard(response);
    return { ok: false, code: "too_large" };
  }
  if (!response.body) return { ok: true, bytes: new Uint8Array() };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, code: "too_large" };
      }
      chunks.push(value);
    }
  } catch (error) {
    return { ok: false, code: "timeout", error };
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

function failedToSend(error: unknown, sent = false): HttpToolOutcome {
  const name = (error as { name?: string } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return { ok: false, code: "timeout", message: `the tool did not answer within ${config.tenantTools.timeoutMs} ms`, retryable: true, sent: true };
  }
  return { ok: false, code: "upstream_error", message: "the tool could not be reached", retryable: true, sent };
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function safeHost(url: string, base?: string): string | null {
  try {
    return new URL(url, base).host;
  } catch {
    return null;
  }
}
