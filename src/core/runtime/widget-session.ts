import { H } from "../ids/hash";

/**
 * Widget session isolation: a widget token's conversations live under a session namespace derived
 * from its `sub`, so one visitor can neither name nor read another's. Pure, shared by the server
 * (which enforces it) and the widget bundle (which computes the same id to filter its transcript).
 *
 * `w-<24 hex>` is the visitor's default session; `w-<24 hex>_<name>` are further named sessions of
 * the same visitor (hex never contains `_`, so no visitor's namespace is a prefix of another's).
 */
export function widgetSessionBase(subject: string): string {
  return `w-${H("widget-session", subject).slice(0, 24)}`;
}

/** The sessionId a widget token's conversation `name` uses (undefined or "default": the base session). */
export function widgetSessionId(subject: string, name?: string): string {
  const base = widgetSessionBase(subject);
  return name === undefined || name === "default" || name === base ? base : `${base}_${name}`;
}

/** True when `sessionId` belongs to the visitor whose session namespace is `base`. */
export function inWidgetSession(base: string, sessionId: string): boolean {
  return sessionId === base || sessionId.startsWith(`${base}_`);
}

/** True when `threadId` is an interactive thread of `agentId` inside the visitor's namespace `base`. */
export function inWidgetThread(base: string, agentIds: ReadonlyArray<string>, threadId: string | null | undefined): boolean {
  if (!threadId) return false;
  return agentIds.some((agentId) => {
    const prefix = `${agentId}:session:`;
    return threadId.startsWith(prefix) && inWidgetSession(base, threadId.slice(prefix.length));
  });
}
