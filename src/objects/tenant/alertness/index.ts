// Alertness: subscriptions, inbound events and external triggers, the wake dispatcher, notifications.
// The feature's public face: code outside this folder imports the feature only through this file.
export { Alertness } from "./alertness";
export { type AlertnessBenchAnswer, AlertnessBenchOp, runAlertnessBenchOp } from "./bench-ops";
export { Dispatcher } from "./dispatcher";
export { type EventIngest, InboundEvents } from "./inbound-events";
export { NotificationLog } from "./notification-log";
export { SubscriptionStore } from "./subscriptions";
export { ExternalTriggers, type TriggerAdmission, type TriggerOutcome } from "./triggers";
export { type SourceCreation, type SourceIngest, tenantIdOfSourceId, WebhookSources } from "./webhook-sources";
