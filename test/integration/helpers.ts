import { env, runInDurableObject, SELF } from "cloudflare:test";
import { threadIds } from "../../src/core/ids/run-keys";
import { billedRows, meterStatements } from "../../src/objects/shared/seams/statement-meter";

export const ADMIN = "test-admin-token";

/** The agent's Durable Object stub, by the id the Worker derives from tenant and agent. */
export const agentDo = (tenantId: string, agentId: string) => env.AGENT.get(env.AGENT.idFromName(`${tenantId}:${agentId}`));
// Typed loosely: the DO stubs' full RPC types are too deep for `runInDurableObject`'s inference.
export const inDo = runInDurableObject as unknown as <T>(stub: unknown, fn: (instance: any, state: DurableObjectState) => T | Promise<T>) => Promise<T>;

/** A fresh instance of the object's class on the same storage: the next activation after an eviction, nothing kept. */
export function freshInstance<T extends object>(instance: T, state: DurableObjectState): T {
  const Reactivated = instance.constructor as new (state: DurableObjectState, env: Cloudflare.Env) => T;
  return new Reactivated(state, env);
}

/** Records every statement the object's storage runs (its `sql.exec`, spied on) until `stop()`. */
export function recordStatements(state: DurableObjectState): { seen: string[]; stop(): void } {
  const sql = state.storage.sql as unknown as { exec: (query: string, ...bindings: unknown[]) => unknown };
  const exec = sql.exec;
  const seen: string[] = [];
  sql.exec = (query, ...bindings) => (seen.push(query), exec.call(state.storage.sql, query, ...bindings));
  return { seen, stop: () => void (sql.exec = exec) };
}

/**
 * Rows SQLite has read for the statements this object's storage ran since the first call (every `sql.exec`, ours
 * and the Agents SDK's, metered from then on): a test counts a stretch of work as the difference of two readings.
 * The meter wraps only the storage of the object a test measures; nothing else runs wrapped.
 */
export function rowsReadSoFar(state: DurableObjectState): number {
  const sql = state.storage.sql as unknown as Parameters<typeof meterStatements>[0];
  meterStatements(sql);
  return billedRows(sql)!.rowsRead;
}

/** The wake a journal change matching a subscription enqueues (the queue consumer's `enqueueWake` input). */
export const subscriptionWake = (tenantId: string, agentId: string, runKey: string, summary: string) => ({
  tenantId,
  agentId,
  reason: "subscription" as const,
  runKey,
  threadId: threadIds.autonomous(agentId, runKey),
  authority: "runtime_instruction" as const,
  input: { observation: { summary } },
});

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** One call through the real Worker entrypoint (router, auth, DOs). */
export async function api<T = any>(method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const response = await SELF.fetch(`https://vigil.test${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // SSE and other non-JSON bodies stay text
  }
  return { status: response.status, headers: response.headers, body };
}

export async function createTenant(name = "acme"): Promise<{ tenantId: string; key: string }> {
  const res = await api("POST", "/v1/tenants", { key: ADMIN, body: { name } });
  if (res.status !== 201) throw new Error(`tenant: ${res.status} ${JSON.stringify(res.body)}`);
  return { tenantId: res.body.tenant.id, key: res.body.apiKey };
}

export async function createAgent(key: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await api("POST", "/v1/agents", { key, body: { kind: "coach", displayName: "Coach", ...body } });
  if (res.status !== 201) throw new Error(`agent: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Polls until `check` returns a value (runs finish asynchronously inside the agent DO). The pause between polls
 * starts at 25 ms and grows to `maxIntervalMs`: quick conditions are seen at once, while a long wait on a loaded
 * machine stays well under the per-key Rate Limiting budget (100 per fixed 60 s period in wrangler.toml) — a 429
 * there would hide the condition until the period ends. The default bound leaves room under the 30 s test timeout.
 */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, maxIntervalMs = 400): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = Math.min(25, maxIntervalMs);
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(maxIntervalMs, Math.ceil(pause * 1.5));
  }
}

export async function waitForRun(key: string, agentId: string, runKey: string): Promise<any> {
  return eventually(async () => {
    const res = await api("GET", `/v1/agents/${agentId}/runs/${runKey}`, { key });
    return res.status === 200 && !["queued", "running", "waiting", "ready"].includes(res.body.status) ? res.body : undefined;
  });
}

/** Parses an SSE body into frames; a last frame not yet ended by its blank line is left out (a stream read so far). */
export function parseSse(text: string): Array<{ id?: number; event: string; data: any }> {
  return text
    .split("\n\n")
    .slice(0, -1)
    .filter((block) => block.split("\n").some((line) => line.startsWith("event:")))
    .map((block) => {
      const frame: { id?: number; event: string; data: any } = { event: "", data: null };
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) frame.id = Number(line.slice(4));
        else if (line.startsWith("event: ")) frame.event = line.slice(7);
        else if (line.startsWith("data: ")) frame.data = JSON.parse(line.slice(6));
      }
      return frame;
    });
}

/** Reads an open SSE response until `done` says so (or the timeout: generous, for a loaded machine), then cancels it. */
export async function readSseUntil(
  response: Response,
  done: (frames: Array<{ id?: number; event: string; data: any }>) => boolean,
  timeoutMs = 20_000,
): Promise<Array<{ id?: number; event: string; data: any }>> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([
        reader.read(),
        new Promise<{ done: true; value: undefined }>((resolve) => setTimeout(() => resolve({ done: true, value: undefined }), Math.max(1, deadline - Date.now()))),
      ]);
      if (chunk.value) text += decoder.decode(chunk.value, { stream: true });
      if (done(parseSse(text)) || chunk.done) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return parseSse(text);
}

export async function openEvents(key: string, agentId: string, options: { after?: number; lastEventId?: number } = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (options.lastEventId !== undefined) headers["last-event-id"] = String(options.lastEventId);
  const query = options.after !== undefined ? `?after=${options.after}` : "";
  return SELF.fetch(`https://vigil.test/v1/agents/${agentId}/events${query}`, { headers });
}

/** A builtin:playbook agent scoped to a fresh "Gym" category that answers `/tool` lines; `controlMode` null keeps the default. */
export async function playbookAgentInCategory(controlMode: string | null) {
  const { tenantId, key } = await createTenant();
  const category = await api("POST", "/v1/journal/categories", { key, body: { name: "Gym" } });
  const agent = await createAgent(key, {
    model: "builtin:playbook",
    allowedCategoryIds: [category.body.id],
    ...(controlMode ? { controlMode } : {}),
    playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
  });
  return { tenantId, key, agent, categoryId: category.body.id as string };
}

/** The operator message that makes a playbook agent call create_task. */
export const createTaskCommand = (categoryId: string, title: string) => `/tool create_task {"title":"${title}","categoryId":"${categoryId}"}`;

/** Titles of the category's journal tasks. */
export const taskTitlesIn = async (key: string, categoryId: string) => ((await api("GET", `/v1/journal/tasks?categoryId=${categoryId}`, { key })).body.data as any[]).map((t) => t.title);

export { clearOfPeriodEdge, DAY_MS, MINUTE_MS } from "../support/period-edge";
