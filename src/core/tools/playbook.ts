import { tenantPatternMatches } from "./tenant-pattern";

/** builtin:playbook: pure rule selection, templating and `/tool` parsing, so a wake always yields the same behaviour. */
export interface PlaybookToolCall {
  name: string;
  args: Record<string, unknown>;
}

export interface PlaybookRuleLike {
  when: { reason?: string | undefined; textPattern?: string | undefined; token?: string | undefined };
  reply?: string | undefined;
  tools?: ReadonlyArray<PlaybookToolCall> | undefined;
}

export interface PlaybookInput {
  reason: string;
  text: string;
  /** tokenKeys of the wake's notification batch, for `when.token`. */
  tokenKeys?: ReadonlyArray<string>;
}

export const DEFAULT_PLAYBOOK_FALLBACK = "I have nothing to do for this.";

/** First matching rule wins; an empty `when` matches everything. */
export function selectPlaybookRule<R extends PlaybookRuleLike>(rules: ReadonlyArray<R>, input: PlaybookInput): { ruleIndex: number; rule: R } | null {
  for (const [ruleIndex, rule] of rules.entries()) {
    if (rule.when.reason !== undefined && rule.when.reason !== input.reason) continue;
    if (rule.when.textPattern !== undefined && !tenantPatternMatches(rule.when.textPattern, input.text)) continue;
    if (rule.when.token !== undefined && !(input.tokenKeys ?? []).includes(rule.when.token)) continue;
    return { ruleIndex, rule };
  }
  return null;
}

/** The reply for a wake: the matching rule's reply, else the fallback. */
export function selectPlaybookReply(
  rules: ReadonlyArray<PlaybookRuleLike>,
  input: PlaybookInput,
  fallbackReply: string = DEFAULT_PLAYBOOK_FALLBACK,
  context: Record<string, unknown> = {},
): { ruleIndex: number | null; reply: string } {
  const selected = selectPlaybookRule(rules, input);
  const template = selected?.rule.reply ?? fallbackReply;
  return { ruleIndex: selected?.ruleIndex ?? null, reply: renderTemplate(template, { ...context, text: input.text, reason: input.reason }) };
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z0-9_.]+)\s*\}\}$/;

/** `{{path}}` placeholders resolved against `context` (dotted, numeric segments index arrays); unknown ones stay as written. */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (whole, path: string) => {
    const value = resolvePath(context, path);
    if (value === undefined) return whole;
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** Renders every string in a tool's argument template; a string that is exactly one placeholder keeps the value's type. */
export function renderArgs(template: unknown, context: Record<string, unknown>): unknown {
  if (typeof template === "string") {
    const whole = WHOLE_PLACEHOLDER.exec(template);
    if (whole) {
      const value = resolvePath(context, whole[1]!);
      return value === undefined ? template : value;
    }
    return renderTemplate(template, context);
  }
  if (Array.isArray(template)) return template.map((item) => renderArgs(item, context));
  if (template && typeof template === "object") {
    return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, renderArgs(value, context)]));
  }
  return template;
}

function resolvePath(root: unknown, path: string): unknown {
  let current = root;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

const TOOL_LINE = /^\/tool\s+([a-z][a-z0-9_]{0,63})(?:\s+(\{.*\}))?\s*$/;

/**
 * `/tool <name> <json>` lines of an operator's message. Only the run loop decides whose text this
 * is: external evidence never reaches here. Lines whose JSON does not parse to an object are ignored.
 */
export function parseToolLines(text: string): PlaybookToolCall[] {
  const calls: PlaybookToolCall[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = TOOL_LINE.exec(line.trim());
    if (!match) continue;
    try {
      const args = match[2] ? (JSON.parse(match[2]) as unknown) : {};
      if (args && typeof args === "object" && !Array.isArray(args)) calls.push({ name: match[1]!, args: args as Record<string, unknown> });
    } catch {
      // not a tool line after all
    }
  }
  return calls;
}

/** Splits a reply into the word-sized chunks the builtin model streams. */
export function chunkWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Rough, deterministic token estimate (≈ 4 characters per token) for offline usage accounting. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
