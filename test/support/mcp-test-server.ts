/**
 * A real MCP server on 127.0.0.1 (the official SDK over streamable HTTP, one stateless server per
 * request) for tests: `lookup` (read-only), `add_note` (mutating: counts its effects, and can be told
 * to hold its answer until the test releases it, so the caller can be killed between send and
 * record), and `hidden` (for toolFilter). `addTool()` registers one more tool; the next tools/call
 * answer then carries `notifications/tools/list_changed` on its stream.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

export interface RecordedCall {
  tool: string;
  args: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export class McpTestServer {
  /** Effects of `add_note`, one per call the server actually executed. */
  readonly notes: string[] = [];
  readonly calls: RecordedCall[] = [];
  readonly methods: string[] = [];
  private extraTools: string[] = [];
  private listChangedPending = false;
  private holding: { until: Promise<void>; release: () => void } | null = null;
  private heldSignal: (() => void) | null = null;
  private readonly sockets = new Set<Socket>();

  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<McpTestServer> {
    let self: McpTestServer | null = null;
    const server = createServer((req, res) => {
      void self!.handle(req, res);
    });
    self = new McpTestServer(server);
    server.on("connection", (socket) => {
      self!.sockets.add(socket);
      socket.on("close", () => self!.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  /** An endpoint that answers every request with a redirect to another host. */
  get movedUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/moved`;
  }

  /** Effects and calls recorded so far, for one tool. */
  callsOf(tool: string): RecordedCall[] {
    return this.calls.filter((call) => call.tool === tool);
  }

  /** The next `add_note` call is executed (and counted), then its answer waits for `release()`; resolves once it is held. */
  holdNextAnswer(): Promise<void> {
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    this.holding = { until, release };
    return new Promise<void>((resolve) => (this.heldSignal = resolve));
  }

  release(): void {
    this.holding?.release();
    this.holding = null;
  }

  /** Adds a tool; the next tools/call answer announces it with notifications/tools/list_changed. */
  addTool(name: string): void {
    this.extraTools.push(name);
    this.listChangedPending = true;
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private build(): McpServer {
    const server = new McpServer({ name: "vigil-test-mcp", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool(
      "lookup",
      { description: "Look a word up", inputSchema: z.object({ word: z.string() }), annotations: { readOnlyHint: true } },
      async ({ word }, ctx) => {
        this.calls.push({ tool: "lookup", args: { word }, headers: {} });
        void ctx;
        return { content: [{ type: "text", text: `${word}: a word` }], structuredContent: { word, meaning: "a word" } };
      },
    );
    server.registerTool(
      "add_note",
      { description: "Add a note (a side effect the server counts)", inputSchema: z.object({ text: z.string() }), annotations: { readOnlyHint: false, destructiveHint: false } },
      async ({ text }, ctx) => {
        this.calls.push({ tool: "add_note", args: { text }, headers: {} });
        this.notes.push(text);
        if (this.listChangedPending) {
          this.listChangedPending = false;
          await ctx.mcpReq.notify({ method: "notifications/tools/list_changed" });
        }
        if (this.holding) {
          this.heldSignal?.();
          await this.holding.until;
        }
        return { content: [{ type: "text", text: `noted (${this.notes.length})` }], structuredContent: { count: this.notes.length } };
      },
    );
    server.registerTool("hidden", { description: "Filtered out by toolFilter", inputSchema: z.object({}) }, async () => ({ content: [{ type: "text", text: "hidden" }] }));
    for (const name of this.extraTools) {
      server.registerTool(name, { description: `extra tool ${name}`, inputSchema: z.object({ x: z.number() }), annotations: { readOnlyHint: true } }, async ({ x }) => ({ content: [{ type: "text", text: String(x) }] }));
    }
    return server;
  }

  private async handle(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse): Promise<void> {
    try {
      // A redirect to another host (same server, named differently): the egress door must refuse to follow it.
      if (req.url?.startsWith("/moved")) {
        res.writeHead(307, { location: `http://localhost:${(this.server.address() as AddressInfo).port}/mcp` }).end();
        return;
      }
      const server = this.build();
      const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
      if (body && typeof body.method === "string") this.methods.push(body.method);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  }
}
