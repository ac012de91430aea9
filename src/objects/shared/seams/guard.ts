import type { Env } from "../../../env";
import { failure, type Failure } from "../../../core/runtime/result";
import { benchSeamsEnabled, seamOn, type TestSeam } from "../../../core/runtime/seams";
import { meterStatements } from "./statement-meter";

/**
 * The Durable Objects' face of the seam guard (src/core/runtime/seams.ts). Each test seam exists only when VIGIL_FAULTS
 * names it (or is `enabled`), bench seams only with VIGIL_BENCH=enabled; otherwise they answer not_found as if the
 * method did not exist, so production can never reach them.
 */
export class Seams {
  constructor(private readonly env: Pick<Env, "VIGIL_FAULTS" | "VIGIL_BENCH">) {}

  /** True when `seam` is on in this deployment. */
  on(seam: TestSeam): boolean {
    return seamOn(this.env, seam);
  }

  /** null when `seam` is on, else the not_found a caller returns. */
  refused(seam: TestSeam): Failure | null {
    return this.on(seam) ? null : failure("not_found", "no such method");
  }

  /** null when bench seams are on, else not_found. */
  benchRefused(): Failure | null {
    return benchSeamsEnabled(this.env) ? null : failure("not_found", "no such route");
  }

  /** Counts this object's SQL statements and billed rows when bench seams are on (./statement-meter.ts); nothing otherwise. */
  meter(storage: DurableObjectStorage): void {
    if (benchSeamsEnabled(this.env)) meterStatements(storage.sql);
  }

  /** Runs a test seam's action when `seam` is on; false (nothing done) otherwise. */
  run(seam: TestSeam, action: () => void): boolean {
    const on = this.on(seam);
    if (on) action();
    return on;
  }

  /** A test clock: `nowMs` when the `clocks` seam is on and it is given, else the real time. */
  clock(nowMs: number | undefined): number {
    return this.on("clocks") && nowMs !== undefined ? nowMs : Date.now();
  }
}
