// Events: the agent's event log, its live streams, forwarding to the tenant and retention.
// The feature's public face: code outside this folder imports the feature only through this file.
export { EventLog } from "./event-log";
export { EventForwarder } from "./forwarder";
export { type AgentPruneOutcome, AgentRetention } from "./retention";
export { openEventStream } from "./streams";
export { hydrateEvents } from "./event-refs";
export { eventsOfRow } from "./stored-events";
