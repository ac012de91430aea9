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
    inBackground(this.deps.waitUntil, () => this.deps.kick(), (error) => {
      // An injected crash leaves the run mid-flight on purpose; the watchdog or the next call resumes it.
      if (!(error instanceof InjectedCrash)) logFailure("drain failed", error);
    });
    this.deps.armWatchdog();
  }
}
