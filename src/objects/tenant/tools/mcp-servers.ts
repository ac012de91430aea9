/**
 * The tenant's remote MCP servers: registration, the cached tool list per server, and
 * the listings agents are offered (`mcp_<server>_<tool>`, kind "mcp"). The list is fetched at
 * registration, again once it is older than `config.mcp.toolsTtlMs`, and sooner when the server
 * sends `notifications/tools/list_changed` on any stream of ours (the entry is marked stale; the
 * next listing refreshes it). Each refresh that changes the list bumps `toolsVersion`. A listing
 * that fails keeps the cached list and says why in `lastError`.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import { config } from "../../../config";
import type { DeploymentMode } from "../../../core/egress/deployment-mode";
import { checkUrlShape } from "../../../core/egress/egress";
import { canonicalJson } from "../../../core/ids/hash";
import { MCP_TOOL_CONTRACT, mcpCacheEntries, type McpCachedTool } from "../../../core/tools/mcp-tools";
import { declaredArguments } from "../../../core/egress/need-to-know-mcp";
import { failure, type Result } from "../../../core/runtime/result";
import * as schema from "../../../db/tenant-schema";
import { randomId } from "../../../ids";
import type { McpServer, RegisterMcpServerBody } from "../../../schema/admin/mcp-servers";
import type { ToolListing } from "../../../schema/admin/tools";
import { refusalOf, withMcpSession, type McpSessionOptions } from "../../../tools/mcp-client";
import { ANY_WAKE } from "../../../tools/registry";
import { nowIso } from "../../shared/sqlite";
import type { Audit, TenantDb } from "../types";

export type McpServerRow = typeof schema.mcpServers.$inferSelect;

export interface McpServersDeps {
  db: TenantDb;
  mode: DeploymentMode;
  audit: Audit;
  /** A live provider secret stored for `provider`, opened (auth tokens of servers). */
  openSecret(id: string, provider: string): Promise<{ ok: true; apiKey: string } | { ok: false; message: string }>;
  /** A server's tool list changed on a refresh: agents keep the tools in their snapshot. */
  toolsChanged(): void;
  /** Work that outlives the call that started it (ctx.waitUntil). */
  background(work: Promise<unknown>): void;
}

/** The provider id an MCP server's auth secret must be stored under. */
export const mcpSecretProvider = (serverName: string) => `mcp-${serverName}`;

export class McpServers {
  /** Listings in flight per server: concurrent callers share one tools/list instead of each sending one. */
  private readonly refreshing = new Map<string, Promise<void>>();

  constructor(private readonly deps: McpServersDeps) {}

  /** `keyedId`: the id a registration under an Idempotency-Key derives; a server already holding it is the answer. */
  async register(actor: string, body: RegisterMcpServerBody, keyedId?: string): Promise<Result<{ server: McpServer }>> {
    const url = checkUrlShape(body.url, this.deps.mode);
    if (!url.ok) return failure("validation_failed", `url: ${url.message}`);
    if (url.url.hash) return failure("validation_failed", "url: must not carry a #fragment");
    const secretRefId = body.auth === "none" ? null : body.auth.secretRefId;
    if (secretRefId !== null) {
      const opened = await this.deps.openSecret(secretRefId, mcpSecretProvider(body.name));
      if (!opened.ok) return failure("validation_failed", `auth.secretRefId: ${opened.message}`);
    }
    // Checked after the await: a retry of this registration, or a concurrent one, may have written meanwhile.
    const earlier = keyedId === undefined ? undefined : this.row(keyedId);
    if (earlier) return earlier.deletedAt ? failure("idempotency_conflict", `the MCP server this Idempotency-Key registered (${earlier.id}) was deleted since; use a new key`) : { ok: true, server: toRecord(earlier) };
    if (this.liveByName(body.name)) return failure("conflict", `an MCP server named ${body.name} already exists; delete it first`);
    if (this.live().length >= config.mcp.maxServersPerTenant) return failure("conflict", `a tenant may register at most ${config.mcp.maxServersPerTenant} MCP servers`);
    const row: McpServerRow = {
      id: keyedId ?? randomId("mcp_"),
      name: body.name,
      url: url.url.toString(),
      secretRefId,
      riskLevel: body.riskLevel,
      capability: body.capability,
      toolFilter: body.toolFilter ?? null,
      tools: [],
      toolsVersion: 0,
      toolsFetchedAt: 0,
      lastError: null,
      createdAt: nowIso(),
      deletedAt: null,
    };
    this.deps.db.insert(schema.mcpServers).values(row).run();
    this.deps.audit(actor, "mcp_server.registered", row.id, { name: row.name, host: url.url.host, riskLevel: row.riskLevel, capability: row.capability });
    await this.refresh(row.id);
    return { ok: true, server: toRecord(this.row(row.id)!) };
  }

  list(): McpServer[] {
    return this.live().map(toRecord);
  }

  /** Soft delete: its tools disappear from listings and calls to them answer unknown_tool. */
  delete(actor: string, id: string): Result<{ server: McpServer }> {
    const row = this.row(id);
    if (!row || row.deletedAt) return failure("not_found", "MCP server not found");
    this.deps.db.update(schema.mcpServers).set({ deletedAt: nowIso() }).where(eq(schema.mcpServers.id, id)).run();
    this.deps.audit(actor, "mcp_server.deleted", id, { name: row.name });
    return { ok: true, server: toRecord(row) };
  }

  /** The hosts of live servers (the tenant's egress allowlist view). */
  hosts(): string[] {
    return this.live().map((row) => new URL(row.url).host);
  }

  /** Every live server's tools as agents are offered them; stale or expired lists are fetched first. */
  async listings(): Promise<ToolListing[]> {
    await this.refreshExpired();
    return this.cachedListings();
  }

  /** The listings as cached, without fetching (what goes into agents' snapshots). */
  cachedListings(): ToolListing[] {
    return this.live().flatMap((row) => cachedTools(row).map((tool) => listingOf(row, tool)));
  }

  /** Fetches the lists of servers past their TTL (on listings and on the tenant's alarm). */
  async refreshExpired(): Promise<void> {
    const now = Date.now();
    for (const row of this.live()) {
      if (now - row.toolsFetchedAt > config.mcp.toolsTtlMs) await this.refresh(row.id);
    }
  }

  /** The server and cached tool an agent-facing name belongs to (null: no such live tool). */
  resolve(modelName: string): { server: McpServerRow; tool: McpCachedTool } | null {
    const serverName = modelName.slice("mcp_".length).split("_")[0] ?? "";
    const server = this.liveByName(serverName);
    const tool = server ? cachedTools(server).find((candidate) => candidate.name === modelName) : undefined;
    return server && tool ? { server, tool } : null;
  }

  /** A session's options for `server` (the bearer opened from its secret). */
  async sessionOptions(server: McpServerRow, record: McpSessionOptions["record"]): Promise<Result<{ options: McpSessionOptions }>> {
    let bearer: string | null = null;
    if (server.secretRefId) {
      const opened = await this.deps.openSecret(server.secretRefId, mcpSecretProvider(server.name));
      if (!opened.ok) return failure("secret_unavailable", opened.message);
      bearer = opened.apiKey;
    }
    const tools = cachedTools(server);
    return {
      ok: true,
      options: {
        url: server.url,
        bearer,
        mode: this.deps.mode,
        declaredFor: (remoteName) => {
          const tool = tools.find((candidate) => candidate.remoteName === remoteName);
          return tool ? declaredArguments(tool.inputSchema) : null;
        },
        ...(record && { record }),
        onToolsChanged: () => this.markStale(server.id),
      },
    };
  }

  /**
   * `notifications/tools/list_changed`: the list is fetched again at once, in the background. Agents read the tools
   * from their snapshot, so waiting for the next listing would leave them on the old list until the TTL.
   */
  markStale(id: string): void {
    this.deps.db.update(schema.mcpServers).set({ toolsFetchedAt: 0 }).where(eq(schema.mcpServers.id, id)).run();
    this.deps.background(this.refresh(id));
  }

  /** Fetches the server's tool list (once at a time per server); the version moves only when the list changed. */
  refresh(id: string): Promise<void> {
    const running = this.refreshing.get(id);
    if (running) return running;
    const refresh = this.fetchTools(id).finally(() => this.refreshing.delete(id));
    this.refreshing.set(id, refresh);
    return refresh;
  }

  private async fetchTools(id: string): Promise<void> {
    const row = this.row(id);
    if (!row || row.deletedAt) return;
    const session = await this.sessionOptions(row, (entry) => this.deps.audit("system", "egress.mcp", row.id, { server: row.name, operation: "tools/list", ...entry }));
    let update: Partial<McpServerRow>;
    let toolsChanged = false;
    if (!session.ok) update = { lastError: session.message };
    else {
      try {
        const listed = await withMcpSession({ ...session.options, onToolsChanged: () => undefined }, (mcp) => mcp.listTools());
        const { tools } = mcpCacheEntries(row.name, listed, row.toolFilter ?? null);
        const changed = canonicalJson(tools) !== canonicalJson(row.tools);
        update = { tools, toolsVersion: changed ? row.toolsVersion + 1 : row.toolsVersion, lastError: null };
        if (changed) toolsChanged = true;
      } catch (error) {
        update = { lastError: describeFailure(error) };
      }
    }
    this.deps.db.update(schema.mcpServers).set({ ...update, toolsFetchedAt: Date.now() }).where(eq(schema.mcpServers.id, id)).run();
    if (toolsChanged) this.deps.toolsChanged();
  }

  private live(): McpServerRow[] {
    return this.deps.db.select().from(schema.mcpServers).where(isNull(schema.mcpServers.deletedAt)).orderBy(asc(schema.mcpServers.createdAt), asc(schema.mcpServers.id)).all();
  }

  private liveByName(name: string): McpServerRow | undefined {
    return this.deps.db.select().from(schema.mcpServers).where(and(eq(schema.mcpServers.name, name), isNull(schema.mcpServers.deletedAt))).get();
  }

  private row(id: string): McpServerRow | undefined {
    return this.deps.db.select().from(schema.mcpServers).where(eq(schema.mcpServers.id, id)).get();
  }
}

/** Why a listing or call failed, in words that carry no URL path or token. */
export function describeFailure(error: unknown): string {
  const refused = refusalOf(error);
  if (refused) return `${refused.code}: ${refused.message}`.slice(0, 500);
  const name = (error as { name?: string } | null)?.name ?? "Error";
  const message = String((error as { message?: string } | null)?.message ?? error).split("\n")[0]!;
  return `${name}: ${message}`.replace(/https?:\/\/\S+/g, "<url>").slice(0, 500);
}

const cachedTools = (row: McpServerRow): McpCachedTool[] => row.tools as McpCachedTool[];

function listingOf(row: McpServerRow, tool: McpCachedTool): ToolListing {
  const effect = tool.mutating ? MCP_TOOL_CONTRACT.mutating : MCP_TOOL_CONTRACT.readOnly;
  return {
    kind: "mcp",
    name: tool.name,
    version: row.toolsVersion,
    description: tool.description,
    riskLevel: row.riskLevel as ToolListing["riskLevel"],
    supportsPreview: MCP_TOOL_CONTRACT.supportsPreview,
    capabilitiesRequired: [row.capability],
    allowedWakeReasons: [...ANY_WAKE],
    idempotencyStrategy: effect.idempotencyStrategy,
    scopeRules: [...MCP_TOOL_CONTRACT.scopeRules],
    sideEffects: { kind: effect.sideEffectKind, entityTypes: [], semanticKeys: [] },
    dataMinimizationPolicyRef: MCP_TOOL_CONTRACT.dataMinimizationPolicyRef,
    inputSchema: tool.inputSchema,
    outputSchema: {},
    id: row.id,
    url: row.url,
    createdAt: row.createdAt,
  };
}

function toRecord(row: McpServerRow): McpServer {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    auth: row.secretRefId ? { secretRefId: row.secretRefId } : "none",
    riskLevel: row.riskLevel as McpServer["riskLevel"],
    capability: row.capability as McpServer["capability"],
    toolFilter: row.toolFilter ?? null,
    tools: cachedTools(row).map((tool) => ({ name: tool.name, remoteName: tool.remoteName, description: tool.description, mutating: tool.mutating })),
    toolsVersion: row.toolsVersion,
    toolsFetchedAt: row.toolsFetchedAt > 0 ? new Date(row.toolsFetchedAt).toISOString() : null,
    lastError: row.lastError,
    createdAt: row.createdAt,
  };
}
