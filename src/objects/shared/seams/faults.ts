/**
 * Test-only fault injection (ARCHITECTURE "Testing"): a named point throws while armed. Arming is
 * refused unless the deployment turns on the `faults` seam (VIGIL_FAULTS), so production can never reach it.
 */
export class FaultSeam {
  private readonly armed = new Map<string, number>();

  constructor(
    private readonly enabled: boolean,
    private readonly makeError: (point: string) => Error,
  ) {}

  arm(point: string, times = 1): boolean {
    if (!this.enabled) return false;
    this.armed.set(point, times);
    return true;
  }

  /** Hands the armed points under `prefix` to another executor (a saga) and disarms them here. */
  take(prefix: string): string[] {
    const taken = [...this.armed.keys()].filter((point) => point.startsWith(prefix));
    for (const point of taken) this.armed.delete(point);
    return taken;
  }

  /** Like `hit`, but answers whether the point was armed instead of throwing (a fault that drops work silently). */
  consume(point: string): boolean {
    try {
      this.hit(point);
      return false;
    } catch {
      return true;
    }
  }

  hit(point: string): void {
    const remaining = this.armed.get(point);
    if (!remaining) return;
    if (remaining <= 1) this.armed.delete(point);
    else this.armed.set(point, remaining - 1);
    throw this.makeError(point);
  }
}

/** Thrown by the fault seam: it simulates a process crash, so no terminal status may be written. */
export class InjectedCrash extends Error {}
