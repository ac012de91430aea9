/**
 * The built-in tool registry (seed 000 §4.1): every tool declared once, in one file per
 * group. `tools/contract-spec.yaml` mirrors it; `test/unit/contract-spec.test.ts` keeps them equal.
 */
import { agentTools } from "./agent";
import { checklistTools } from "./checklists";
import { dayPlanTools } from "./day-plans";
import { delegationTools } from "./delegation";
import { toolDescriptor, type ToolDescriptor } from "./descriptors";
import { memoryTools } from "./memory";
import { ratingTools } from "./ratings";
import { readTools } from "./reads";
import { taskTools } from "./tasks";
import { timeTools } from "./time";
import type { ToolDefinition } from "./types";

/** Every built-in declaration, in catalog order. */
export const builtinTools = [
  ...readTools,
  ...taskTools,
  ...checklistTools,
  ...timeTools,
  ...dayPlanTools,
  ...ratingTools,
  ...memoryTools,
  ...agentTools,
  ...delegationTools,
] as const;

type BuiltinTool = (typeof builtinTools)[number];
export type ToolName = BuiltinTool["name"];

/** Name → declaration, each with its precise schema types (`toolRegistry.create_task.inputSchema`). */
export type ToolRegistry = { readonly [T in BuiltinTool as T["name"]]: T };

/** The frozen registry. */
export const toolRegistry: ToolRegistry = Object.freeze(Object.fromEntries(builtinTools.map((tool) => [tool.name, tool])) as ToolRegistry);

/** Tool names in catalog order. */
export const TOOL_NAMES: readonly ToolName[] = Object.freeze(builtinTools.map((tool) => tool.name));

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(toolRegistry, name);
}

/** The declaration of `name`, or undefined (never an inherited property such as `constructor`). */
export function getTool(name: string): ToolDefinition | undefined {
  return isToolName(name) ? (toolRegistry[name] as ToolDefinition) : undefined;
}

let descriptors: readonly ToolDescriptor[] | undefined;

/**
 * JSON-safe descriptors of every tool, in catalog order. Computed once; each call returns a fresh
 * copy, because JSON Schema validators (e.g. @cfworker/json-schema) annotate the schemas they load.
 */
export function listToolDescriptors(): ToolDescriptor[] {
  descriptors ??= builtinTools.map((tool) => toolDescriptor(tool as ToolDefinition));
  return structuredClone(descriptors) as ToolDescriptor[];
}

export { inputJsonSchema, outputJsonSchema, toolDescriptor, type JsonSchema, type ToolDescriptor } from "./descriptors";
export {
  ANY_WAKE,
  CAPABILITIES,
  IDEMPOTENCY_STRATEGIES,
  NO_EXTERNAL_WAKE,
  SCOPE_RULES,
  SIDE_EFFECT_KINDS,
  type Capability,
  type IdempotencyStrategy,
  type ScopeRule,
  type SideEffectKind,
  type SideEffects,
  type ToolDefinition,
} from "./types";
