/**
 * JSON-safe views of tool declarations: what `GET /v1/tools` answers and what the model gateway
 * hands a provider as function definitions. Schemas are JSON Schema draft 2020-12 from
 * `z.toJSONSchema` — the input schema as callers send it (defaults optional), the output as returned.
 */
import { z } from "zod";
import type { WakeReason } from "../../core/ids/run-keys";
import type { RiskLevel } from "../../core/tools/tool-envelopes";
import type { Capability, IdempotencyStrategy, ScopeRule, SideEffectKind, ToolDefinition } from "./types";

export type JsonSchema = { [key: string]: unknown };

export interface ToolDescriptor {
  name: string;
  version: number;
  description: string;
  riskLevel: RiskLevel;
  supportsPreview: boolean;
  capabilitiesRequired: Capability[];
  allowedWakeReasons: WakeReason[];
  idempotencyStrategy: IdempotencyStrategy;
  scopeRules: ScopeRule[];
  sideEffects: { kind: SideEffectKind; entityTypes: string[]; semanticKeys: string[] };
  dataMinimizationPolicyRef: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

const asJson = (schema: unknown): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

/** The tool's arguments as JSON Schema (fields with defaults are optional). */
export function inputJsonSchema(tool: ToolDefinition): JsonSchema {
  return asJson(z.toJSONSchema(tool.inputSchema, { target: "draft-2020-12", io: "input" }));
}

/** The tool's result as JSON Schema. */
export function outputJsonSchema(tool: ToolDefinition): JsonSchema {
  return asJson(z.toJSONSchema(tool.outputSchema, { target: "draft-2020-12", io: "output" }));
}

/** One declaration as plain JSON (fresh arrays; no zod objects). */
export function toolDescriptor(tool: ToolDefinition): ToolDescriptor {
  return {
    name: tool.name,
    version: tool.version,
    description: tool.description,
    riskLevel: tool.riskLevel,
    supportsPreview: tool.supportsPreview,
    capabilitiesRequired: [...tool.capabilitiesRequired],
    allowedWakeReasons: [...tool.allowedWakeReasons],
    idempotencyStrategy: tool.idempotencyStrategy,
    scopeRules: [...tool.scopeRules],
    sideEffects: { kind: tool.sideEffects.kind, entityTypes: [...tool.sideEffects.entityTypes], semanticKeys: [...tool.sideEffects.semanticKeys] },
    dataMinimizationPolicyRef: tool.dataMinimizationPolicyRef,
    inputSchema: inputJsonSchema(tool),
    outputSchema: outputJsonSchema(tool),
  };
}
