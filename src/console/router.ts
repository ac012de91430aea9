/** The console's places, addressed by the URL fragment (`#/agents/ag_…/runs/…`); the credential never is. */
export type Route =
  | { page: "agents" }
  | { page: "agent"; agentId: string; tab: AgentTab }
  | { page: "run"; agentId: string; runKey: string }
  | { page: "decisions" }
  | { page: "events" }
  | { page: "usage" };

export type AgentTab = "timeline" | "conversations" | "memory" | "wakes";
const TABS: AgentTab[] = ["timeline", "conversations", "memory", "wakes"];

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [first, id, second, third] = parts;
  if (first === "agents" && id) {
    if (second === "runs" && third) return { page: "run", agentId: id, runKey: third };
    const tab = TABS.find((candidate) => candidate === second) ?? "timeline";
    return { page: "agent", agentId: id, tab };
  }
  if (first === "decisions" || first === "events" || first === "usage") return { page: first };
  return { page: "agents" };
}

export function href(route: Route): string {
  const seg = encodeURIComponent;
  switch (route.page) {
    case "agent":
      return `#/agents/${seg(route.agentId)}/${route.tab}`;
    case "run":
      return `#/agents/${seg(route.agentId)}/runs/${seg(route.runKey)}`;
    default:
      return `#/${route.page}`;
  }
}
