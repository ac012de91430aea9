/** One tool call as the TenantDO executes it (phase 1 of a saga, or a direct read). */
export interface ToolInvocation {
  operationId: string;
  agentId: string;
  runKey: string;
  /** A journal tool from the registry, or `http:<tenantToolName>`. */
  toolName: string;
  /** The model's arguments; validated again by the executor against the tool's input schema. */
  args: Record<string, unknown>;
  scope: { allowedCategoryIds: string[] };
  previewOnly: boolean;
}
