// Tools: the tool catalog, the tool executor (journal and HTTP tools), tenant HTTP tool registration.
// The feature's public face: code outside this folder imports the feature only through this file.
export { ToolCatalog } from "./catalog";
export { ToolExecutor } from "./executor";
export { McpCalls } from "./mcp-calls";
export { McpServers } from "./mcp-servers";
export { TenantTools, type ToolRegistration } from "./http-tools";
