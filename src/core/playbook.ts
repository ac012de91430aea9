/** builtin:playbook reply selection: pure, so the same wake always yields the same reply. */
export interface PlaybookRuleLike {
  when: { reason?: string | undefined; textPattern?: string | undefined };
  reply: string;
}

export interface PlaybookInput {
  reason: string;
  text: string;
}

export const DEFAULT_PLAYBOOK_FALLBACK = "I have nothing to do for this.";

/** First matching rule wins; an empty `when` matches everything. */
export function selectPlaybookReply(
  rules: ReadonlyArray<PlaybookRuleLike>,
  input: PlaybookInput,
  fallbackReply: string = DEFAULT_PLAYBOOK_FALLBACK,
): { ruleIndex: number | null; reply: string } {
  for (const [ruleIndex, rule] of rules.entries()) {
    if (rule.when.reason !== undefined && rule.when.reason !== input.reason) continue;
    if (rule.when.textPattern !== undefined && !new RegExp(rule.when.textPattern, "i").test(input.text)) continue;
    return { ruleIndex, reply: renderTemplate(rule.reply, input) };
  }
  return { ruleIndex: null, reply: renderTemplate(fallbackReply, input) };
}

/** `{{text}}` and `{{reason}}` placeholders; unknown placeholders are left as written. */
export function renderTemplate(template: string, input: PlaybookInput): string {
  return template.replace(/\{\{\s*(text|reason)\s*\}\}/g, (_, name: "text" | "reason") => input[name]);
}

/** Splits a reply into the word-sized chunks the builtin model streams. */
export function chunkWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Rough, deterministic token estimate (≈ 4 characters per token) for offline usage accounting. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
