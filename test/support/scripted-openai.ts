/**
 * A scripted OpenAI-compatible chat completions server on 127.0.0.1 (the internet's edge in tests):
 * answers `POST …/chat/completions` from a queue of scripted responses — JSON or `stream: true` SSE
 * with content deltas, tool_calls deltas and a final usage chunk — and records every request's
 * headers and body, so tests assert on the bytes the gateway actually sent.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** One SSE `data:` payload (a chat.completion.chunk object), or the literal `[DONE]`. */
export type SseChunk = Record<string, unknown> | "[DONE]";

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Streamed as SSE (`text/event-stream`). */
  chunks?: SseChunk[];
  /** Sent as one JSON body. */
  json?: unknown;
  /** Sent verbatim (a malformed answer). */
  raw?: string;
  /** Waits this long before answering (and between SSE chunks, `chunkDelayMs`). */
  delayMs?: number;
  chunkDelayMs?: number;
  /** Destroys the socket without answering (a connection failure). */
  dropConnection?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  body: string;
  json: Record<string, unknown> | null;
}

export class ScriptedOpenAI {
  readonly requests: RecordedRequest[] = [];
  private readonly script: ScriptedResponse[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ScriptedOpenAI> {
    let instance!: ScriptedOpenAI;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (part: Buffer) => parts.push(part));
      req.on("end", () => void instance.answer(req.method ?? "GET", req.url ?? "/", req.headers, Buffer.concat(parts).toString("utf8"), res));
    });
    instance = new ScriptedOpenAI(server);
    server.on("connection", (socket) => {
      instance.sockets.add(socket);
      socket.on("close", () => instance.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return instance;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>/v1` — what a policy's `baseUrl` points at. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get requestCount(): number {
    return this.requests.length;
  }

  /** Queues responses, answered in order; an exhausted script answers 500 `script_exhausted`. */
  enqueue(...responses: ScriptedResponse[]): this {
    this.script.push(...responses);
    return this;
  }

  reset(): void {
    this.script.length = 0;
    this.requests.length = 0;
  }

  get pending(): number {
    return this.script.length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(method: string, path: string, headers: IncomingHttpHeaders, body: string, res: ServerResponse): Promise<void> {
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(body) as Record<string, unknown>;
    } catch {
      json = null;
    }
    this.requests.push({ method, path, headers, body, json });
    const next = this.script.shift() ?? { status: 500, json: { error: { message: "script exhausted", type: "script_exhausted" } } };
    if (next.delayMs) await sleep(next.delayMs);
    if (next.dropConnection) {
      res.socket?.destroy();
      return;
    }
    const status = next.status ?? 200;
    if (next.chunks) {
      res.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache", ...next.headers });
      for (const chunk of next.chunks) {
        if (next.chunkDelayMs) await sleep(next.chunkDelayMs);
        res.write(`data: ${chunk === "[DONE]" ? chunk : JSON.stringify(chunk)}\n\n`);
      }
      res.end();
      return;
    }
    if (next.raw !== undefined) {
      res.writeHead(status, { "content-type": "application/json", ...next.headers });
      res.end(next.raw);
      return;
    }
    res.writeHead(status, { "content-type": "application/json", ...next.headers });
    res.end(JSON.stringify(next.json ?? {}));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const base = (id: string) => ({ id, object: "chat.completion.chunk", created: 1_700_000_000, model: "scripted" });

/** Builders for scripted answers in the shapes real OpenAI-compatible servers stream. */
export const reply = {
  /** A streamed text answer: one content delta per given token, then `stop`, then the usage chunk. */
  text(tokens: string[], usage: ScriptedUsage = { prompt_tokens: 10, completion_tokens: tokens.length }, options: { chunkDelayMs?: number } = {}): ScriptedResponse {
    const id = "chatcmpl-text";
    return {
      chunkDelayMs: options.chunkDelayMs,
      chunks: [
        { ...base(id), choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
        ...tokens.map((token) => ({ ...base(id), choices: [{ index: 0, delta: { content: token }, finish_reason: null }] })),
        { ...base(id), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        { ...base(id), choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } },
        "[DONE]",
      ],
    };
  },

  /** A streamed tool call whose arguments arrive in two deltas, then `tool_calls`, then usage. */
  toolCall(name: string, args: Record<string, unknown>, usage: ScriptedUsage = { prompt_tokens: 20, completion_tokens: 8 }, callId = "call_1"): ScriptedResponse {
    const id = "chatcmpl-tool";
    const argText = JSON.stringify(args);
    const cut = Math.floor(argText.length / 2);
    return {
      chunks: [
        { ...base(id), choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: argText.slice(0, cut) } }] }, finish_reason: null }] },
        { ...base(id), choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: argText.slice(cut) } }] }, finish_reason: null }] },
        { ...base(id), choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
        { ...base(id), choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } },
        "[DONE]",
      ],
    };
  },

  /** An OpenAI-shaped error answer. */
  error(status: number, headers: Record<string, string> = {}): ScriptedResponse {
    return { status, headers, json: { error: { message: `scripted ${status}`, type: status === 429 ? "rate_limit_exceeded" : "error", code: null } } };
  },

  /** A redirect elsewhere (egress must not follow it). */
  redirect(location: string): ScriptedResponse {
    return { status: 307, headers: { location }, json: {} };
  },
};
