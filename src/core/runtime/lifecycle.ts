/** Agent lifecycle (seed 000): `created → active ⇄ dormant → destroyed`; destroyed is terminal. */
export const LIFECYCLES = ["created", "active", "dormant", "destroyed"] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

export type LifecycleCommand = "activate" | "pause" | "resume" | "destroy";

export type TransitionResult =
  | { ok: true; from: Lifecycle; to: Lifecycle; changed: boolean }
  | { ok: false; code: "agent_destroyed" | "invalid_transition"; from: Lifecycle; command: LifecycleCommand };

const TARGET: Record<LifecycleCommand, Lifecycle> = {
  activate: "active",
  pause: "dormant",
  resume: "active",
  destroy: "destroyed",
};

const ALLOWED: Record<Lifecycle, ReadonlyArray<Lifecycle>> = {
  created: ["active", "dormant", "destroyed"],
  active: ["dormant", "destroyed"],
  dormant: ["active", "destroyed"],
  destroyed: [],
};

/** Applies a command; repeating a command that already holds is a no-op, not an error. */
export function transition(from: Lifecycle, command: LifecycleCommand): TransitionResult {
  const to = TARGET[command];
  if (from === "destroyed") return { ok: false, code: "agent_destroyed", from, command };
  if (from === to) return { ok: true, from, to, changed: false };
  if (!ALLOWED[from].includes(to)) return { ok: false, code: "invalid_transition", from, command };
  return { ok: true, from, to, changed: true };
}

export type IngressVerdict =
  | { admit: true }
  | { admit: false; code: "agent_dormant" | "agent_destroyed" | "agent_not_started" };

/** Whether new work (messages, webhooks, wakes) may enter an agent in this lifecycle. */
export function admitIngress(lifecycle: Lifecycle): IngressVerdict {
  switch (lifecycle) {
    case "active":
      return { admit: true };
    case "dormant":
      return { admit: false, code: "agent_dormant" };
    case "created":
      return { admit: false, code: "agent_not_started" };
    case "destroyed":
      return { admit: false, code: "agent_destroyed" };
  }
}
