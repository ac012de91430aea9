import { z } from "zod";
import { WAKE_REASONS } from "../../core/ids/run-keys";
import { AUTHORITIES } from "./messages";

/** A wake as persisted in an agent's inbox and carried on WAKE_QUEUE. */
export const WakeJob = z.object({
  tenantId: z.string(),
  agentId: z.string(),
  reason: z.enum(WAKE_REASONS),
  runKey: z.string().regex(/^[0-9a-f]{64}$/),
  threadId: z.string(),
  authority: z.enum(AUTHORITIES),
  logicalChangeKey: z.string().optional(),
  input: z.record(z.string(), z.unknown()).default({}),
  /**
   * The tenant snapshot version in force when the tenant queued this wake, and when (epoch ms): the agent counts it
   * as a confirmation of the snapshot it holds, so a fan-out's first runs need no `agentSnapshot` call each
   * (issue 12 §7). A version newer than the one held is fetched before the run, as after a run report.
   */
  snapshot: z.object({ version: z.number().int().nonnegative(), at: z.number().int().nonnegative() }).optional(),
});
export type WakeJob = z.infer<typeof WakeJob>;
