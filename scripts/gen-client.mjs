#!/usr/bin/env node
// Generates the typed client's operations (src/client/api.generated.ts) from the OpenAPI document
// the worker serves at GET /v1/openapi.json — so every route has a client method and the client's
// types come from the routes' zod schemas, never written twice.
//
//   node scripts/gen-client.mjs            write the module if its content changed (npm run gen:client)
//   node scripts/gen-client.mjs --check    exit 1 if the committed module differs from a fresh generation
//   node scripts/gen-client.mjs --openapi  print the OpenAPI document (what the generator reads)
//
// The document is obtained offline: esbuild bundles src/http/routes.ts for Node, with the few
// `cloudflare:*` imports (reached only by Durable Object / Workflow classes, never while building the
// document) replaced by empty stand-ins, and the app builds the document its GET /v1/openapi.json
// serves (same registry, same header). No wrangler, no network, no snapshot to refresh.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const OUTPUT = join(ROOT, "src", "client", "api.generated.ts");
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];
/** Headers the client's RequestOptions / stream helpers already carry. */
const TRANSPORT_HEADERS = new Set(["idempotency-key", "last-event-id", "authorization"]);

/** The OpenAPI document exactly as `GET /v1/openapi.json` answers it. */
export async function loadOpenApiDocument() {
  const { build } = await import("esbuild");
  const cloudflareStandIns = {
    name: "cloudflare-stand-ins",
    setup(builder) {
      builder.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "cloudflare-stand-in" }));
      builder.onLoad({ filter: /.*/, namespace: "cloudflare-stand-in" }, () => ({
        contents: "export class DurableObject {} export class WorkflowEntrypoint {} export class WorkerEntrypoint {} export class RpcTarget {} export const env = {};",
        loader: "js",
      }));
    },
  };
  const result = await build({
    stdin: { contents: 'export { buildApp, OPENAPI_DOCUMENT } from "./src/http/routes";', resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
    plugins: [cloudflareStandIns],
  });
  const module = await import(`data:text/javascript;base64,${Buffer.from(result.outputFiles[0].text).toString("base64")}`);
  // What the doc31 route answers, minus the middleware in front of it; through JSON like the response body.
  return JSON.parse(JSON.stringify(module.buildApp().getOpenAPI31Document(module.OPENAPI_DOCUMENT)));
}

// --- JSON Schema → TypeScript ----------------------------------------------------------------

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function refName(ref) {
  const name = ref.replace(/^#\/components\/schemas\//, "");
  return IDENT.test(name) ? name : name.replace(/[^A-Za-z0-9_$]/g, "_");
}

function doc(text, pad) {
  if (!text) return "";
  const lines = String(text).replace(/\*\//g, "*\\/").split("\n");
  if (lines.length === 1) return `${pad}/** ${lines[0]} */\n`;
  return `${pad}/**\n${lines.map((line) => `${pad} * ${line}`.trimEnd()).join("\n")}\n${pad} */\n`;
}

// --- shapes shared by several schemas ------------------------------------------------------------

/** Inline object shapes (by their non-null JSON) that more than one schema property declares → the type name they get. */
let sharedShapes = new Map();
/** The schema whose own declaration is being written (it is spelled out, not named). */
let declaring = null;

/** An inline object (or union of objects) schema without its `null`: the key two properties of the same shape share. */
function shapeKey(schema) {
  if (!schema || schema.$ref) return null;
  const members = schema.anyOf ?? schema.oneOf;
  if (members) return members.every((member) => member.type === "object" && member.properties) ? JSON.stringify(schema) : null;
  if (!schema.properties) return null;
  const types = Array.isArray(schema.type) ? schema.type.filter((type) => type !== "null") : [schema.type];
  return types.length === 1 && types[0] === "object" ? JSON.stringify({ ...schema, type: "object" }) : null;
}

/**
 * zod inlines a schema that is not registered under a name wherever it is used (an agent's capabilities in
 * CreateAgent and PatchAgent, a webhook source's tokenMapping, …): each such shape used by two or more
 * properties is declared once, named after the property (`Capabilities`) or, on a clash, owner + property.
 */
function findSharedShapes(schemas) {
  const uses = new Map();
  for (const [owner, schema] of schemas) {
    for (const [property, propertySchema] of Object.entries(schema.properties ?? {})) {
      // A list's items count as the property's shape in the singular (`tokens` → `Token`).
      const candidates = [{ property, schema: propertySchema }, { property: property.replace(/s$/, ""), schema: propertySchema.items }];
      for (const candidate of candidates) {
        const key = shapeKey(candidate.schema);
        if (key) uses.set(key, [...(uses.get(key) ?? []), { owner, ...candidate }]);
      }
    }
  }
  const taken = new Set(schemas.map(([name]) => refName(`#/components/schemas/${name}`)));
  const shared = new Map();
  // A shape that is also a named schema (zod inlines a registered schema inside a union or a list) is that name.
  for (const [name, schema] of schemas) {
    const key = shapeKey(schema);
    if (key && uses.has(key) && !shared.has(key)) shared.set(key, { name: refName(`#/components/schemas/${name}`), schema, named: true });
  }
  for (const [key, [first, ...others]] of uses) {
    if (others.length === 0 || shared.has(key)) continue;
    const pascal = (text) => text.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_, __, char) => char.toUpperCase());
    const name = [pascal(first.property), pascal(first.owner) + pascal(first.property)].find((candidate) => !taken.has(candidate));
    if (!name) continue;
    taken.add(name);
    shared.set(key, { name, schema: first.schema.properties ? { ...first.schema, type: "object" } : first.schema });
  }
  return shared;
}

/** A TypeScript type for a JSON Schema (the subset zod-to-openapi emits). */
export function tsType(schema, indent = "") {
  if (schema === undefined || schema === true || schema === null) return "unknown";
  if (schema === false) return "never";
  if (schema.$ref) return refName(schema.$ref);
  const nullable = Array.isArray(schema.type) && schema.type.includes("null");
  const withNull = (text) => (nullable && text !== "unknown" && !/(^|\| )null$/.test(text) ? `${text} | null` : text);
  const shared = sharedShapes.get(shapeKey(schema));
  if (shared && schema !== declaring) return withNull(shared.name);
  if (schema.const !== undefined) return withNull(JSON.stringify(schema.const));
  if (Array.isArray(schema.enum)) return withNull(schema.enum.map((value) => JSON.stringify(value)).join(" | "));
  if (schema.anyOf || schema.oneOf) return withNull(union((schema.anyOf ?? schema.oneOf).map((part) => tsType(part, indent))));
  if (schema.allOf) return withNull(schema.allOf.map((part) => wrap(tsType(part, indent))).join(" & "));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ["object"] : [];
  if (types.length === 0) return "unknown";
  return union(types.map((type) => single(type, schema, indent)));
}

function union(parts) {
  const unique = [...new Set(parts)];
  return unique.includes("unknown") ? "unknown" : unique.map(wrap).join(" | ");
}

function wrap(text) {
  return /^[^{]*[|&]/.test(text) && !text.startsWith("Array<") ? `(${text})` : text;
}

function single(type, schema, indent) {
  switch (type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `Array<${tsType(schema.items, indent)}>`;
    case "object":
      return objectType(schema, indent);
    default:
      return "unknown";
  }
}

function objectType(schema, indent) {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    if (extra === false) return "Record<string, never>";
    return `Record<string, ${extra && extra !== true ? tsType(extra, indent) : "unknown"}>`;
  }
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = properties.map(([key, property]) => {
    const name = IDENT.test(key) ? key : JSON.stringify(key);
    return `${doc(property.description, inner)}${inner}${name}${required.has(key) ? "" : "?"}: ${tsType(property, inner)};`;
  });
  if (extra && extra !== true && Object.keys(extra).length > 0) lines.push(`${inner}[key: string]: unknown;`);
  return `{\n${lines.join("\n")}\n${indent}}`;
}

// --- operations ------------------------------------------------------------------------------

/** A method name for an operation without an operationId: `post /v1/agents/{id}/sessions/{sid}/close` → `postAgentsSessionsClose`. */
export function derivedName(method, path) {
  const words = path
    .split("/")
    .filter((segment) => segment && segment !== "v1" && !segment.startsWith("{"))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return method + words.map((word) => word[0].toUpperCase() + word.slice(1)).join("");
}

/** `{id}` after `/agents` reads `agentId`; other path parameters keep their names. */
function paramName(path, name) {
  if (name !== "id") return IDENT.test(name) ? name : name.replace(/[^A-Za-z0-9_$]/g, "_");
  const before = path.split("/{id}")[0].split("/").pop() ?? "";
  const camel = before.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, char) => char.toUpperCase());
  const singular = camel.replace(/ies$/, "y").replace(/s$/, "");
  return singular ? `${singular}Id` : "id";
}

function resolveRef(document, schema) {
  return schema?.$ref ? document.components?.schemas?.[schema.$ref.replace(/^#\/components\/schemas\//, "")] : schema;
}

export function operations(document) {
  const list = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const query = parameters.filter((parameter) => parameter.in === "query");
      const headers = parameters.filter((parameter) => parameter.in === "header" && !TRANSPORT_HEADERS.has(parameter.name.toLowerCase()));
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      const success = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      const jsonResults = success.map(([, response]) => response.content?.["application/json"]?.schema).filter(Boolean);
      const emptyResult = success.some(([, response]) => !response.content);
      list.push({ method: method.toUpperCase(), path, op, name: op.operationId ?? derivedName(method, path), derived: !op.operationId, pathParams, query, headers, bodySchema, jsonResults, emptyResult });
    }
  }
  const seen = new Map();
  for (const entry of list) {
    const other = seen.get(entry.name);
    if (other) throw new Error(`two operations are named ${entry.name}: ${other.method} ${other.path} and ${entry.method} ${entry.path} (give one an operationId)`);
    seen.set(entry.name, entry);
  }
  return list;
}

/** A type on one line when it carries no doc comments (most query and result objects): short, table-like declarations. */
function compact(text) {
  return text.includes("/**") ? text : text.replace(/\n\s*/g, " ").replace(/; \}/g, " }");
}

/** `{data: Array<T>, nextCursor}` is `Page<T>`. */
function pageOf(text) {
  const match = /^\{ data: Array<([A-Za-z0-9_$]+)>; nextCursor: string \| null \}$/.exec(text);
  return match ? `Page<${match[1]}>` : text;
}

/** One operation: its method signature (for the typed interface) and its row in the OPERATIONS table. */
function renderOperation(document, entry) {
  const { method, path, op, name, pathParams, query, headers, bodySchema, jsonResults } = entry;
  const args = pathParams.map((param) => paramName(path, param));
  const signature = args.map((arg) => `${arg}: string`);
  const row = { method: JSON.stringify(method), path: JSON.stringify(path) };
  if (bodySchema) {
    const resolved = resolveRef(document, bodySchema);
    const optional = !entry.op.requestBody.required || (resolved?.type === "object" && !(resolved.required ?? []).length);
    const argName = args.includes("body") ? "requestBody" : "body";
    signature.push(`${argName}${optional ? "?" : ""}: ${compact(tsType(bodySchema, "  "))}`);
    row.body = JSON.stringify(optional ? "optional" : "required");
  }
  if (query.length > 0) {
    const required = query.some((parameter) => parameter.required);
    const type = objectType({ properties: Object.fromEntries(query.map((p) => [p.name, { ...p.schema, description: p.description ?? p.schema?.description }])), required: query.filter((p) => p.required).map((p) => p.name) }, "  ");
    signature.push(`query${required ? "" : "?"}: ${compact(type)}`);
    row.query = "true";
  }
  signature.push("options?: RequestOptions");
  const raw = jsonResults.length === 0 && !entry.emptyResult;
  if (raw) row.raw = "true";
  const result = raw ? "Response" : jsonResults.length ? pageOf(compact(union(jsonResults.map((schema) => tsType(schema, "  "))))) : "void";
  const notes = op.description && op.description !== op.summary ? [op.description] : [];
  if (headers.length) notes.push(`Headers (pass in \`options.headers\`): ${headers.map((h) => `\`${h.name}\`${h.description ? ` — ${h.description}` : ""}`).join("; ")}.`);
  if (raw) notes.push(`Answers ${success(op).join(", ")}: the response is returned unread.`);
  // The common case, a summary and the route, is one doc line; longer notes keep their paragraphs.
  const route = `\`${method} ${path}\`${entry.derived ? " (no operationId: name derived from the path)" : ""}`;
  const text = notes.length ? [op.summary, ...notes, route].filter(Boolean).join("\n\n") : `${op.summary ? `${op.summary} — ` : ""}${route}`;
  return {
    // A one-line doc stands on the signature's line: the interface reads as a table too.
    method: `${text.includes("\n") ? `${doc(text, "  ")}  ` : `  /** ${text.replace(/\*\//g, "*\\/")} */ `}${name}(${signature.join(", ")}): Promise<${result}>;`,
    row: `${name}: { ${Object.entries(row).map(([key, value]) => `${key}: ${value}`).join(", ")} },`,
    resource: path.replace(/(\/\{[^}]+\})+$/, ""),
  };
}

function success(op) {
  return Object.entries(op.responses ?? {})
    .filter(([status]) => /^2\d\d$/.test(status))
    .flatMap(([status, response]) => Object.keys(response.content ?? {}).map((type) => `${status} ${type}`));
}

/** The generated module's full text. */
export function renderClientModule(document) {
  const schemas = Object.entries(document.components?.schemas ?? {});
  sharedShapes = findSharedShapes(schemas);
  const ops = operations(document);
  const out = [];
  out.push("// Generated by scripts/gen-client.mjs from GET /v1/openapi.json — do not edit. Regenerate: npm run gen:client");
  out.push("/* eslint-disable */");
  out.push('import type { RequestOptions } from "./types.js";');
  out.push("");
  out.push("// --- schemas (components.schemas) -------------------------------------------------------------");
  for (const [name, schema] of schemas) {
    out.push("");
    declaring = sharedShapes.get(shapeKey(schema))?.named ? schema : null;
    out.push(`${doc(schema.description, "")}export type ${refName(`#/components/schemas/${name}`)} = ${compact(tsType(schema, ""))};`);
  }
  out.push("");
  out.push("// --- inline shapes more than one schema uses (declared once) -----------------------------------");
  for (const { name, schema } of [...sharedShapes.values()].filter((shape) => !shape.named)) {
    out.push("");
    declaring = schema;
    out.push(`export type ${name} = ${compact(tsType(schema, ""))};`);
  }
  declaring = null;
  out.push("");
  out.push("// --- operations --------------------------------------------------------------------------------");
  out.push("");
  out.push("/** A page of a list: its rows in the list's order and the cursor of the next page (null on the last). */");
  out.push("export type Page<T> = { data: Array<T>; nextCursor: string | null };");
  out.push("");
  const rendered = ops.map((entry) => renderOperation(document, entry));
  out.push("/** Every operation of the API as a typed method; each one runs through `VigilOperations.operation` with its OPERATIONS row. */");
  out.push("export interface OperationMethods {");
  for (const { method } of rendered) out.push(method);
  out.push("}");
  out.push("");
  out.push("/** Each method's operation: the generic request reads it, the route-coverage test compares it with the live document. */");
  out.push("export const OPERATIONS = {");
  // One line per resource (a collection and its items): a CRUD family is one row of the table.
  for (let i = 0; i < rendered.length; ) {
    let j = i + 1;
    while (j < rendered.length && rendered[j].resource === rendered[i].resource) j += 1;
    out.push(`  ${rendered.slice(i, j).map((entry) => entry.row).join(" ")}`);
    i = j;
  }
  out.push("} as const;");
  out.push("");
  out.push("export type OperationName = keyof typeof OPERATIONS;");
  out.push("");
  out.push("/** An OPERATIONS row: path parameters fill `{…}` in order, then come the body and the query, if any, then the options. */");
  out.push('type OperationRow = { method: string; path: string; body?: "optional" | "required"; query?: true; raw?: true };');
  out.push("");
  out.push("/** Every operation as a method (OperationMethods); `VigilClient` supplies the transport and the hand-written helpers. */");
  out.push("export abstract class VigilOperations {");
  out.push("  /** One request answered with JSON (or nothing); a non-2xx answer throws `VigilApiError`. */");
  out.push("  protected abstract request<T>(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<T>;");
  out.push("  /** One request whose 2xx response the caller reads (HTML, scripts, metrics, event streams); a non-2xx answer throws `VigilApiError`. */");
  out.push("  protected abstract requestRaw(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<Response>;");
  out.push("");
  out.push("  // One method per OPERATIONS row, on the prototype. Pure-marked: a bundle that never uses the client (the widget) drops it all.");
  out.push("  private static readonly methods = /* @__PURE__ */ installOperationMethods(this);");
  out.push("");
  out.push("  /** The one request function behind every operation method: the arguments are read in the order the row gives. */");
  out.push("  protected operation(name: OperationName, args: unknown[]): Promise<unknown> {");
  out.push("    const row: OperationRow = OPERATIONS[name];");
  out.push("    let next = 0;");
  out.push("    const path = row.path.replace(/\\{[^}]+\\}/g, () => encodeURIComponent(String(args[next++])));");
  out.push('    const body = row.body ? (args[next++] ?? (row.body === "optional" ? {} : undefined)) : undefined;');
  out.push('    const query = row.query ? queryString((args[next++] ?? {}) as object) : "";');
  out.push("    const options = args[next] as RequestOptions | undefined;");
  out.push("    return row.raw ? this.requestRaw(row.method, path + query, body, options) : this.request(row.method, path + query, body, options);");
  out.push("  }");
  out.push("}");
  out.push("");
  out.push("export interface VigilOperations extends OperationMethods {}");
  out.push("");
  out.push("/** Defines each operation's method like a class method: on the prototype, not enumerable. */");
  out.push("function installOperationMethods(target: typeof VigilOperations): OperationName[] {");
  out.push("  const names = Object.keys(OPERATIONS) as OperationName[];");
  out.push("  for (const name of names) {");
  out.push("    Object.defineProperty(target.prototype, name, {");
  out.push("      value(this: VigilOperations, ...args: unknown[]) {");
  out.push("        return this.operation(name, args);");
  out.push("      },");
  out.push("      writable: true,");
  out.push("      configurable: true,");
  out.push("    });");
  out.push("  }");
  out.push("  return names;");
  out.push("}");
  out.push("");
  out.push("function queryString(query: object): string {");
  out.push("  const params = new URLSearchParams();");
  out.push("  for (const [key, value] of Object.entries(query)) {");
  out.push("    if (value === undefined || value === null) continue;");
  out.push("    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));");
  out.push("  }");
  out.push("  const text = params.toString();");
  out.push('  return text ? `?${text}` : "";');
  out.push("}");
  out.push("");
  // The shapes belong to this document: a later tsType() call (or another document) starts without them.
  sharedShapes = new Map();
  return { text: out.join("\n"), derived: ops.filter((entry) => entry.derived) };
}

async function main() {
  const document = await loadOpenApiDocument();
  if (process.argv.includes("--openapi")) {
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return;
  }
  const { text, derived } = renderClientModule(document);
  const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, "utf8") : null;
  const where = relative(process.cwd(), OUTPUT) || OUTPUT;
  if (process.argv.includes("--check")) {
    if (current !== text) {
      console.error(`${where} is stale: run npm run gen:client and commit the result`);
      process.exit(1);
    }
    return;
  }
  for (const entry of derived) console.log(`note: ${entry.method} ${entry.path} has no operationId; its method is ${entry.name} (name it in src/http/operation-ids.ts)`);
  if (current === text) return;
  const temporary = `${OUTPUT}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, OUTPUT);
  console.log(`wrote ${where}`);
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("gen-client.mjs")) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
