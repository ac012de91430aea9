import type { Result } from "../../../core/runtime/result";
import type { WakeJob } from "../../../schema/agents/wake";
import type { EventForwarder } from "../events";
import type { AgentProfile, Watchdog } from "../lifecycle";
import type { WakeAdmission } from "./admission";
import type { Drainer } from "./drain";
import type { EnqueueOutcome, WakeInbox } from "./inbox";

export interface WakeDeliveryDeps {
  admission: Pick<WakeAdmission, "admit">;
  drain: Pick<Drainer, "startUnwatched">;
  /** `settled`: true once the tenant acknowledged every report part and event sent so far. */
  forwarder: Pick<EventForwarder, "settled">;
  inbox: Pick<WakeInbox, "isEmpty">;
  profile: Pick<AgentProfile, "get">;
  watchdog: Pick<Watchdog, "arm">;
  /** How long the answer waits for the report's acknowledgement (config.run.deliveryReportWaitMs). */
  reportWaitMs: number;
}

/**
 * `work`'s answer, or false when it has none after `ms` (its timer cleared either way). At 0 ms the timer fires on the
 * next macrotask: every microtask queued before it (a run that only computes) has run by then.
 */
async function within(work: Promise<boolean>, ms: number): Promise<boolean> {
  let cancel = () => {};
  const late = new Promise<false>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    cancel = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    cancel();
  }
}

/**
 * The wake consumer's delivery (issue 12 §7). The consumer waits for this answer and acknowledges its queue message only
 * then, and a failed or lost answer is redelivered (deduplicated by runKey, and the activation re-sends an unacknowledged
 * report): until the answer, the queue is the delivery's crash bound. So the run drains in the delivery's own stretch
 * (admission and run commit together, session 13), and when the run and its report are over before the answer, with
 * nothing else open, the watchdog is not armed at all (session 14): every woken agent used to be activated once more,
 * 30 s later, by a watchdog with nothing to do — a second activation per wake in production, and a schedule row and an
 * alarm write on the wake's own path. A run still under way at the next macrotask (it awaits I/O: a remote model, a
 * tool, a brake check that asks the tenant), a report not acknowledged (or not within `reportWaitMs`: a slow
 * tenant does not hold the consumer's batch), or anything left in the inbox keeps the watchdog, as every other drain
 * start does.
 */
export class WakeDelivery {
  constructor(private readonly deps: WakeDeliveryDeps) {}

  async deliver(job: WakeJob): Promise<Result<EnqueueOutcome>> {
    const admitted = this.deps.admission.admit(job);
    if (!admitted.ok) return admitted;
    const drained = this.deps.drain.startUnwatched().then(() => true);
    if (!(await this.settledWithin(drained))) this.deps.watchdog.arm();
    return admitted;
  }

  private async settledWithin(drained: Promise<boolean>): Promise<boolean> {
    return (await within(drained, 0)) && (await within(this.deps.forwarder.settled(), this.deps.reportWaitMs)) && this.nothingOpen();
  }

  /** Nothing else the watchdog resumes: no wake in the inbox (parked runs included), no child report to its parent. */
  private nothingOpen(): boolean {
    return this.deps.inbox.isEmpty() && !this.deps.profile.get()?.config.lineage;
  }
}
