/**
 * MCP tools as Vigil offers them. Pure: the naming of a remote tool for the model,
 * which tools count as mutating, and the cache entry a listing becomes.
 *
 * - Name: `mcp_<server>_<tool>`, the tool's name lowercased with every character outside
 *   `[a-z0-9_]` turned into `_` (model function names allow no `.`, `/` or `-` everywhere). A name
 *   that is longer than 64 characters, or that two remote tools would share, is not offered.
 * - Mutating unless the server annotates the tool `readOnlyHint: true` (the MCP defaults are
 *   readOnlyHint false and destructiveHint true): a tool that does not say it only reads is
 *   treated as one that writes, so it runs as a saga and passes the approval gate.
 */

export const MCP_MODEL_NAME_MAX = 64;

/** How MCP tools are declared to agents; `registeredTools.mcp` in tools/contract-spec.yaml must say the same. */
export const MCP_TOOL_CONTRACT = {
  namePattern: "^mcp_[a-z][a-z0-9]{0,23}_[a-z0-9_]+$",
  supportsPreview: false,
  scopeRules: ["none"],
  dataMinimizationPolicyRef: "dm.mcp_tool.args.v1",
  mutating: { sideEffectKind: "external_mcp", idempotencyStrategy: "operation_id", execution: "saga_at_most_once" },
  readOnly: { sideEffectKind: "none", idempotencyStrategy: "read_only", execution: "direct" },
} as const;

/** One remote tool as cached per server (what tools/list answered, plus the name agents call). */
export interface McpCachedTool {
  name: string;
  remoteName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  mutating: boolean;
}

/** What tools/list answers for one tool (the fields Vigil reads). */
export interface McpListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean | undefined; destructiveHint?: boolean | undefined; title?: string | undefined } | undefined;
}

export function mcpModelName(serverName: string, remoteName: string): string {
  return `mcp_${serverName}_${remoteName.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;
}

/** The tools a server offers, in its order: filtered, renamed, name clashes and overlong names left out. */
export function mcpCacheEntries(serverName: string, listed: readonly McpListedTool[], toolFilter: readonly string[] | null): { tools: McpCachedTool[]; skipped: string[] } {
  const counts = new Map<string, number>();
  const wanted = listed.filter((tool) => toolFilter === null || toolFilter.includes(tool.name));
  for (const tool of wanted) counts.set(mcpModelName(serverName, tool.name), (counts.get(mcpModelName(serverName, tool.name)) ?? 0) + 1);
  const tools: McpCachedTool[] = [];
  const skipped: string[] = [];
  for (const tool of wanted) {
    const name = mcpModelName(serverName, tool.name);
    if (name.length > MCP_MODEL_NAME_MAX || counts.get(name)! > 1) {
      skipped.push(tool.name);
      continue;
    }
    const { $schema: _dialect, ...inputSchema } = tool.inputSchema;
    tools.push({
      name,
      remoteName: tool.name,
      description: (tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name).slice(0, 1_000),
      inputSchema: { ...inputSchema, type: "object" },
      mutating: tool.annotations?.readOnlyHint !== true,
    });
  }
  return { tools, skipped };
}
