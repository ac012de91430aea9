// Tools: the tool catalog, the tool executor (journal and HTTP tools), tenant HTTP tool registration.
// The feature's public face: other features, the wiring and the facade import it only through this file.
export { ToolCatalog } from "./catalog";
export { ToolExecutor } from "./executor";
export { TenantTools, type ToolRegistration } from "./http-tools";
