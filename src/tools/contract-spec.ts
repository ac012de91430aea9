/**
 * Parity between the tool registry and the checked-in contract spec (`tools/contract-spec.yaml`,
 * seed 000 §4.1.1): each registry declaration projects to the entry the spec must hold for it, and
 * `contractSpecDiff` lists every difference, both ways. Arrays in an entry are sets: order is ignored.
 */
import { canonicalJson } from "../core/ids/hash";
import { compareStrings } from "../core/wakes/tokens";
import { inputJsonSchema } from "./registry/descriptors";
import type { ToolDefinition } from "./registry/types";

export interface ContractSpecEntry {
  version: number;
  capabilitiesRequired: string[];
  allowedWakeReasons: string[];
  inputSchemaRef: string;
  outputSchemaRef: string;
  /** Top-level argument names; `optional` includes those with defaults. */
  inputFields: { required: string[]; optional: string[] };
  idempotencyStrategy: string;
  scopeRules: string[];
  sideEffects: { kind: string; entityTypes: string[]; semanticKeys: string[] };
  riskLevel: string;
  supportsPreview: boolean;
  dataMinimizationPolicyRef: string;
}

/** `registry:<name>@<version>#input|output` — resolved by `GET /v1/tools` descriptors. */
export function schemaRef(name: string, version: number, io: "input" | "output"): string {
  return `registry:${name}@${version}#${io}`;
}

/** The entry the spec must hold for `tool`. */
export function contractSpecEntry(tool: ToolDefinition): ContractSpecEntry {
  const schema = inputJsonSchema(tool);
  const properties = Object.keys((schema["properties"] as Record<string, unknown> | undefined) ?? {});
  const required = new Set((schema["required"] as string[] | undefined) ?? []);
  return {
    version: tool.version,
    capabilitiesRequired: [...tool.capabilitiesRequired],
    allowedWakeReasons: [...tool.allowedWakeReasons],
    inputSchemaRef: schemaRef(tool.name, tool.version, "input"),
    outputSchemaRef: schemaRef(tool.name, tool.version, "output"),
    inputFields: { required: properties.filter((key) => required.has(key)), optional: properties.filter((key) => !required.has(key)) },
    idempotencyStrategy: tool.idempotencyStrategy,
    scopeRules: [...tool.scopeRules],
    sideEffects: { kind: tool.sideEffects.kind, entityTypes: [...tool.sideEffects.entityTypes], semanticKeys: [...tool.sideEffects.semanticKeys] },
    riskLevel: tool.riskLevel,
    supportsPreview: tool.supportsPreview,
    dataMinimizationPolicyRef: tool.dataMinimizationPolicyRef,
  };
}

/** Every array sorted (they are sets), at any depth, for order-insensitive comparison. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize).sort((a, b) => compareStrings(canonicalJson(a), canonicalJson(b)));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, normalize(member)]));
  return value;
}

const show = (value: unknown) => (value === undefined ? "(absent)" : canonicalJson(value));

/** Differences between the registry and a parsed spec's `tools` map, one line each; empty when equal. */
export function contractSpecDiff(tools: readonly ToolDefinition[], specTools: Readonly<Record<string, unknown>>): string[] {
  const issues: string[] = [];
  const declared = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (declared.has(tool.name)) issues.push(`${tool.name}: declared more than once in the registry`);
    declared.set(tool.name, tool);
  }
  for (const name of Object.keys(specTools)) {
    if (!declared.has(name)) issues.push(`${name}: in the spec but not in the registry`);
  }
  for (const [name, tool] of declared) {
    if (!Object.hasOwn(specTools, name)) {
      issues.push(`${name}: in the registry but not in the spec`);
      continue;
    }
    const expected = normalize(contractSpecEntry(tool)) as Record<string, unknown>;
    const actual = (normalize(specTools[name]) ?? {}) as Record<string, unknown>;
    for (const field of [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort(compareStrings)) {
      if (show(expected[field]) !== show(actual[field])) {
        issues.push(`${name}.${field}: registry ${show(expected[field])} ≠ spec ${show(actual[field])}`);
      }
    }
  }
  return issues;
}
