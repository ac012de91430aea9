import { FrameStream, ResumableSse, type SseFrame } from "./sse.js";
import { VigilOperations } from "./api.generated.js";
import { tenantEventStream, webhooksApi, type TenantEventStream, type Transport, type WebhooksApi } from "./tenant-api.js";
import { TERMINAL_RUN_STATUSES, type Run, type AgentEvent, type SendMessageInput, type Problem, type RequestOptions, type StreamOptions, type VigilClientOptions } from "./types.js";

/** Any non-2xx answer of the API, carrying the problem's stable `code`. */
export class VigilApiError extends Error {
  override readonly name = "VigilApiError";
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** Seconds from `Retry-After` (429 and some 409s), when the server sent one. */
  readonly retryAfterSeconds: number | undefined;
  readonly problem: Problem;

  constructor(problem: Problem, retryAfterSeconds?: number) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.problem = problem;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** Field-level validation failures, if any. */
  get errors(): Array<{ path: string; message: string }> {
    return this.problem.errors ?? [];
  }

  /** Reads a failed response; bodies that are not problem documents get the code `http_<status>`. */
  static async from(response: Response): Promise<VigilApiError> {
    const text = await response.text().catch(() => "");
    let problem: Problem | undefined;
    try {
      const parsed = JSON.parse(text) as Partial<Problem>;
      if (parsed && typeof parsed.code === "string") {
        problem = {
          type: parsed.type ?? "about:blank",
          title: parsed.title ?? parsed.code,
          status: typeof parsed.status === "number" ? parsed.status : response.status,
          detail: parsed.detail ?? "",
          code: parsed.code,
          ...(Array.isArray(parsed.errors) ? { errors: parsed.errors } : {}),
        };
      }
    } catch {
      // not JSON: fall through to the generic problem
    }
    problem ??= { type: "about:blank", title: response.statusText || "error", status: response.status, detail: text.slice(0, 500), code: `http_${response.status}` };
    const retryAfter = response.headers.get("retry-after");
    return new VigilApiError(problem, retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined);
  }
}

/** A resumable stream of an agent's events; `lastEventId` is where a later stream can continue. */
export class EventStream extends FrameStream<AgentEvent> {
  constructor(sse: ResumableSse) {
    super(sse, toAgentEvent);
  }
}

/** The events of one run started by `streamMessage`; ends after its `run.completed` / `run.failed`. */
export class RunStream extends EventStream {
  constructor(
    sse: ResumableSse,
    private readonly runKeyPromise: Promise<string>,
  ) {
    super(sse);
  }

  /** The run's key; resolves once iteration has started (the message is sent then) and the server accepted it. */
  get runKey(): Promise<string> {
    return this.runKeyPromise;
  }
}

const RUN_END_EVENTS = ["run.completed", "run.failed"];

/**
 * The typed client for the Vigil REST + SSE API. Dependency-free and fetch-based: it runs in
 * browsers and in Node ≥ 20. Every operation of `GET /v1/openapi.json` is a method, generated into
 * `VigilOperations` (src/client/api.generated.ts, `npm run gen:client`); this class adds the
 * transport and what a generator cannot know: resumable event streams, `streamMessage`, `waitForRun`.
 *
 * ```ts
 * const vigil = new VigilClient({ baseUrl: "http://127.0.0.1:8787", token: apiKey });
 * const { runKey } = await vigil.sendMessage(agentId, { text: "hello" });
 * const run = await vigil.waitForRun(agentId, runKey);
 * ```
 */
export class VigilClient extends VigilOperations {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: VigilClientOptions) {
    super();
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    // Bound so that browsers do not throw "Illegal invocation" when fetch is called as a method.
    this.fetchImpl = (input, init) => fetchImpl(input, init);
    const transport: Transport = { send: (method, path, body, opts) => this.send(method, path, body, opts), toError: (response) => VigilApiError.from(response) };
    this.webhooks = webhooksApi(this);
    this.events = Object.assign((agentId: string, options?: StreamOptions & { after?: number | string }) => this.agentEvents(agentId, options), {
      stream: (options?: StreamOptions & { after?: number | string; agentId?: string }) => tenantEventStream(transport, options),
    });
  }

  /** Outbound webhooks: `create` (the secret is shown once), `list`, `get`, `delete`, `deliveries`. */
  readonly webhooks: WebhooksApi;

  /**
   * `events(agentId)`: the agent's event log — replay after `after` (a seq; default: from the start),
   * then live; reconnects with `Last-Event-ID` and never yields an event twice.
   * `events.stream()`: the tenant-wide stream (every agent's events tagged with `agentId`), same guarantees.
   */
  readonly events: ((agentId: string, options?: StreamOptions & { after?: number | string }) => EventStream) & {
    stream(options?: StreamOptions & { after?: number | string; agentId?: string }): TenantEventStream;
  };

  /** The same client with another credential. */
  withToken(token: string): VigilClient {
    return new VigilClient({ baseUrl: this.baseUrl, token, fetch: this.fetchImpl });
  }

  /**
   * Sends a user turn and streams its run: `text.delta`, …, ending with `run.completed` or
   * `run.failed`. If the connection drops mid-run the stream continues from the agent's event log
   * (`Last-Event-ID`), so persisted events are neither lost nor repeated; missed deltas are not
   * replayed (they are live-only) but the reply's `message.appended` is. The message is sent when
   * iteration starts.
   */
  streamMessage(agentId: string, input: SendMessageInput, options: RequestOptions & StreamOptions = {}): RunStream {
    let resolveRunKey!: (runKey: string) => void;
    let rejectRunKey!: (error: unknown) => void;
    const runKeyPromise = new Promise<string>((resolve, reject) => {
      resolveRunKey = resolve;
      rejectRunKey = reject;
    });
    runKeyPromise.catch(() => undefined);
    let runKey: string | undefined;
    const sse = new ResumableSse({
      signal: options.signal,
      reconnect: options.reconnect,
      retryFirstConnection: false,
      toError: (response) => VigilApiError.from(response),
      connect: async ({ lastEventId, attempt, signal }) => {
        if (attempt === 0) {
          try {
            const response = await this.send("POST", `/v1/agents/${seg(agentId)}/messages`, input, {
              ...options,
              signal,
              headers: { ...options.headers, accept: "text/event-stream" },
            });
            if (!response.ok) {
              const error = await VigilApiError.from(response.clone());
              rejectRunKey(error);
              return response;
            }
            runKey = response.headers.get("x-vigil-run-key") ?? undefined;
            if (!runKey && (response.headers.get("content-type") ?? "").includes("json")) {
              runKey = ((await response.json()) as { runKey: string }).runKey;
              resolveRunKey(runKey);
              return this.openEvents(agentId, lastEventId ?? "0", signal);
            }
            if (!runKey) throw new Error("the server did not say which run it started");
            resolveRunKey(runKey);
            return response;
          } catch (error) {
            rejectRunKey(error);
            throw error;
          }
        }
        // Reconnect: the same run's events from the agent's log, after the last one seen.
        return this.openEvents(agentId, lastEventId ?? "0", signal);
      },
      accept: (frame) => frameRunKey(frame) === runKey,
      until: (frame) => RUN_END_EVENTS.includes(frame.event),
    });
    return new RunStream(sse, runKeyPromise);
  }

  /**
   * The agent's event log: replay after `after` (a seq; default: from the start), then live.
   * Reconnects with `Last-Event-ID` after a dropped connection and never yields an event twice.
   */
  private agentEvents(agentId: string, options: StreamOptions & { after?: number | string } = {}): EventStream {
    const sse = new ResumableSse({
      lastEventId: options.after === undefined ? undefined : String(options.after),
      signal: options.signal,
      reconnect: options.reconnect,
      onCursorExpired: options.onCursorExpired,
      toError: (response) => VigilApiError.from(response),
      connect: ({ lastEventId, signal }) => this.openEvents(agentId, lastEventId, signal),
    });
    return new EventStream(sse);
  }

  /**
   * Polls until the run is terminal (completed, skipped_*, failed_terminal). A wake travels through
   * the wake queue before its run exists, so `404` is read as "not there yet" until the timeout.
   */
  async waitForRun(agentId: string, runKey: string, options: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {}): Promise<Run> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let status = "not found";
      try {
        const run = await this.getRun(agentId, runKey, options.signal ? { signal: options.signal } : undefined);
        if (TERMINAL_RUN_STATUSES.includes(run.status)) return run;
        status = run.status;
      } catch (error) {
        if (!(error instanceof VigilApiError && error.status === 404) || Date.now() > deadline) throw error;
      }
      if (Date.now() > deadline) throw new Error(`run ${runKey} is still ${status} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
    }
  }

  // --- transport -----------------------------------------------------------------------------

  /** One raw request with the client's credentials; the caller reads the response. */
  send(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    else if (options.rawBody !== undefined) init.body = options.rawBody;
    if (options.signal) init.signal = options.signal;
    return this.fetchImpl(`${this.baseUrl}${path}`, init);
  }

  protected async request<T>(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<T> {
    const response = await this.send(method, path, body, options);
    if (!response.ok) throw await VigilApiError.from(response);
    // 204 and other empty answers resolve to undefined.
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  protected async requestRaw(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<Response> {
    const response = await this.send(method, path, body, { ...options, headers: { accept: "*/*", ...options?.headers } });
    if (!response.ok) throw await VigilApiError.from(response);
    return response;
  }

  private openEvents(agentId: string, lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    return this.send("GET", `/v1/agents/${seg(agentId)}/events`, undefined, { headers, signal });
  }
}

function toAgentEvent(frame: SseFrame): AgentEvent {
  let payload: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(frame.data) as unknown;
    if (parsed && typeof parsed === "object") payload = parsed as Record<string, unknown>;
  } catch {
    payload = { raw: frame.data };
  }
  const seq = typeof payload.seq === "number" ? payload.seq : frame.id !== undefined && /^\d+$/.test(frame.id) ? Number(frame.id) : null;
  return {
    seq,
    type: typeof payload.type === "string" ? payload.type : frame.event,
    runKey: typeof payload.runKey === "string" ? payload.runKey : null,
    data: payload.data && typeof payload.data === "object" ? (payload.data as Record<string, unknown>) : {},
    createdAt: typeof payload.createdAt === "string" ? payload.createdAt : null,
  };
}

function frameRunKey(frame: SseFrame): string | undefined {
  try {
    const parsed = JSON.parse(frame.data) as { runKey?: unknown };
    return typeof parsed.runKey === "string" ? parsed.runKey : undefined;
  } catch {
    return undefined;
  }
}

function seg(value: string): string {
  return encodeURIComponent(value);
}
