import { z } from "zod";
import type { ToolInvocation } from "./invocation";

/** The RPC boundary check of a `ToolInvocation` (the AgentDO and the saga are trusted, but a bad call is a bug to report, not to run). */
export const toolInvocationSchema = z.strictObject({
  operationId: z.string().regex(/^[0-9a-f]{64}$/, "operationId must be a lowercase hex SHA-256"),
  agentId: z.string().min(1).max(128),
  runKey: z.string().min(1).max(128),
  toolName: z.string().min(1).max(128),
  args: z.record(z.string(), z.unknown()),
  scope: z.strictObject({ allowedCategoryIds: z.array(z.string().min(1).max(128)).max(1_000) }),
  previewOnly: z.boolean(),
}) satisfies z.ZodType<ToolInvocation>;

/** `"path: message; …"` of a zod error, and the issues as JSON details. */
export function describeIssues(error: z.ZodError): { message: string; issues: Array<{ path: string; message: string }> } {
  const issues = error.issues.map((issue) => ({ path: issue.path.join(".") || "(root)", message: issue.message }));
  return { message: issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ").slice(0, 1_900), issues: issues.slice(0, 50) };
}
