/**
 * A small JSON predicate language over one changed entity (seed 000
 * "then apply entity predicates", e.g. `TASK` + `task.categoryId == gym`).
 *
 * Operators (each node is an object with exactly one key):
 *   `{eq:[path, value]}`  `{neq:[path, value]}`  `{in:[path, [values]]}`  `{exists: path}`
 *   `{and:[p, ...]}`  `{or:[p, ...]}`
 *
 * Paths are dotted and rooted at the entity type: the predicate is evaluated against
 * `predicateScope(type, record)` = `{[type]: record}`, so `task.categoryId` reads `categoryId` of a
 * changed task and is simply absent on a checklist. A batch that touches several kinds of entity
 * therefore cannot satisfy a task predicate through some other entity. Segments are
 * `[A-Za-z0-9_-]+`; an all-digit segment indexes an array. Only own properties are read.
 *
 * Values are JSON scalars (string, finite number, boolean) compared with `===`, no coercion.
 * A path is absent when it does not resolve or resolves to `null`. `exists` = present;
 * `eq`/`in` = present and equal to (one of) the value(s); `neq` = present and not equal — absent
 * never satisfies a comparison, so `neq` cannot match an entity of another type.
 *
 * Bounds (`PREDICATE_LIMITS`) are checked iteratively before the recursive schema runs, so a
 * hostile, deeply nested body is a validation error rather than a stack overflow.
 */
import { z } from "zod";

export type PredicateScalar = string | number | boolean;
export type Predicate =
  | { eq: [string, PredicateScalar] }
  | { neq: [string, PredicateScalar] }
  | { in: [string, PredicateScalar[]] }
  | { exists: string }
  | { and: Predicate[] }
  | { or: Predicate[] };

/** A leaf has depth 1; every `and`/`or` adds one. `maxNodes` counts every operator object. */
export const PREDICATE_LIMITS = {
  maxDepth: 8,
  maxNodes: 64,
  maxChildren: 16,
  maxInValues: 64,
  maxPathLength: 256,
  maxPathSegments: 8,
  maxStringLength: 256,
} as const;

const OPERATORS = ["eq", "neq", "in", "exists", "and", "or"] as const;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const INDEX = /^\d+$/;

function pathError(path: unknown): string | null {
  if (typeof path !== "string" || path.length === 0) return "path must be a non-empty string";
  if (path.length > PREDICATE_LIMITS.maxPathLength) return `path must be at most ${PREDICATE_LIMITS.maxPathLength} characters`;
  const segments = path.split(".");
  if (segments.length > PREDICATE_LIMITS.maxPathSegments) return `path must have at most ${PREDICATE_LIMITS.maxPathSegments} segments`;
  if (!segments.every((segment) => SEGMENT.test(segment))) return "path segments must match [A-Za-z0-9_-]+ and be separated by single dots";
  return null;
}

function scalarError(value: unknown): string | null {
  if (typeof value === "boolean") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : "value must be a finite number";
  if (typeof value === "string") {
    return value.length <= PREDICATE_LIMITS.maxStringLength ? null : `value must be at most ${PREDICATE_LIMITS.maxStringLength} characters`;
  }
  return "value must be a string, number or boolean";
}

function operandError(operator: (typeof OPERATORS)[number], operand: unknown): string | null {
  if (operator === "exists") return pathError(operand);
  if (!Array.isArray(operand) || operand.length !== 2) return `${operator} takes [path, ${operator === "in" ? "[values]" : "value"}]`;
  const [path, value] = operand as [unknown, unknown];
  const badPath = pathError(path);
  if (badPath) return badPath;
  if (operator !== "in") return scalarError(value);
  if (!Array.isArray(value) || value.length === 0 || value.length > PREDICATE_LIMITS.maxInValues) {
    return `in takes 1 to ${PREDICATE_LIMITS.maxInValues} values`;
  }
  for (const item of value) {
    const bad = scalarError(item);
    if (bad) return bad;
  }
  return null;
}

/** Where a predicate is invalid (zod-style path, e.g. `["and", 1, "exists"]`) and why. */
export interface PredicateIssue {
  path: Array<string | number>;
  message: string;
}

/** The first structural or bounds violation, or null. Iterative, and it stops early. */
export function predicateIssue(input: unknown): PredicateIssue | null {
  const stack: Array<{ node: unknown; path: Array<string | number>; depth: number }> = [{ node: input, path: [], depth: 1 }];
  const tooBig = { path: [], message: `a predicate may have at most ${PREDICATE_LIMITS.maxNodes} operators` };
  let nodes = 0;
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (++nodes > PREDICATE_LIMITS.maxNodes) return tooBig;
    if (depth > PREDICATE_LIMITS.maxDepth) return { path, message: `nesting is deeper than ${PREDICATE_LIMITS.maxDepth} levels` };
    const keys = typeof node === "object" && node !== null && !Array.isArray(node) ? Object.keys(node) : [];
    const operator = OPERATORS.find((candidate) => candidate === keys[0]);
    if (keys.length !== 1 || operator === undefined) return { path, message: `must be an object with exactly one of ${OPERATORS.join(", ")}` };
    const operand = (node as Record<string, unknown>)[operator];
    if (operator === "and" || operator === "or") {
      if (!Array.isArray(operand) || operand.length === 0 || operand.length > PREDICATE_LIMITS.maxChildren) {
        return { path: [...path, operator], message: `must list 1 to ${PREDICATE_LIMITS.maxChildren} predicates` };
      }
      if (nodes + stack.length + operand.length > PREDICATE_LIMITS.maxNodes) return tooBig;
      for (let i = operand.length - 1; i >= 0; i--) stack.push({ node: operand[i], path: [...path, operator, i], depth: depth + 1 });
      continue;
    }
    const bad = operandError(operator, operand);
    if (bad) return { path: [...path, operator], message: bad };
  }
  return null;
}

const pathSchema = z.string().min(1).max(PREDICATE_LIMITS.maxPathLength);
const scalarSchema = z.union([z.string().max(PREDICATE_LIMITS.maxStringLength), z.number(), z.boolean()]);
const predicateShape: z.ZodType<Predicate> = z.lazy(() => {
  const children = z.array(predicateShape).min(1).max(PREDICATE_LIMITS.maxChildren);
  return z.union([
    z.strictObject({ eq: z.tuple([pathSchema, scalarSchema]) }),
    z.strictObject({ neq: z.tuple([pathSchema, scalarSchema]) }),
    z.strictObject({ in: z.tuple([pathSchema, z.array(scalarSchema).min(1).max(PREDICATE_LIMITS.maxInValues)]) }),
    z.strictObject({ exists: pathSchema }),
    z.strictObject({ and: children }),
    z.strictObject({ or: children }),
  ]);
});

/**
 * Zod schema for a predicate. The preprocess step runs `predicateIssue` first (bounds, precise
 * messages); the recursive shape after it gives the TypeScript type and the JSON Schema.
 */
export const predicateSchema = z.preprocess((input, ctx) => {
  const issue = predicateIssue(input);
  if (issue) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message, input });
  return input;
}, predicateShape);

export type PredicateParse = { ok: true; predicate: Predicate } | { ok: false; code: "invalid_predicate"; message: string };

/** Validates untrusted input as a predicate; the message locates the fault, e.g. `predicate.and[1].exists: …`. */
export function parsePredicate(input: unknown): PredicateParse {
  const parsed = predicateSchema.safeParse(input);
  if (parsed.success) return { ok: true, predicate: parsed.data };
  const located = parsed.error.issues.map((issue) => {
    const where = issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
    return `predicate${where}: ${issue.message}`;
  });
  return { ok: false, code: "invalid_predicate", message: located.join("; ") };
}

/** The evaluation root for one entity: `{[entityType]: record}` (see the path convention above). */
export function predicateScope(entityType: string, record: unknown): Record<string, unknown> {
  return { [entityType]: record };
}

/** The value at a dotted path, or `undefined` when absent (unresolvable, inherited, or `null`). */
export function resolvePath(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const segment of path.split(".")) {
    if (typeof current !== "object" || current === null) return undefined;
    if (Array.isArray(current)) {
      if (!INDEX.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current === null ? undefined : current;
}

/** Evaluates a validated predicate against a scope; pure, short-circuiting, independent of key order. */
export function evaluatePredicate(predicate: Predicate, root: unknown): boolean {
  if ("and" in predicate) return predicate.and.every((child) => evaluatePredicate(child, root));
  if ("or" in predicate) return predicate.or.some((child) => evaluatePredicate(child, root));
  if ("exists" in predicate) return resolvePath(root, predicate.exists) !== undefined;
  if ("in" in predicate) {
    const value = resolvePath(root, predicate.in[0]);
    return value !== undefined && predicate.in[1].some((candidate) => candidate === value);
  }
  if ("eq" in predicate) {
    const value = resolvePath(root, predicate.eq[0]);
    return value !== undefined && value === predicate.eq[1];
  }
  const value = resolvePath(root, predicate.neq[0]);
  return value !== undefined && value !== predicate.neq[1];
}
