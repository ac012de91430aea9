import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * The OpenAPI contract, checked against what the e2e suite really receives: every client the harness hands out (and
 * `raw`) records each response — method, path, status, content type, JSON body — and the e2e project's teardown
 * validates them all against the document (`checkRecordedResponses`), failing on an undocumented status, content type
 * or body.
 */
export const CONTRACT_DIR = join(__dirname, "..", "..", "test-results", "contract");
const MAX_BODY = 256 * 1024;

export interface RecordedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body?: string;
}

/** Wraps `fetch` so that each response's facts are appended to this process's record (the body read from a clone). */
export function recordingFetch(inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const url = input instanceof Request ? input.url : String(input);
    await record(method.toUpperCase(), url, response);
    return response;
  };
}

export async function record(method: string, url: string, response: Response): Promise<void> {
  const contentType = response.headers.get("content-type");
  const entry: RecordedResponse = { method, path: new URL(url).pathname, status: response.status, contentType };
  // A stream is never read here (it may not end); other bodies are read from a clone.
  if (contentType && /json/.test(contentType)) {
    const text = await response.clone().text().catch(() => "");
    if (text.length <= MAX_BODY) entry.body = text;
  }
  mkdirSync(CONTRACT_DIR, { recursive: true });
  appendFileSync(join(CONTRACT_DIR, `${process.pid}.jsonl`), `${JSON.stringify(entry)}\n`);
}

export function clearRecordedResponses(): void {
  rmSync(CONTRACT_DIR, { recursive: true, force: true });
}

type Operation = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: unknown };

/** The operation a request path names: literal segments beat parameters (`/v1/agents/x` is not `/v1/agents/{id}/…`). */
function operationFor(document: Document, method: string, path: string): { template: string; operation: Operation } | null {
  let best: { template: string; operation: Operation; params: number } | null = null;
  for (const [template, item] of Object.entries(document.paths)) {
    const operation = item[method.toLowerCase()];
    if (!operation) continue;
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (!pattern.test(path)) continue;
    const params = (template.match(/\{/g) ?? []).length;
    if (!best || params < best.params) best = { template, operation, params };
  }
  return best;
}

const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");

/** Validates every recorded response; returns one line per violation, and how many responses were checked. */
export function checkRecordedResponses(document: Document): { checked: number; violations: string[] } {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: "vigil", paths: document.paths, components: document.components });
  const violations = new Set<string>();
  let checked = 0;
  const files = existsSync(CONTRACT_DIR) ? readdirSync(CONTRACT_DIR).filter((f) => f.endsWith(".jsonl")) : [];
  for (const file of files) {
    for (const line of readFileSync(join(CONTRACT_DIR, file), "utf8").split("\n").filter(Boolean)) {
      const entry = JSON.parse(line) as RecordedResponse;
      const found = operationFor(document, entry.method, entry.path);
      // Requests to routes that do not exist (probes of the 404 handler) have no operation to hold them to.
      if (!found) continue;
      checked++;
      const where = `${entry.method} ${found.template} → ${entry.status}`;
      const response = found.operation.responses[String(entry.status)] ?? found.operation.responses.default;
      if (!response) {
        violations.add(`${where}: status not documented`);
        continue;
      }
      const media = entry.contentType?.split(";")[0]!.trim() ?? null;
      if (!media || !response.content) continue;
      // A documented type may carry parameters (`text/plain; version=0.0.4`): the media types are compared.
      const documented = Object.keys(response.content).find((key) => key.split(";")[0]!.trim() === media);
      if (documented === undefined) {
        violations.add(`${where}: content type ${media} not documented (${Object.keys(response.content).join(", ")})`);
        continue;
      }
      if (entry.body === undefined || entry.body === "" || response.content[documented]!.schema === undefined) continue;
      const ref = `vigil#/${pointer("paths", found.template, entry.method.toLowerCase(), "responses", String(entry.status), "content", documented, "schema")}`;
      const validate = ajv.getSchema(ref);
      if (!validate) violations.add(`${where}: no schema at ${ref}`);
      else if (!validate(JSON.parse(entry.body))) violations.add(`${where}: body does not match (${ajv.errorsText(validate.errors)})`);
    }
  }
  return { checked, violations: [...violations] };
}
