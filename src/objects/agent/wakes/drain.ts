import { inBackground, logFailure } from "../../shared/background";
import { InjectedCrash } from "../../shared/seams";

export interface DrainDeps {
  /** The run loop's single-flight drain of the wake inbox. */
  kick(): Promise<void>;
  waitUntil(work: Promise<unknown>): void;
  armWatchdog(): void;
}

/** Starts draining the wake inbox off the request path, with the watchdog armed to resume it after a restart. */
export class Drainer {
  constructor(private readonly deps: DrainDeps) {}

  start(): void {
    // A builtin-model run is all microtasks, and would otherwise hold back the caller's 202 until it had finished.
    inBackground(this.deps.waitUntil, () => this.deps.kick(), failed);
    this.deps.armWatchdog();
  }

  /**
   * Drains right behind the caller, in its own stretch of work, for a streaming turn, whose caller waits for the run's
   * frames anyway: the admission and the run's writes then commit together, one commit less per turn (an
   * fsync locally, replication in production); a run that awaits I/O (a remote model) lets the answer go back at its
   * first await, as before.
   */
  startInline(): void {
    this.deps.waitUntil(this.drainInline());
    this.deps.armWatchdog();
  }

  /**
   * `startInline` for the wake consumer's delivery (./delivery.ts), without the watchdog: the delivery arms it only if
   * the run or its report is still open when it answers. Resolves when this drain is over (never rejects).
   */
  startUnwatched(): Promise<void> {
    const drained = this.drainInline();
    this.deps.waitUntil(drained);
    return drained;
  }

  private drainInline(): Promise<void> {
    return Promise.resolve()
      .then(() => this.deps.kick())
      .catch(failed);
  }
}

function failed(error: unknown): void {
  // An injected crash leaves the run mid-flight on purpose; the watchdog or the next call resumes it.
  if (!(error instanceof InjectedCrash)) logFailure("drain failed", error);
}
