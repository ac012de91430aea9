/**
 * One in-flight call per key: a saga step retried while its first call is still running shares that call
 * instead of sending the request again (the object is single-threaded, but awaits interleave).
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.running.get(key);
    if (running) return running;
    const call = work().finally(() => this.running.delete(key));
    this.running.set(key, call);
    return call;
  }
}
