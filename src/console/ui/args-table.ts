/** A tool's arguments (or any record) as a two-column table a person can read: field label → value. */
import { h } from "./dom";
import { label, plain } from "./format";

/** `fields` (server-provided labels, when the decision carries them) win over labels derived from the keys. */
export function argsTable(args: unknown, fields?: unknown): HTMLElement {
  const rows = labelledRows(args, fields);
  if (rows.length === 0) return h("p", { class: "muted" }, "No arguments.");
  return h(
    "table",
    { class: "args" },
    h("tbody", {}, ...rows.map(([name, value]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, value)))),
  );
}

export function labelledRows(args: unknown, fields?: unknown): Array<[string, string]> {
  if (Array.isArray(fields)) {
    const rows = fields
      .filter(
        (f): f is { label: string; value: unknown } =>
          typeof f === "object" && f !== null && typeof (f as { label?: unknown }).label === "string",
      )
      .map((f): [string, string] => [f.label, plain(f.value, 500)]);
    if (rows.length) return rows;
  }
  if (typeof args !== "object" || args === null || Array.isArray(args))
    return args === undefined ? [] : [["Value", plain(args, 500)]];
  return Object.entries(args as Record<string, unknown>).map(([key, value]): [string, string] => [
    label(key),
    plain(value, 500),
  ]);
}
