// Channels: the tenant event log and feed, outbound webhooks and their endpoints, metrics.
// The feature's public face: code outside this folder imports the feature only through this file.
export { OutboundChannels } from "./channels";
export { EventFeed } from "./event-feed";
export { TenantMetrics } from "./metrics";
export { type AttemptReport, OutboundDeliveries, type PreparedAttempt } from "./outbound-webhooks";
export { type ForwardedAgentEvent, TenantEventLog } from "./tenant-event-log";
export { type EndpointCreation, WebhookEndpoints } from "./webhook-endpoints";
export { reportedPartKey, RunReports } from "./run-reports";
