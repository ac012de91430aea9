// Events: the agent's event log, its live streams, forwarding to the tenant and retention.
// The feature's public face: other features, the wiring and the facade import it only through this file.
export { EventLog } from "./event-log";
export { EventForwarder } from "./forwarder";
export { type AgentPruneOutcome, AgentRetention } from "./retention";
export { openEventStream } from "./streams";
