import { z } from "zod";
import { WAKE_REASONS } from "../core/run-keys";
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
});
export type WakeJob = z.infer<typeof WakeJob>;
