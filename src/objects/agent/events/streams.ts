import { inWidgetThread } from "../../../core/runtime/widget-session";
import type { AgentProfile } from "../lifecycle";
import type { WakeInbox } from "../wakes";
import type { EventLog } from "./event-log";

/**
 * SSE bodies of the agent's event log: replay after `after`, then live. `widgetNamespace` (a widget
 * token's session namespace) narrows it to events of runs on that visitor's threads; agent-wide
 * events without a run are never shown to it.
 */
export function openEventStream(events: EventLog, profile: AgentProfile, inbox: WakeInbox, after: number, widgetNamespace?: string): ReadableStream<Uint8Array> {
  if (widgetNamespace === undefined) return events.subscribe(after);
  const agentIds = [profile.get()!.id];
  // A run's thread never changes: remember the verdict per runKey (only once the run exists).
  const verdicts = new Map<string, boolean>();
  const visible = ({ runKey }: { runKey: string | null }): boolean => {
    if (runKey === null) return false;
    const known = verdicts.get(runKey);
    if (known !== undefined) return known;
    const run = inbox.getRun(runKey);
    if (!run) return false;
    const verdict = inWidgetThread(widgetNamespace, agentIds, run.threadId);
    verdicts.set(runKey, verdict);
    return verdict;
  };
  return events.subscribe(after, { visible });
}
