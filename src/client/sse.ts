/**
 * Server-Sent Events over `fetch`: a frame parser for a response body and a resumable reader that
 * reconnects with `Last-Event-ID` after a dropped connection. No DOM EventSource (it cannot send an
 * Authorization header) and no Node APIs, so it runs in browsers and in Node ≥ 20 alike.
 */

/** One dispatched SSE event. `id` is set only when the frame itself carried an `id:` line. */
export interface SseFrame {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Parses an SSE byte stream into frames (WHATWG HTML "event stream interpretation"): CRLF, LF and
 * CR line ends, `:` comments (heartbeats) skipped, multi-line `data:` joined with "\n", a frame
 * without data never dispatched. The reader is cancelled when the consumer stops early.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onBytes?: () => void): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | undefined;
  let event = "";
  let data: string[] = [];
  let done = false;
  try {
    while (!done) {
      const chunk = await reader.read();
      onBytes?.();
      done = chunk.done;
      buffer += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      for (;;) {
        const end = lineEnd(buffer, done);
        if (end === null) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end.length);
        if (line === "") {
          if (data.length > 0) yield { id, event: event || "message", data: data.join("\n") };
          id = undefined;
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id" && !value.includes("\0")) id = value;
      }
    }
  } finally {
    // Stops the network read when the consumer breaks out of its loop.
    await reader.cancel().catch(() => undefined);
  }
}

/** The next line terminator in `buffer`; a trailing CR waits for the next chunk (it may start with LF). */
function lineEnd(buffer: string, final: boolean): { index: number; length: number } | null {
  for (let i = 0; i < buffer.length; i++) {
    const char = buffer[i];
    if (char === "\n") return { index: i, length: 1 };
    if (char === "\r") {
      if (i + 1 < buffer.length) return { index: i, length: buffer[i + 1] === "\n" ? 2 : 1 };
      return final ? { index: i, length: 1 } : null;
    }
  }
  return null;
}

export interface ReconnectPolicy {
  /** First wait before reconnecting; doubles per consecutive failure. Default 250 ms. */
  initialDelayMs?: number;
  /** Upper bound of the wait. Default 5 000 ms. */
  maxDelayMs?: number;
  /** Consecutive failed connection attempts before giving up (the error is thrown). Default 20. */
  maxAttempts?: number;
  /**
   * A connection that delivers no bytes for this long (not even a heartbeat comment) is treated as
   * dropped and reopened. Default 45 000 ms: three of Vigil's 15 s heartbeats.
   */
  idleTimeoutMs?: number;
}

export interface ResumableSseOptions {
  /**
   * Opens one connection. `attempt` is 0 for the first and counts up per reconnect; `lastEventId`
   * is the id of the last frame yielded (send it as `Last-Event-ID`).
   */
  connect(context: { lastEventId: string | undefined; attempt: number; signal: AbortSignal }): Promise<Response>;
  /** Resume point before the first connection (events up to this id are treated as seen). */
  lastEventId?: string | undefined;
  signal?: AbortSignal | undefined;
  reconnect?: ReconnectPolicy | false | undefined;
  /** Turns a non-2xx response into the thrown error; 4xx (except 408/429) is never retried. */
  toError?: ((response: Response) => Promise<Error>) | undefined;
  /** Frames rejected here are tracked (resume point, dedupe) but not yielded. */
  accept?: ((frame: SseFrame) => boolean) | undefined;
  /** Ends the iteration after this frame has been yielded (e.g. `run.completed` of one run). */
  until?: ((frame: SseFrame) => boolean) | undefined;
  /** Whether a first connection that fails to open may be retried; default true. A drop after it opened always is. */
  retryFirstConnection?: boolean | undefined;
  /**
   * Called when the server answered 410 `cursor_expired` (the events after the resume point were pruned by
   * retention); the stream then resumes from `oldestSeq`, the oldest event still kept. Events in between are lost.
   */
  onCursorExpired?: ((gap: { lastEventId: string | undefined; oldestSeq: number }) => void) | undefined;
}

/**
 * A resumable SSE iteration. Frames with a numeric `id` are yielded at most once and in order:
 * after a reconnect anything at or below the last seen id is dropped, so a server that replays
 * from an older position never produces duplicates. Frames without an id (live-only) pass through.
 */
export class ResumableSse implements AsyncIterable<SseFrame> {
  private last: string | undefined;
  private lastSeq: number;
  private readonly controller = new AbortController();
  private started = false;

  constructor(private readonly options: ResumableSseOptions) {
    this.last = options.lastEventId;
    this.lastSeq = toSeq(options.lastEventId) ?? -1;
    options.signal?.addEventListener("abort", () => this.controller.abort(options.signal?.reason), { once: true });
  }

  /** The id of the last frame yielded: hand it to a later stream to continue from here. */
  get lastEventId(): string | undefined {
    return this.last;
  }

  /** Ends the stream and its connection. */
  close(): void {
    this.controller.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<SseFrame> {
    if (this.started) throw new Error("a ResumableSse can be iterated only once");
    this.started = true;
    return this.frames();
  }

  private async *frames(): AsyncGenerator<SseFrame> {
    const policy = this.options.reconnect === false ? null : this.options.reconnect ?? {};
    const initialDelay = policy?.initialDelayMs ?? 250;
    const maxDelay = policy?.maxDelayMs ?? 5_000;
    const maxAttempts = policy?.maxAttempts ?? 20;
    const idleTimeoutMs = policy?.idleTimeoutMs ?? 45_000;
    const signal = this.controller.signal;
    let failures = 0;
    let serverRetryMs: number | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        if (signal.aborted) return;
        let response: Response | undefined;
        let failure: unknown;
        // One controller per connection: the idle watchdog aborts it without ending the whole stream.
        const connection = new AbortController();
        const abortConnection = () => connection.abort();
        signal.addEventListener("abort", abortConnection, { once: true });
        let idle: ReturnType<typeof setTimeout> | undefined;
        const touch = () => {
          if (idle !== undefined) clearTimeout(idle);
          if (policy !== null) idle = setTimeout(abortConnection, idleTimeoutMs);
        };
        try {
          response = await this.options.connect({ lastEventId: this.last, attempt, signal: connection.signal });
        } catch (error) {
          failure = error;
        }
        if (signal.aborted) return;
        const oldestSeq = response?.status === 410 ? await expiredCursorOldestSeq(response.clone()) : undefined;
        if (oldestSeq !== undefined && oldestSeq - 1 > this.lastSeq) {
          // Retention pruned the events after our resume point: continue from the oldest one still kept.
          signal.removeEventListener("abort", abortConnection);
          await response?.body?.cancel().catch(() => undefined);
          this.options.onCursorExpired?.({ lastEventId: this.last, oldestSeq });
          this.lastSeq = oldestSeq - 1;
          this.last = String(oldestSeq - 1);
          continue;
        }
        if (response && !response.ok) {
          const error = this.options.toError ? await this.options.toError(response) : new Error(`SSE connection failed with HTTP ${response.status}`);
          if (response.status < 500 && response.status !== 408 && response.status !== 429) throw error;
          serverRetryMs = retryAfterMs(response);
          failure = error;
          response = undefined;
        }
        const opened = response !== undefined;
        if (response) {
          if (!response.body) throw new Error("the SSE response has no body");
          touch();
          try {
            for await (const frame of readSse(response.body, touch)) {
              failures = 0;
              serverRetryMs = undefined;
              const seq = toSeq(frame.id);
              if (seq !== undefined) {
                if (seq <= this.lastSeq) continue;
                this.lastSeq = seq;
              }
              if (frame.id !== undefined) this.last = frame.id;
              if (this.options.accept && !this.options.accept(frame)) continue;
              yield frame;
              if (this.options.until?.(frame)) return;
            }
            failure = new Error("the event stream ended");
          } catch (error) {
            failure = error;
          } finally {
            if (idle !== undefined) clearTimeout(idle);
            signal.removeEventListener("abort", abortConnection);
          }
          if (signal.aborted) return;
        } else {
          signal.removeEventListener("abort", abortConnection);
        }
        // A first connection that never opened is not retried when asked (e.g. a POST that may not have been accepted).
        const retryable = policy !== null && (attempt > 0 || opened || this.options.retryFirstConnection !== false);
        failures += 1;
        if (!retryable || failures > maxAttempts) throw failure;
        const delay = serverRetryMs ?? Math.min(maxDelay, initialDelay * 2 ** Math.min(failures - 1, 16));
        await sleep(delay, signal);
      }
    } finally {
      this.controller.abort();
    }
  }
}

/** `oldestSeq` of a 410 `cursor_expired` problem, or undefined for any other answer. */
async function expiredCursorOldestSeq(response: Response): Promise<number | undefined> {
  try {
    const problem = (await response.json()) as { code?: unknown; oldestSeq?: unknown };
    return problem.code === "cursor_expired" && typeof problem.oldestSeq === "number" && Number.isSafeInteger(problem.oldestSeq) && problem.oldestSeq > 0 ? problem.oldestSeq : undefined;
  } catch {
    return undefined;
  }
}

function toSeq(id: string | undefined): number | undefined {
  return id !== undefined && /^\d{1,15}$/.test(id) ? Number(id) : undefined;
}

function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get("retry-after");
  if (!header || !/^\d+$/.test(header)) return undefined;
  return Number(header) * 1000;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** A resumable SSE stream whose frames are decoded into records; `lastEventId` is where a later stream can continue. */
export class FrameStream<T> implements AsyncIterable<T> {
  constructor(
    private readonly sse: ResumableSse,
    private readonly decode: (frame: SseFrame) => T,
  ) {}

  get lastEventId(): string | undefined {
    return this.sse.lastEventId;
  }

  close(): void {
    this.sse.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const frame of this.sse) yield this.decode(frame);
  }
}
