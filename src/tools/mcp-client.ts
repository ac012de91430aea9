/**
 * One session with a tenant's MCP server, through the official SDK's `Client` and
 * `StreamableHTTPClientTransport`, whose `fetch` is the one egress door: each request is checked by
 * the NEED_TO_KNOW guard on its exact bytes (src/core/egress/need-to-know-mcp.ts), then may reach only the
 * server's own host under this deployment's egress rule (redirects of a POST are never followed).
 * A session lives for one operation (connect → list or call → close): a Durable Object holding an
 * open SSE stream per server could never hibernate, so nothing is kept between operations.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { config } from "../config";
import type { DeploymentMode } from "../core/egress/deployment-mode";
import type { McpListedTool } from "../core/tools/mcp-tools";
import { guardMcpRequest } from "../core/egress/need-to-know-mcp";
import { sendThroughDoor, type EgressRecord } from "../egress";

export interface McpSessionOptions {
  url: string;
  /** Sent as `Authorization: Bearer <token>`; null: no auth. */
  bearer: string | null;
  mode: DeploymentMode;
  /** The input schema properties of a tool by its remote name (what tools/call may carry). */
  declaredFor: (remoteName: string) => readonly string[] | null;
  /** Where each request is recorded (the tenant's audit log). */
  record?: (entry: EgressRecord) => void;
  /** `notifications/tools/list_changed` arrived on one of this session's streams. */
  onToolsChanged?: () => void;
}

/** A refusal before (or instead of) sending: the guard or the egress rule said no. */
export class McpRefused extends Error {
  constructor(
    readonly code: "overshared_payload_blocked" | "network_denied",
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

export type McpCallOutput = { content: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean };

export class McpSession {
  /** Whether a tools/call request was handed to the network (its outcome may then be unknown). */
  callSent = false;
  private client: Client | null = null;

  constructor(private readonly options: McpSessionOptions) {}

  async listTools(): Promise<McpListedTool[]> {
    const client = await this.connect();
    const listed = await client.listTools(undefined, { timeout: config.mcp.requestTimeoutMs });
    return listed.tools.slice(0, config.mcp.maxToolsPerServer).map((tool) => ({
      name: tool.name,
      ...(tool.title !== undefined && { title: tool.title }),
      ...(tool.description !== undefined && { description: tool.description }),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      ...(tool.annotations && { annotations: tool.annotations }),
    }));
  }

  async callTool(remoteName: string, args: Record<string, unknown>): Promise<McpCallOutput> {
    const client = await this.connect();
    const result = await client.callTool({ name: remoteName, arguments: args }, { timeout: config.mcp.callTimeoutMs });
    return result as McpCallOutput;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = null;
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    const client = new Client({ name: "vigil", version: "1.0.0" });
    client.setNotificationHandler("notifications/tools/list_changed", () => this.options.onToolsChanged?.());
    const transport = new StreamableHTTPClientTransport(new URL(this.options.url), {
      fetch: (input, init) => this.send(String(input instanceof Request ? input.url : input), init),
      ...(this.options.bearer !== null && { requestInit: { headers: { authorization: `Bearer ${this.options.bearer}` } } }),
    });
    await client.connect(transport, { timeout: config.mcp.requestTimeoutMs });
    this.client = client;
    return client;
  }

  /** The transport's fetch: NEED_TO_KNOW on the body, then the egress door with the server's host alone. */
  private async send(url: string, init?: RequestInit): Promise<Response> {
    const body = typeof init?.body === "string" ? init.body : init?.body == null ? null : undefined;
    if (body === undefined) throw new McpRefused("overshared_payload_blocked", "the request body cannot be inspected before sending", false);
    let isCall = false;
    if (body !== null) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new McpRefused("overshared_payload_blocked", "the request body is not JSON, so its fields cannot be checked", false);
      }
      const verdict = guardMcpRequest(parsed, this.options.declaredFor);
      if (!verdict.ok) throw new McpRefused("overshared_payload_blocked", `the request carried fields outside the need-to-know allowlist: ${verdict.fields.slice(0, 10).join(", ")}`, false);
      isCall = (parsed as { method?: unknown }).method === "tools/call";
    }
    const host = safeHost(this.options.url);
    if (isCall) this.callSent = true;
    const outcome = await sendThroughDoor({
      url,
      init: { ...init, signal: init?.signal ?? AbortSignal.timeout(config.mcp.callTimeoutMs) },
      purpose: "mcp",
      allowedHosts: host ? [host] : [],
      mode: this.options.mode,
      ...(this.options.record && { record: this.options.record }),
    });
    if (!outcome.ok) {
      if (isCall && !outcome.sent) this.callSent = false;
      throw new McpRefused("network_denied", outcome.message, outcome.sent);
    }
    if (outcome.response.status >= 300 && outcome.response.status < 400) {
      await outcome.response.body?.cancel().catch(() => undefined);
      throw new McpRefused("network_denied", `the MCP server answered ${outcome.response.status} with a redirect; redirects of MCP requests are not followed`, true);
    }
    return outcome.response;
  }
}

/** Runs `work` on a fresh session and always closes it. */
export async function withMcpSession<T>(options: McpSessionOptions, work: (session: McpSession) => Promise<T>): Promise<T> {
  const session = new McpSession(options);
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

/** The refusal inside an SDK error (the transport wraps what its fetch threw), if there is one. */
export function refusalOf(error: unknown): McpRefused | null {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof McpRefused) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
