/**
 * OTLP exporter headers in the OpenTelemetry SDK environment format (OTEL_EXPORTER_OTLP_HEADERS):
 * `key1=value1,key2=value2`, values percent-decoded. A tenant stores them as one secret so a
 * collector's API key is encrypted at rest like a provider key. Pure.
 */
import type { Result } from "../runtime/result";

/** Header names an exporter must not set: the runtime owns them. */
const RESERVED = new Set(["content-type", "content-length", "host", "connection", "transfer-encoding"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

export function parseOtlpHeaders(text: string): Result<{ headers: Record<string, string> }> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const name = (at < 0 ? pair : pair.slice(0, at)).trim().toLowerCase();
    if (at < 0 || !TOKEN.test(name)) return { ok: false, code: "validation_failed", message: "the OTLP headers secret is not `key=value,key2=value2`" };
    if (RESERVED.has(name)) return { ok: false, code: "validation_failed", message: `the OTLP headers secret may not set ${name}` };
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return { ok: false, code: "validation_failed", message: `the OTLP header ${name} is not percent-encoded correctly` };
    }
    if (/[\r\n]/.test(value)) return { ok: false, code: "validation_failed", message: `the OTLP header ${name} holds a line break` };
    headers[name] = value;
  }
  return { ok: true, headers };
}
