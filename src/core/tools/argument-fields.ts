/**
 * A tool's arguments as fields a person reads: each key with a label in words and its value, in the
 * arguments' own order. Decisions carry them (`payload.argsFields`) so that a visitor's widget, which
 * cannot read the tool registry, shows "New task title: Follow up: Run 5k" instead of raw JSON.
 */
export interface ArgumentField {
  key: string;
  label: string;
  value: unknown;
}

export const ARGUMENT_FIELDS_MAX = 30;

/** `newTaskTitle` → "New task title", `source_task_id` → "Source task id"; an empty key stays as it is. */
export function fieldLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .trim()
    .toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}

/** The top-level arguments as fields (nested values stay whole), at most `ARGUMENT_FIELDS_MAX` of them. */
export function argumentFields(args: Record<string, unknown>): ArgumentField[] {
  return Object.entries(args)
    .slice(0, ARGUMENT_FIELDS_MAX)
    .map(([key, value]) => ({ key, label: fieldLabel(key), value }));
}
