import type { Env } from "../../../env";
import { failure, type Failure } from "../../../core/runtime/result";
import { benchSeamsEnabled, testSeamsEnabled } from "../../../core/runtime/seams";
import { meterStatements } from "./statement-meter";

/**
 * The Durable Objects' face of the seam guard (src/core/runtime/seams.ts). Test seams (fault injection, clocks, table dumps, loopback
 * HTTP) exist only with VIGIL_FAULTS=enabled, bench seams only with VIGIL_BENCH=enabled; otherwise
 * they answer not_found as if the method did not exist, so production can never reach them.
 */
export class Seams {
  constructor(private readonly env: Pick<Env, "VIGIL_FAULTS" | "VIGIL_BENCH">) {}

  get enabled(): boolean {
    return testSeamsEnabled(this.env);
  }

  /** null when test seams are on, else the not_found a caller returns. */
  refused(): Failure | null {
    return this.enabled ? null : failure("not_found", "no such method");
  }

  /** null when bench seams are on, else not_found. */
  benchRefused(): Failure | null {
    return benchSeamsEnabled(this.env) ? null : failure("not_found", "no such route");
  }

  /** Counts this object's SQL statements when bench seams are on (./statement-meter.ts); nothing otherwise. */
  meter(storage: DurableObjectStorage): void {
    if (benchSeamsEnabled(this.env)) meterStatements(storage.sql);
  }

  /** Runs a test seam's action when test seams are on; false (nothing done) otherwise. */
  run(action: () => void): boolean {
    if (this.enabled) action();
    return this.enabled;
  }

  /** A test clock: `nowMs` when test seams are on and it is given, else the real time. */
  clock(nowMs: number | undefined): number {
    return this.enabled && nowMs !== undefined ? nowMs : Date.now();
  }
}
