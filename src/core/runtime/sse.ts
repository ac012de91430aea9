/** One Server-Sent Events frame. Events without `id` (live-only deltas) do not move Last-Event-ID. */
export function sseFrame(frame: { id?: number | undefined; event: string; data: unknown }): string {
  let out = "";
  if (frame.id !== undefined) out += `id: ${frame.id}\n`;
  out += `event: ${frame.event}\n`;
  // JSON.stringify never emits raw newlines, so one data line is always enough.
  out += `data: ${JSON.stringify(frame.data)}\n\n`;
  return out;
}

export const SSE_HEARTBEAT = ": heartbeat\n\n";

/** Parses `Last-Event-ID` / `?after=`: a non-negative integer sequence, else undefined. */
export function parseEventCursor(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (!/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
